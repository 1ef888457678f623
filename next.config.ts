import type { NextConfig } from "next";
import { SECURITY_HEADERS } from "./server/http/security-headers";

const nextConfig: NextConfig = {
  // PGlite ships WASM and data files that must be loaded from node_modules at runtime.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "@electric-sql/pglite-pgvector",
    "@electric-sql/pglite-socket",
    "pglite-prisma-adapter",
    // Media importers: tesseract starts worker threads from its own files, and pdf.js ships a prebuilt bundle.
    "tesseract.js",
    "unpdf",
    "mammoth",
  ],
  typedRoutes: false,
  // No X-Powered-By: it names the framework to every caller, and npm start's direct /api/v1 path
  // (scripts/app-server.ts) answers with the same headers as Next.
  poweredByHeader: false,
  // No 308 for a trailing slash: the Mem0 clients (and many HTTP clients) call `/v1/memories/`, and
  // Python's httpx, as mem0ai configures it, does not follow redirects. proxy.ts answers /compat/*
  // and /api/v1/* with and without the slash and keeps the old 308 for every other path.
  skipTrailingSlashRedirect: true,
  // On every page and API response (server/http/security-headers.ts). See server/http/csrf.ts for cross-site writes.
  async headers() {
    return [{ source: "/:path*", headers: [...SECURITY_HEADERS] }];
  },
  // /docs reads docs/*.md at request time (server/services/docs.ts): the standalone output (the
  // Docker image) carries the folder with those routes.
  outputFileTracingIncludes: { "/docs": ["./docs/**/*"], "/docs/**/*": ["./docs/**/*"] },
  // The Docker image (SYNTHEX_STANDALONE=1) runs `node server.js` from a self-contained
  // `.next/standalone`; `npm start` keeps `next start`, which warns on a standalone build.
  ...(process.env.SYNTHEX_STANDALONE === "1" ? { output: "standalone" as const } : {}),
  // A second build beside the usual one (the two-server test), without touching `.next`.
  ...(process.env.SYNTHEX_DIST_DIR ? { distDir: process.env.SYNTHEX_DIST_DIR } : {}),
};

export default nextConfig;
