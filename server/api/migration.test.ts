/**
 * "Try another architecture" (issue 50) over real HTTP (REST /api/v1 on 127.0.0.1), as a team would:
 * a pipeline on the mem0 template with imported chat history and logged agent queries → try
 * synapsis (bound to the same source, every raw record shared, the plan says what it computes and
 * reuses) → run it (offline) → score the team's question set on both → the migration report
 * (question set and replay, with intervals) → promote (main kept) → REST search answers from the
 * new architecture's records, and so does the Mem0 endpoint agents call (the real mem0ai client) →
 * restore the old one. And the refusals: a chat template on a folder
 * of documents, a binding to a source that does not exist.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-migration-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
process.env.MEM0_TELEMETRY = "false";
process.env.MEM0_DIR = path.join(dataDir, "mem0-home");
const { createTestDatabase } = await import("@/server/store/test-db");
const adminUrl = process.env.TEST_DATABASE_URL?.trim();
const pgDatabase = adminUrl ? await createTestDatabase(adminUrl) : null;
if (pgDatabase) process.env.DATABASE_URL = pgDatabase.url;
else delete process.env.DATABASE_URL;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, stepStatus, templateSpec } = await import("@/server/services/pipelines");
const { importFile } = await import("@/server/services/imports");
const { runPipeline } = await import("@/server/services/runs");
const { settleBackgroundWork } = await import("@/server/services/background");
const { setQueryLogConfig, flushQueryLog } = await import("@/server/services/query-log");
const { addToQuestionSet } = await import("@/server/eval/question-sets");
const { runEval } = await import("@/server/eval/service");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { mem0Route } = await import("@/server/compat/mem0");
const { MemoryClient } = await import("mem0ai");

type Db = Awaited<ReturnType<typeof openMigratedDb>>;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const FIXTURE = path.resolve("e2e/fixtures/chatgpt-export.json");

let db: Db;
let server: Awaited<ReturnType<typeof startRouteServer>>;
let workspaceId = "";
let pipelineId = "";
let docsId = "";
let key = "";

async function call(method: "GET" | "POST", url: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${server.url}/api/v1${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
}

const searchSteps = async (query: string) => {
  const res = await call("GET", `/pipelines/${pipelineId}/search?query=${encodeURIComponent(query)}&mode=fts&limit=10`);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return new Set((res.json.hits as Array<{ step: string }>).map((h) => h.step));
};

/** What an agent's Mem0 search answers (the real client), each result's record step. */
const mem0Steps = async (query: string) => {
  const found = (await new MemoryClient({ apiKey: key, host: `${server.url}/compat/mem0/p/${pipelineId}` }).search(query)) as unknown as { results: Array<{ id: string; memory: string }> };
  const ids = found.results.map((m) => m.id);
  const records = await db.record.findMany({ where: { pipelineId, id: { in: ids } }, select: { step: true } });
  return { ids, steps: new Set(records.map((r) => r.step)) };
};

