/**
 * Clients for tests that call the real route handlers in-process (web Requests in, Responses out):
 * REST `/api/v1` with a bearer key, and an MCP client whose transport posts to the MCP route.
 * The route modules are passed in, because a test imports them only after it has pointed the
 * process at its own database.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export type Json = Record<string, unknown>;
type Handler = (req: Request) => Promise<Response>;
type Method = "GET" | "POST" | "DELETE";

/** `call(method, url, key?, body?)` → status and JSON body; a string body is sent as is (for malformed-JSON tests). */
export function restCaller(route: { GET: Handler; POST: Handler; DELETE?: Handler }) {
  return async function call(method: Method, url: string, key?: string, body?: unknown): Promise<{ status: number; json: Json; headers: Headers }> {
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    if (body !== undefined) headers["content-type"] = "application/json";
    const req = new Request(`http://localhost/api/v1${url}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const handler = method === "GET" ? route.GET : method === "POST" ? route.POST : route.DELETE;
    if (!handler) throw new Error(`the route has no ${method} handler`);
    const res = await handler(req);
    return { status: res.status, json: (await res.json()) as Json, headers: res.headers };
  };
}

/** An MCP client connected with `key` to the MCP route handler (GET streams are refused, as a stateless server does). */
export async function mcpClient(route: { POST: Handler }, key: string, name = "test-agent"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://localhost/api/mcp"), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (url, init) => (init?.method === "GET" ? new Response(null, { status: 405 }) : route.POST(new Request(url, init))),
    }),
  );
  return client;
}

/** The text of an MCP tool result's first content part. */
export const toolText = (result: Awaited<ReturnType<Client["callTool"]>>): string => (result.content as Array<{ text: string }>)[0]!.text;
