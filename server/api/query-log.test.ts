/**
 * The query log (issue 37) through the real REST route and the real MCP route on an embedded
 * database: off by default; once on, searches and asks over REST and MCP leave entries with the
 * caller, scope, parameters, served ids with ranks and scores, ask's citations and confidence,
 * latency, branch and version; viewers cannot read it; purging a scope leaves no logged query text
 * or record id of that scope; retention prunes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restCaller, mcpClient, type Json } from "@/server/api/testing/route-clients";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-query-log-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;
delete process.env.SYNTHEX_EXECUTOR;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline } = await import("@/server/services/pipelines");
const { templateSpec } = await import("@/server/pipeline/templates");
const { addNote } = await import("@/server/services/notes");
const { runPipeline } = await import("@/server/services/runs");
const { settleBackgroundWork } = await import("@/server/services/background");
const { settleQueryLog, setQueryLogConfig } = await import("@/server/services/query-log");
const restRoute = await import("@/app/api/v1/[...path]/route");
const mcpRoute = await import("@/app/api/mcp/route");

type Db = Awaited<ReturnType<typeof openMigratedDb>>;

const call = restCaller(restRoute);

const mcp = (key: string) => mcpClient(mcpRoute, key, "log-agent");

interface Entry {
  id: string;
  surface: string;
  kind: string;
  caller: string;
  scope: string | null;
  query: string;
  branch: string;
  versionId: string;
  hits: Array<{ id: string; rank: number; score: number; step: string }>;
  cited: string[];
  confidence: number | null;
  latencyMs: number;
  params: Json;
}

describe("query log over REST and MCP", () => {
  let db: Db;
  let workspaceId = "";
  let pipelineId = "";
  let owner = "";
  let ownerKeyId = "";
  let viewer = "";

  beforeAll(async () => {
    db = await openMigratedDb();
    const { user, workspace } = await signUp(db, { email: "log@example.com", password: "a-long-password-1" });
    workspaceId = workspace.id;
    pipelineId = (await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") })).pipeline.id;
    const ownerKey = await createApiKey(db, workspaceId, { userId: user.id, role: "owner" }, { name: "owner agent", role: "admin" });
    owner = ownerKey.secret;
    ownerKeyId = ownerKey.id;
    viewer = (await createApiKey(db, workspaceId, { userId: user.id, role: "owner" }, { name: "viewer agent", role: "viewer" })).secret;
    const target = { workspaceId, pipelineId, source: "chats" };
    await addNote(db, target, { text: "Alice keeps the zebra-vault combination 4471 in her desk drawer.", scope: "acme:alice" });
    await addNote(db, target, { text: "Alice's zebra-vault backup key hangs in the greenhouse.", scope: "acme:alice" });
    await addNote(db, target, { text: "Bob waters the heron-garden ferns every Tuesday; the zebra-vault is not his.", scope: "acme:bob" });
    await settleBackgroundWork();
    while (await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } } })) await new Promise((r) => setTimeout(r, 200));
    await runPipeline(db, { workspaceId, pipelineId });
  }, 180_000);

  afterAll(async () => {
    await settleQueryLog();
    await settleBackgroundWork();
    await closeDb();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const entries = async () => (await db.queryLogEntry.findMany({ where: { pipelineId }, orderBy: { createdAt: "asc" } })) as unknown as Entry[];

  it("logs nothing while off; once on, logs REST and MCP searches and asks with what was served", async () => {
    expect((await call("GET", `/pipelines/${pipelineId}/search?query=zebra-vault&mode=fts`, owner)).status).toBe(200);
    await settleQueryLog();
    expect(await entries()).toEqual([]);

    const on = await call("POST", `/pipelines/${pipelineId}/log/config`, owner, { enabled: true, retentionDays: 7 });
    expect(on).toMatchObject({ status: 200, json: { enabled: true, retentionDays: 7, maxEntries: 100000 } });

    const alice = await call("GET", `/pipelines/${pipelineId}/search?query=zebra-vault%20combination&mode=fts&limit=5&scope=acme:alice`, owner);
    expect(alice.status).toBe(200);
    const aliceHits = (alice.json.hits as Array<{ id: string; score: { fused: number } }>);
    expect(aliceHits.length).toBeGreaterThan(0);
    const everyone = await call("GET", `/pipelines/${pipelineId}/search?query=zebra-vault&mode=fts&limit=10`, owner);
    expect(everyone.status).toBe(200);

    const agent = await mcp(owner);
    try {
      await agent.callTool({ name: "search", arguments: { pipeline: "memory", query: "heron-garden ferns", mode: "fts", scope: "acme:bob", limit: 3 } });
      await agent.callTool({ name: "ask", arguments: { pipeline: "memory", question: "Where does Alice keep the zebra-vault combination?", scope: "acme:alice" } });
    } finally {
      await agent.close();
    }
    await settleQueryLog();

    const logged = await entries();
    expect(logged.map((e) => [e.surface, e.kind, e.scope])).toEqual([
      ["rest", "search", "acme:alice"],
      ["rest", "search", null],
      ["mcp", "search", "acme:bob"],
      ["mcp", "ask", "acme:alice"],
    ]);
    const [first, , , asked] = logged;
    const version = await db.branch.findFirstOrThrow({ where: { pipelineId, name: "main" } });
    expect(first).toMatchObject({ caller: `apiKey:${ownerKeyId}`, query: "zebra-vault combination", branch: "main", versionId: version.versionId, params: { mode: "fts", limit: 5 } });
    expect(first!.hits).toEqual(aliceHits.map((h, i) => ({ id: h.id, rank: i + 1, score: expect.closeTo(h.score.fused, 5), step: expect.any(String) })));
    expect(first!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(asked!.cited.length).toBeGreaterThan(0);
    expect(asked!.confidence).toEqual(expect.any(Number));

    // Over REST, with log:read: the same entries, newest first.
    const listed = await call("GET", `/pipelines/${pipelineId}/log?limit=10`, owner);
    expect((listed.json as unknown as Entry[]).map((e) => e.id)).toEqual(logged.map((e) => e.id).reverse());
    // A viewer's key has no log:read.
    expect(await call("GET", `/pipelines/${pipelineId}/log`, viewer)).toMatchObject({ status: 403, json: { error: { message: "Your role (viewer) does not allow log:read." } } });
  }, 120_000);

  it("purging a scope leaves no logged query text or record id of that scope", async () => {
    const aliceIds = (await db.record.findMany({ where: { pipelineId, scope: { startsWith: "acme:alice" } }, select: { id: true } })).map((r) => r.id);
    expect(aliceIds.length).toBeGreaterThan(0);
    const before = JSON.stringify(await entries());
    expect(aliceIds.some((id) => before.includes(id))).toBe(true);

    const purged = await call("POST", `/pipelines/${pipelineId}/purge`, owner, { scope: "acme:alice" });
    expect(purged.status).toBe(200);
    const after = await entries();
    const text = JSON.stringify(after);
    expect(after.filter((e) => e.scope === "acme:alice")).toEqual([]);
    for (const id of aliceIds) expect(text).not.toContain(id);
    expect(text).not.toMatch(/combination|Alice/);
    // Bob's query, which served no record of Alice, stays.
    expect(after.map((e) => [e.surface, e.kind, e.scope, e.query])).toEqual([["mcp", "search", "acme:bob", "heron-garden ferns"]]);
    const audit = await db.auditEvent.findFirstOrThrow({ where: { workspaceId, action: "purge" }, orderBy: { createdAt: "desc" } });
    expect(audit.summary).toMatchObject({ queryLogEntries: 3 });
  }, 120_000);

  it("prunes entries past the retention, and refuses a bad setting naming it", async () => {
    await db.queryLogEntry.create({ data: { workspaceId, pipelineId, surface: "rest", kind: "search", caller: "apiKey:x", query: "an old question", branch: "main", latencyMs: 1, recordIds: [], cited: [], createdAt: new Date(Date.now() - 10 * 86_400_000) } });
    await setQueryLogConfig(db, workspaceId, pipelineId, { retentionDays: 7 });
    expect(await db.queryLogEntry.count({ where: { pipelineId, query: "an old question" } })).toBe(0);
    expect(await call("POST", `/pipelines/${pipelineId}/log/config`, owner, { retentionDays: 0 })).toMatchObject({ status: 400, json: { error: { message: expect.stringMatching(/^retentionDays: a whole number of days/) } } });
  });
});
