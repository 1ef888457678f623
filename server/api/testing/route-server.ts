/**
 * The app's API route handlers (REST /api/v1, MCP /api/mcp, tRPC /api/trpc) served over real
 * HTTP on 127.0.0.1 from this process, for tests and benchmarks that need a real network hop
 * without a `next build`: node's HTTP server turns each request into the web Request the route
 * handlers take, exactly as Next does, and streams their Response back. Bearer API keys only
 * (there is no next-auth session outside Next).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

type Handler = (req: Request) => Promise<Response>;

export interface RouteServer {
  url: string;
  close(): Promise<void>;
}

async function routes(): Promise<Array<[RegExp, Record<string, Handler>]>> {
  const rest = await import("@/app/api/v1/[...path]/route");
  const openapi = await import("@/app/api/v1/openapi.json/route");
  const mcp = await import("@/app/api/mcp/route");
  const trpc = await import("@/app/api/trpc/[trpc]/route");
  return [
    [/^\/api\/v1\/openapi\.json$/, { GET: async () => openapi.GET() }],
    [/^\/api\/v1\//, { GET: rest.GET, POST: rest.POST, DELETE: rest.DELETE }],
    [/^\/api\/mcp$/, { GET: mcp.GET, POST: mcp.POST, DELETE: mcp.DELETE }],
    [/^\/api\/trpc\//, { GET: trpc.GET, POST: trpc.POST }],
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

export async function startRouteServer(): Promise<RouteServer> {
  const table = await routes();
  let base = "";
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const handler = table.find(([pattern]) => pattern.test(path))?.[1][req.method ?? "GET"];
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
