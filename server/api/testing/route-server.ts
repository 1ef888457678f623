/**
 * The app's API (REST /api/v1, MCP /api/mcp, tRPC /api/trpc) served over real HTTP on 127.0.0.1
 * from this process, for tests and benchmarks that need a real network hop without a `next build`:
 * node's HTTP server turns each request into a web Request and hands it to the same handlers the
 * Next routes wrap (handleRest, handleMcp, tRPC's fetch adapter, behind the same body limits), then
 * streams their Response back. Bearer API keys only: there is no next-auth session outside Next
 * (and next-auth's providers do not load under plain Node ESM).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { apiBodyLimit, apiTooLargeResponse, withBodyLimit } from "../../http/body-limit";
import { getDb } from "../../store/db";
import { handleMcp } from "../mcp";
import { handleRest } from "../rest";
import { appOpenApiDocument, appRestEndpoints } from "../rest-app";
import { appRouter } from "../root";
import { createContext } from "../trpc";

export type Handler = (req: Request) => Promise<Response>;

export interface RouteServer {
  url: string;
  close(): Promise<void>;
}

const bearerContext = async (req: Request) => createContext({ db: await getDb(), authorization: req.headers.get("authorization") });
const limited = (handler: Handler, tooLarge = apiTooLargeResponse) => withBodyLimit(handler, apiBodyLimit, (url, init) => new Request(url, init), tooLarge);

async function routes(): Promise<Array<[RegExp, Handler]>> {
  const rest = limited((req) =>
    handleRest({ router: appRouter, endpoints: appRestEndpoints(), req, path: new URL(req.url).pathname.replace(/^\/api\/v1/, "") || "/", createContext: () => bearerContext(req) }),
  );
  const mcp = limited((req) => handleMcp(req, () => bearerContext(req)));
  const trpc = withBodyLimit((req: Request) => fetchRequestHandler({ endpoint: "/api/trpc", req, router: appRouter, createContext: () => bearerContext(req) }), apiBodyLimit, (url, init) => new Request(url, init));
  return [
    [/^\/api\/v1\/openapi\.json$/, async () => Response.json(appOpenApiDocument())],
    [/^\/api\/v1\//, rest],
    [/^\/api\/mcp$/, mcp],
    [/^\/api\/trpc\//, trpc],
  ];
}

function toRequest(req: IncomingMessage, base: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", base), {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    // Node's fetch needs this for a streamed request body.
    ...(hasBody ? { duplex: "half" } : {}),
  } as RequestInit);
}

async function send(res: ServerResponse, response: Response) {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (response.body) for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  res.end();
}

/** `extra`: more routes served the same way (e.g. the compat APIs, which sit above this layer). */
export async function startRouteServer(extra: Array<[RegExp, Handler]> = []): Promise<RouteServer> {
  const table = [...extra, ...(await routes())];
  let base = "";
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const handler = table.find(([pattern]) => pattern.test(path))?.[1];
    if (!handler) {
      res.statusCode = 404;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ error: { code: "NOT_FOUND", message: `No route ${req.method} ${path}.` } }));
      return;
    }
    handler(toRequest(req, base))
      .then((response) => send(res, response))
      .catch((err: unknown) => {
        console.error("[route-server]", err);
        res.statusCode = 500;
        res.end();
      });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