beforeAll(async () => {
  const started = performance.now();
  db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "migrate@example.com", password: "migrate-password-1" });
  workspaceId = workspace.id;
  pipelineId = (await createPipeline(db, workspaceId, { name: "agent-memory", spec: templateSpec("mem0") })).pipeline.id;
  await importFile(db, { workspaceId, pipelineId, source: "chats", path: FIXTURE });
  await runPipeline(db, { workspaceId, pipelineId });
  docsId = (await createPipeline(db, workspaceId, { name: "papers", spec: templateSpec("documents", "folder") })).pipeline.id;
  // An admin's key: main is protected, promoting into it is for admins and owners.
  key = (await createApiKey(db, workspaceId, { userId: user.id, role: "owner" }, { name: "lead", role: "admin" })).secret;
  await setQueryLogConfig(db, workspaceId, pipelineId, { enabled: true });
  server = await startRouteServer([[/^\/compat\/mem0(\/|$)/, mem0Route]]);
  console.log(`setup ${Math.round(performance.now() - started)} ms`);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await pgDatabase?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("try another architecture (issue 50)", () => {
  it("mem0 → synapsis on the team's data and traffic: create, plan, run, report, promote, search, restore", { timeout: 120_000 }, async () => {
    // Agents call main; the query log keeps what they asked.
    const mainSteps = await searchSteps("lighthouse key");
    expect([...mainSteps].every((s) => ["memories", "entities"].includes(s))).toBe(true);
    for (const q of ["where is the spare key", "winter readiness", "blue ceramic frog"]) await searchSteps(q);
    await flushQueryLog();
    // The team's question set, made on main's memory.
    const memory = await db.record.findFirstOrThrow({ where: { pipelineId, step: "memories", content: { contains: "frog" } } });
    await addToQuestionSet(db, workspaceId, { set: "team-questions", question: "Where is the lighthouse key hidden?", recordIds: [memory.id] });
    await runEval(db, { workspaceId, pipeline: pipelineId, branch: "main", questionSet: "team-questions" });

    // Try synapsis: bound to the same source by format, every raw record shared, nothing imported again.
    const raw = await db.record.count({ where: { pipelineId, step: "chats" } });
    const created = await call("POST", `/pipelines/${pipelineId}/migrations`, { name: "try-synapsis", template: "synapsis" });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    expect(created.json.bindings).toEqual([{ templateSource: "sessions", pipelineSource: "chats", format: "chatgpt-export", chosen: false, candidates: ["chats"] }]);
    expect(created.json.model).toBe("offline/extractive");
    expect(created.json.reuses).toMatchObject({ rawRecords: raw, sources: ["chats"] });
    expect(created.json.computes.map((c: { step: string }) => c.step)).toEqual(expect.arrayContaining(["turns", "windows", "entities", "relations"]));
    expect(created.json.computes.map((c: { step: string }) => c.step)).not.toContain("chats");
    expect(created.json.plan.totals).toMatchObject({ estimatedCostUsd: 0 });
    expect(created.json.summary).toMatch(/nothing imported again/);
    expect(await db.record.count({ where: { pipelineId, step: "chats" } })).toBe(raw);

    // Run it like any branch (offline model), then score the same question set on it.
    const run = await runPipeline(db, { workspaceId, pipelineId, branch: "try-synapsis" });
    expect(run.status).toBe("completed");
    await settleBackgroundWork();
    await runEval(db, { workspaceId, pipeline: pipelineId, branch: "try-synapsis", questionSet: "team-questions" });

    // The report: the question set's metrics with intervals, replay of the four logged searches, cost.
    const report = await call("POST", `/pipelines/${pipelineId}/migrations/report`, { branch: "try-synapsis" });
    expect(report.status, JSON.stringify(report.json)).toBe(200);
    const r = report.json;
    expect(r).toMatchObject({ branch: "try-synapsis", baseline: "main" });
    expect(r.questionSet).toMatchObject({ set: { name: "team-questions", questions: 1 } });
    expect(r.metrics.filter((m: { from: string }) => m.from === "question-set").map((m: { metric: string }) => m.metric)).toEqual(expect.arrayContaining(["session_hit@5", "mrr"]));
    expect(r.replay).toMatchObject({ replayed: 4, failed: 0 });
    expect(r.replay.latencyMs.candidate.p95).toBeGreaterThanOrEqual(r.replay.latencyMs.candidate.p50);
    const overlap = r.metrics.find((m: { from: string; metric: string }) => m.from === "replay" && m.metric === "overlap@k");
    expect(overlap).toMatchObject({ main: 1, n: 4 });
    // Different records (synapsis windows, not mem0 memories): little overlap with main.
    expect(overlap.candidate).toBeLessThan(1);
    expect(r.metrics.find((m: { metric: string; from: string }) => m.from === "replay" && m.metric === "latency_ms").ci95).toHaveLength(2);
    expect(r.cost.build.candidate).toMatchObject({ pending: 0, spent: { runs: 1 } });
    expect(r.notes.join("\n")).toMatch(/Shadow traffic: not measured/);

    // Promote: main kept as previous/try-synapsis; the same REST search now answers from synapsis' records.
    const promoted = await call("POST", `/pipelines/${pipelineId}/migrations/promote`, { branch: "try-synapsis" });
    expect(promoted.status, JSON.stringify(promoted.json)).toBe(200);
    expect(promoted.json.kept).toBe("previous/try-synapsis");
    const after = await searchSteps("lighthouse key");
    expect(after.size).toBeGreaterThan(0);
    expect([...after].every((s) => ["windows", "relations", "entities"].includes(s))).toBe(true);
    // Agents' Mem0 calls: the same endpoint, now the new architecture's memories (the relations' beliefs).
    const mem0After = await mem0Steps("Piranesi");
    expect(mem0After.ids.length).toBeGreaterThan(0);
    expect([...mem0After.steps]).toEqual(["relations"]);

    // Restore the old architecture in one action: its spec and records, nothing recomputed.
    const runsBefore = await db.run.count({ where: { pipelineId } });
    const restored = await call("POST", `/pipelines/${pipelineId}/migrations/restore`, { kept: "previous/try-synapsis" });
    expect(restored.status, JSON.stringify(restored.json)).toBe(200);
    expect(await db.run.count({ where: { pipelineId } })).toBe(runsBefore);
    const back = await searchSteps("lighthouse key");
    expect([...back].every((s) => ["memories", "entities"].includes(s))).toBe(true);
    expect(back.has("memories")).toBe(true);
    const mem0Back = await mem0Steps("lighthouse key");
    expect(mem0Back.ids.length).toBeGreaterThan(0);
    expect(mem0Back.ids.every((id) => id.startsWith("mem-"))).toBe(true);
    // Nothing on main is stale or left to compute: the kept records are current again.
    expect((await stepStatus(db, pipelineId, "main")).filter((s) => s.stale > 0)).toEqual([]);

    // Walk away from the candidate: the branch goes, its records stay until gc (which would now reclaim them).
    const walked = await call("POST", `/pipelines/${pipelineId}/migrations/walk-away`, { branch: "try-synapsis" });
    expect(walked.status, JSON.stringify(walked.json)).toBe(200);
    expect(walked.json).toMatchObject({ deleted: "try-synapsis" });
    expect(walked.json.gc.records).toBeGreaterThan(0);
    expect(walked.json.message).toMatch(/gc would delete [\d,]+ record\(s\) no branch uses\.$/);
    expect(await db.branch.findMany({ where: { pipelineId }, select: { name: true }, orderBy: { name: "asc" } })).toEqual([{ name: "main" }, { name: "previous/try-synapsis" }]);

    const audit = await db.auditEvent.findMany({ where: { workspaceId, action: { startsWith: "migration." } }, orderBy: { createdAt: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["migration.create", "migration.report", "migration.promote", "migration.restore", "migration.walkAway"]);
  });

  it("refuses a template that cannot read the pipeline's sources, naming the formats; and a binding to a missing source", async () => {
    const chat = await call("POST", `/pipelines/${docsId}/migrations`, { name: "try-mem0", template: "mem0" });
    expect(chat.status).toBe(400);
    expect(chat.json.error.message).toMatch(/^Template "mem0" reads conversations \(chatgpt-export, claude-export, jsonl, api\); this pipeline's sources are docs \(folder\)/);
    expect(await db.branch.count({ where: { pipelineId: docsId } })).toBe(1);
    const bind = await call("POST", `/pipelines/${pipelineId}/migrations`, { name: "try-memex", template: "memex", bind: { chats: "emails" } });
    expect(bind.status).toBe(400);
    expect(bind.json.error.message).toBe('bind.chats: the pipeline has no source "emails" (its sources: chats).');
    const unknown = await call("POST", `/pipelines/${pipelineId}/migrations`, { name: "try-x", template: "zep" });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toMatch(/^template: unknown template "zep"\. Templates: /);
  });
});
