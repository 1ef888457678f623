/**
 * One app server process of `npm start` (scripts/start.ts runs one per worker): Next as a custom
 * server (https://nextjs.org/docs/app/guides/custom-server), with the agent API answered before
 * Next's router sees it.
 *
 * A request to `/api/v1/…` that carries an API key (`Authorization`) goes straight to the handler
 * the Next route `app/api/v1/[...path]/route.ts` calls (server/api/rest-route.ts: Host and
 * cross-site guard, body limit, key, permissions, rate limits, idempotency, the query log), through
 * @hono/node-server's Node↔Fetch adapter, with the headers next.config.ts adds to every response
 * (server/http/security-headers.ts) and Next's compression middleware. That skips Next's
 * routing, its web-stream and AsyncLocalStorage layers: about half of a REST search's app CPU.
 * Everything else goes to Next unchanged: pages, tRPC, MCP, next-auth, the upload route (streams
 * multipart bodies), openapi.json, session-signed API calls (next-auth reads the cookies through
 * Next's request context), other methods (HEAD, OPTIONS) and paths with a trailing slash (Next's
 * route answers them without a redirect: next.config.ts `skipTrailingSlashRedirect`, proxy.ts). The peer-address stamp and the live-request count are Node-level hooks on every HTTP
 * server of the process (server/http/request-hook.ts), so they see both paths.
 *
 * A request whose Host is not a plain `name[:port]` goes to Next too, so a malformed one gets
 * Next's answer. The path leaves no trace on an answer (both give the same headers); on a normal
 * stop the process logs how many requests each path answered:
 * `[synthex] app server <pid> stopping: <n> /api/v1 requests answered directly, <m> requests through Next,
 * <k> queries sent as named statements` (prepared-statements.ts).
 *
 * SYNTHEX_DIRECT_API=off: scripts/start.ts runs plain `next start` instead (every request through Next).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { getRequestListener } from "@hono/node-server";
import next from "next";
import { restRouteHandler } from "../server/api/rest-route";
import { installPeerStamp } from "../server/http/client-address";
import { SECURITY_HEADERS } from "../server/http/security-headers";
import { countLiveHttpRequests } from "../server/services/live-requests";
import { flushQueryLogOnStop } from "../server/services/query-log";
import { namedStatementsSent } from "../server/store/prepared-statements";

type NodeMiddleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
const requireHere = createRequire(import.meta.url);
/**
 * The compression Next's own server applies to every answer (next/dist/server/lib/router-server.js:
 * the `compression` middleware it ships, and its release of the gzip stream when a client goes away),
 * so a direct answer is compressed exactly when and as Next's would be (server/api/rest.ts marks the
 * small ones no-transform).
 */
const nextCompression = requireHere("next/dist/compiled/compression") as () => NodeMiddleware;
const { releaseCompressionStream } = requireHere("next/dist/server/lib/release-compression-stream") as { releaseCompressionStream: (res: ServerResponse) => void };
/** The Vary Next's server sets on every app route's answer before it runs (base-server.js, `setVaryHeader`). */
const APP_ROUTE_VARY = (() => {
  const h = requireHere("next/dist/client/components/app-router-headers") as Record<string, string>;
  return [h.RSC_HEADER, h.NEXT_ROUTER_STATE_TREE_HEADER, h.NEXT_ROUTER_PREFETCH_HEADER, h.NEXT_ROUTER_SEGMENT_PREFETCH_HEADER].join(", ");
})();
const DIRECT_METHODS = new Set(["GET", "POST", "DELETE"]);
/** Served by routes of their own (app/api/v1/openapi.json, app/api/v1/pipelines/…/upload). */
const NEXT_ROUTES = [/^\/api\/v1\/openapi\.json$/, /^\/api\/v1\/pipelines\/[^/]+\/sources\/[^/]+\/upload$/];

/** A host name or IPv4 address with an optional port, as a URL keeps it (no IPv6 literal, nothing odd). */
const PLAIN_HOST = /^[a-z0-9._-]+(?::\d{1,5})?$/i;
function plainHost(host: string | undefined): boolean {
  if (!host || !PLAIN_HOST.test(host)) return false;
  try {
    const url = new URL(`http://${host}/`);
    return url.hostname === host.replace(/:\d+$/, "").toLowerCase();
  } catch {
    return false;
  }
}

/** Whether the direct path answers this request (see the file comment); everything else is Next's. */
export function servedDirectly(req: { method?: string; url?: string; headers: { authorization?: string; host?: string } }): boolean {
  const { method, url } = req;
  if (!req.headers.authorization || !method || !DIRECT_METHODS.has(method) || !url?.startsWith("/api/v1/") || !plainHost(req.headers.host)) return false;
  const pathname = url.split("?", 1)[0]!;
  return !pathname.endsWith("/") && !pathname.includes("//") && !NEXT_ROUTES.some((r) => r.test(pathname));
}

/** The direct path: the route's own handler, then what Next adds to its answer. */
export async function answerDirectly(req: Request): Promise<Response> {
  const res = await restRouteHandler(req);
  for (const { key, value } of SECURITY_HEADERS) res.headers.set(key, value);
  return res;
}

async function main() {
  const port = Number(process.env.PORT ?? 3000);
  const hostname = process.env.HOST?.trim() || "127.0.0.1";
  // Before the first request, whatever Next's instrumentation does (installing twice adds nothing).
  installPeerStamp();
  countLiveHttpRequests();
  const app = next({ dev: false, dir: process.cwd(), hostname, port });
  const nextHandler = app.getRequestHandler();
  await app.prepare();
  // overrideGlobalObjects: false keeps Node's own Request and Response for Next in this process.
  const directListener = getRequestListener(answerDirectly, { overrideGlobalObjects: false, hostname });
  const compress = nextCompression();
  const answered = { direct: 0, next: 0 };
  const server = createServer((req, res) => {
    if (servedDirectly(req)) {
      answered.direct++;
      res.setHeader("vary", APP_ROUTE_VARY);
      compress(req, res, () => {});
      res.once("close", () => {
        if (!res.writableFinished) releaseCompressionStream(res);
      });
      void directListener(req, res);
    } else {
      answered.next++;
      void nextHandler(req, res);
    }
  });
  server.listen(port, hostname);
  // Next's own server (`next start`) exits on these; a custom server has to, after writing the query log's buffer.
  let stopping = false;
  const stop = (code: number) => {
    // Once: a terminal's Ctrl-C reaches this process and scripts/start.ts, which passes a SIGTERM on.
    if (stopping) return;
    stopping = true;
    console.log(`[synthex] app server ${process.pid} stopping: ${answered.direct} /api/v1 requests answered directly, ${answered.next} requests through Next, ${namedStatementsSent()} queries sent as named statements`);
    server.close();
    const timeout = new Promise((resolve) => setTimeout(resolve, 3000).unref());
    void Promise.race([flushQueryLogOnStop(), timeout]).finally(() => process.exit(code));
  };
  process.on("SIGTERM", () => stop(143));
  process.on("SIGINT", () => stop(130));
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((err) => {
    console.error("[synthex] app server could not start:", err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
