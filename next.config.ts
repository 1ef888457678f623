import type { NextConfig } from "next";

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
  // On every page and API response: no framing by other sites (clickjacking), no MIME sniffing,
  // no full URLs in Referer to other origins. See server/http/csrf.ts for cross-site writes.
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Frame-Options", value: "DENY" },
          { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
        ],
      },
    ];
  },
  // The Docker image (SYNTHEX_STANDALONE=1) runs `node server.js` from a self-contained
  // `.next/standalone`; `npm start` keeps `next start`, which warns on a standalone build.
  ...(process.env.SYNTHEX_STANDALONE === "1" ? { output: "standalone" as const } : {}),
  // A second build beside the usual one (the two-server test), without touching `.next`.
  ...(process.env.SYNTHEX_DIST_DIR ? { distDir: process.env.SYNTHEX_DIST_DIR } : {}),
};

export default nextConfig;
