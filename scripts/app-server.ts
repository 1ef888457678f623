/**
 * One app server process of `npm start` (scripts/start.ts runs one per worker): Next as a custom
 * server (https://nextjs.org/docs/app/guides/custom-server), with the agent API answered before
 * Next's router sees it.
 *
 * A request to `/api/v1/…` that carries an API key (`Authorization`) goes straight to the handler
 * the Next route `app/api/v1/[...path]/route.ts` calls (server/api/rest-route.ts: Host and
 * cross-site guard, body limit, key, permissions, rate limits, idempotency, the query log), through
 * @hono/node-server's Node↔Fetch adapter, with the headers next.config.ts adds to every response
 * (server/http/security-headers.ts) and Next's compression of large answers. That skips Next's
 * routing, its web-stream and AsyncLocalStorage layers: about half of a REST search's app CPU.
 * Everything else goes to Next unchanged: pages, tRPC, MCP, next-auth, the upload route (streams
 * multipart bodies), openapi.json, session-signed API calls (next-auth reads the cookies through
 * Next's request context), other methods (HEAD, OPTIONS) and paths Next would redirect (a trailing
 * slash). The peer-address stamp and the live-request count are Node-level hooks on every HTTP
 * server of the process (server/http/request-hook.ts), so they see both paths.
 *
 * SYNTHEX_DIRECT_API=off: scripts/start.ts runs plain `next start` instead (every request through Next).
 */
import { createServer } from "node:http";
import { getRequestListener } from "@hono/node-server";
import next from "next";
import { restRouteHandler } from "../server/api/rest-route";
import { installPeerStamp } from "../server/http/client-address";
import { SECURITY_HEADERS } from "../server/http/security-headers";
import { countLiveHttpRequests } from "../server/services/live-requests";
import { flushQueryLogOnStop } from "../server/services/query-log";

/** The response header that says the direct path answered (what the tests and benches look for). */
export const DIRECT_HEADER = "x-synthex-direct";
/** Next compresses answers from 1 KiB up unless they say no-transform (server/api/rest.ts decides which). */
const COMPRESS_FROM_BYTES = 1024;
const DIRECT_METHODS = new Set(["GET", "POST", "DELETE"]);
/** Served by routes of their own (app/api/v1/openapi.json, app/api/v1/pipelines/…/upload). */
const NEXT_ROUTES = [/^\/api\/v1\/openapi\.json$/, /^\/api\/v1\/pipelines\/[^/]+\/sources\/[^/]+\/upload$/];

/** Whether the direct path answers this request (see the file comment); everything else is Next's. */
export function servedDirectly(method: string | undefined, url: string | undefined, authorization: string | undefined): boolean {
  if (!authorization || !method || !DIRECT_METHODS.has(method) || !url?.startsWith("/api/v1/")) return false;
  const pathname = url.split("?", 1)[0]!;
  return !pathname.endsWith("/") && !pathname.includes("//") && !NEXT_ROUTES.some((r) => r.test(pathname));
}

/** gzip, as Next's `compression` would: a client that accepts it, a body of 1 KiB or more, no `no-transform`. */
async function compressed(res: Response, acceptEncoding: string | null): Promise<Response> {
  if (!res.body || !/\bgzip\b/i.test(acceptEncoding ?? "") || /no-transform/i.test(res.headers.get("cache-control") ?? "") || res.headers.has("content-encoding")) return res;
  // REST answers are whole strings already (server/api/rest.ts): reading one back costs no wait.
  const body = new Uint8Array(await res.arrayBuffer());
  const headers = new Headers(res.headers);
  if (body.byteLength < COMPRESS_FROM_BYTES) return new Response(body, { status: res.status, statusText: res.statusText, headers });
  headers.set("content-encoding", "gzip");
  headers.append("vary", "Accept-Encoding");
  headers.delete("content-length");
  return new Response(new Response(body).body!.pipeThrough(new CompressionStream("gzip")), { status: res.status, statusText: res.statusText, headers });
}

/** The direct path: the route's own handler, then what Next adds to its answer. */
export async function answerDirectly(req: Request): Promise<Response> {
  const res = await compressed(await restRouteHandler(req), req.headers.get("accept-encoding"));
  for (const { key, value } of SECURITY_HEADERS) res.headers.set(key, value);
  res.headers.set(DIRECT_HEADER, "1");
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
  const server = createServer((req, res) => {
    if (servedDirectly(req.method, req.url, req.headers.authorization)) void directListener(req, res);
    else void nextHandler(req, res);
  });
  server.listen(port, hostname);
  // Next's own server (`next start`) exits on these; a custom server has to, after writing the query log's buffer.
  const stop = (code: number) => {
    server.close();
    const timeout = new Promise((resolve) => setTimeout(resolve, 3000).unref());
    void Promise.race([flushQueryLogOnStop(), timeout]).finally(() => process.exit(code));
  };
  process.once("SIGTERM", () => stop(143));
  process.once("SIGINT", () => stop(130));
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((err) => {
    console.error("[synthex] app server could not start:", err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
