/**
 * One API rate limit for every surface (issue 30, item 5): a key's budget (and its workspace's) is
 * spent by REST, tRPC — each call of a batch — and MCP — each message of a batch — alike, through
 * the real route handlers on a real embedded database owned by this test process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import superjson from "superjson";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-rate-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const restRoute = await import("@/app/api/v1/[...path]/route");
const trpcRoute = await import("@/app/api/trpc/[trpc]/route");
const mcpRoute = await import("@/app/api/mcp/route");

let newKey: (name: string) => Promise<string>;

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "agent-owner@example.com", password: "a-long-password-1" });
  newKey = async (name) => (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name, role: "admin" })).secret;
}, 180_000);

afterAll(async () => {
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
});

afterEach(() => {
  delete process.env.SYNTHEX_API_RATE_PER_KEY;
  delete process.env.SYNTHEX_API_RATE_PER_WORKSPACE;
});

const rest = (key: string) => restRoute.GET(new Request("http://localhost/api/v1/pipelines", { headers: { authorization: `Bearer ${key}` } }));

/** `pipeline.list` `calls` times in one tRPC request (a batch when more than one), as the browser client sends it. */
async function trpc(key: string, calls = 1) {
  const names = Array.from({ length: calls }, () => "pipeline.list").join(",");
  const input = Object.fromEntries(Array.from({ length: calls }, (_, i) => [String(i), superjson.serialize({})]));
  const url = calls > 1 ? `http://localhost/api/trpc/${names}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}` : `http://localhost/api/trpc/${names}?input=${encodeURIComponent(JSON.stringify(input["0"]))}`;
  const res = await trpcRoute.GET(new Request(url, { headers: { authorization: `Bearer ${key}` } }));
  const body = (await res.json()) as unknown;
  const results = (Array.isArray(body) ? body : [body]) as Array<{ result?: unknown; error?: { json: { message: string; data: { code: string } } } }>;
  return { res, codes: results.map((r) => r.error?.json.data.code ?? "OK"), messages: results.map((r) => r.error?.json.message) };
}

/** `messages` MCP pings in one JSON-RPC batch. */
const mcp = (key: string, messages: number) =>
  mcpRoute.POST(
    new Request("http://localhost/api/mcp", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(Array.from({ length: messages }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" }))),
    }),
  );

describe("API rate limit on every surface", () => {
  it("tRPC with a Bearer key gets 429 TOO_MANY_REQUESTS once the key's REST budget is spent", async () => {
    process.env.SYNTHEX_API_RATE_PER_KEY = "3";
    const key = await newKey("rest then trpc");
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await rest(key)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const { res, codes, messages } = await trpc(key);
    expect(res.status).toBe(429);
    expect(codes).toEqual(["TOO_MANY_REQUESTS"]);
    expect(messages[0]).toMatch(/^Rate limit of 3 requests per minute for this API key reached: retry in \d+ s\.$/);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("each call of a tRPC batch counts, and spends the same budget as REST", async () => {
    process.env.SYNTHEX_API_RATE_PER_KEY = "3";
    const key = await newKey("batch");
    const { codes } = await trpc(key, 5);
    expect(codes).toEqual(["OK", "OK", "OK", "TOO_MANY_REQUESTS", "TOO_MANY_REQUESTS"]);
    expect((await rest(key)).status).toBe(429);
  });

  it("each message of an MCP batch counts", async () => {
    process.env.SYNTHEX_API_RATE_PER_KEY = "3";
    const key = await newKey("mcp batch");
    expect((await mcp(key, 3)).status).toBe(200);
    expect((await rest(key)).status).toBe(429);
    expect((await mcp(await newKey("mcp big batch"), 4)).status).toBe(429);
  });

  it("a workspace's budget is shared by its keys across REST and tRPC", async () => {
    process.env.SYNTHEX_API_RATE_PER_WORKSPACE = "4";
    const [a, b] = [await newKey("workspace a"), await newKey("workspace b")];
    expect([(await rest(a)).status, (await rest(a)).status]).toEqual([200, 200]);
    expect((await trpc(b, 2)).codes).toEqual(["OK", "OK"]);
    const { res, messages } = await trpc(b);
    expect(res.status).toBe(429);
    expect(messages[0]).toMatch(/^Rate limit of 4 requests per minute for this workspace reached/);
    expect((await rest(a)).status).toBe(429);
  });
});
