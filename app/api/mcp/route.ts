/** MCP over streamable HTTP (server/api/mcp.ts); the same API-key auth as REST and tRPC. */
import { handleMcp } from "@/server/api/mcp";
import { createContext } from "@/server/api/trpc";
import { apiBodyLimit, apiTooLargeResponse, withBodyLimit } from "@/server/http/body-limit";
import { withCrossSiteGuard } from "@/server/http/csrf";
import { getDb } from "@/server/store/db";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

async function handler(req: Request): Promise<Response> {
  return handleMcp(req, async () => createContext({ db: await getDb(), authorization: req.headers.get("authorization") }));
}

// MCP reads no session cookie; the guard is defence in depth (and the Host check) as on REST.
const limited = withCrossSiteGuard(withBodyLimit(handler, apiBodyLimit, (url, init) => new Request(url, init), apiTooLargeResponse));

export { limited as GET, limited as POST, limited as DELETE };
