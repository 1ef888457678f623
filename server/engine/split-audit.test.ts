/**
 * A split's model call is stored once (issue 48 item 5): each fact of a session carried the whole
 * prompt and response of its session, so the facts step's commit grew with the square of a
 * session's length. A fact's stored audit must not grow with its session's length, its record
 * page still shows the call, the branch's build cost counts the call once, and replay still answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { ScriptedModel } from "../llm/fake-model";
import { Pipeline } from "../pipeline/sdk";
import { getRecord } from "../search/provenance";
import { appendSourceRecords, createPipeline, getBranch } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { branchBuildCostPerStep } from "../store/provenance-reads";
import { createTestDb } from "../store/test-db";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { workspace } = await signUp(db, { email: "split-audit@example.com", password: "split-audit-password" });
  workspaceId = workspace.id;
});
afterAll(async () => close());

/** One conversation of `turns` turns, each a fact of its own. */
function session(turns: number): string {
  return Array.from({ length: turns }, (_, i) => `${i % 2 ? "Bob" : "Alice"}: I adopted a cat named Tiger${i} on day ${i + 1} of the spring.`).join("\n");
}

async function factsOf(turns: number) {
  const spec = new Pipeline(`facts-${turns}`, { agent: "test" })
    .source("chats", { format: "jsonl" })
    .split("facts", { from: "chats", prompt: "List every fact: {{ record.content }}" })
    .toSpec();
  const { pipeline } = await createPipeline(db, workspaceId, { name: `facts-${turns}`, spec });
  await appendSourceRecords(db, pipeline.id, "chats", [{ externalId: "s1", content: session(turns), metadata: { time: { created_at: "2024-03-01T10:00:00Z" } } }]);
  const model = new ScriptedModel();
  const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model });
  expect(run.status).toBe("completed");
  const { branch } = await getBranch(db, pipeline.id, "main");
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: "facts" } });
  const rows = await db.$queryRawUnsafe<Array<{ id: string; bytes: number; idx: number }>>(
    `SELECT id, octet_length(audit::text)::int AS bytes, (metadata #>> '{step,index}')::int AS idx FROM "Record" WHERE id = ANY($1::text[]) ORDER BY idx`,
    pointers.map((p) => p.recordId),
  );
  return { pipelineId: pipeline.id, rows, model, runStats: run.stats as { steps: Array<{ step: string; tokensIn: number }> } };
}

describe("split audit", () => {
  it("a fact's stored audit does not grow with its session's length (10 vs 100 turns)", async () => {
    const short = await factsOf(10);
    const long = await factsOf(100);
    expect(short.rows.length).toBeGreaterThanOrEqual(10);
    expect(long.rows.length).toBeGreaterThanOrEqual(100);
    // Every fact but the first: its own slice, never the session's whole prompt or response.
    const itemBytes = (rows: Array<{ bytes: number; idx: number }>) => Math.max(...rows.filter((r) => r.idx > 0).map((r) => r.bytes));
    expect(itemBytes(long.rows)).toBeLessThan(itemBytes(short.rows) * 1.5);
    expect(itemBytes(long.rows)).toBeLessThan(1_000);
    // All of a step's audit, per fact: the call is stored once, so per-fact bytes stay roughly constant.
    const perFact = (rows: Array<{ bytes: number }>) => rows.reduce((s, r) => s + r.bytes, 0) / rows.length;
    expect(perFact(long.rows)).toBeLessThan(perFact(short.rows) * 2);
  }, 120_000);

  it("an item's record page still shows its call's prompt and response; the build cost counts the call once", async () => {
    const { pipelineId, rows, runStats } = await factsOf(12);
    const third = await getRecord(db, workspaceId, rows[2]!.id, { pipelineId, branch: "main" });
    expect(third.audit).toMatchObject({ sharedCall: { index: 2, of: rows.length }, model: expect.stringMatching(/^offline\//) });
    expect(String(third.audit!.renderedPrompt)).toContain("Tiger11");
    expect(String(third.audit!.rawResponse)).toContain("Tiger11");
    expect(String(third.audit!.responseItem)).toContain("Tiger2");
    expect(String(third.audit!.responseItem)).not.toContain("Tiger11");
    const cost = await branchBuildCostPerStep(db, { workspaceId, pipelineId, branch: "main" });
    const facts = cost.find((c) => c.step === "facts")!;
    expect(facts.tokensIn).toBe(runStats.steps.find((s) => s.step === "facts")!.tokensIn);
  }, 120_000);

  it("replay answers a split from its stored response without a model call", async () => {
    const { pipelineId, rows } = await factsOf(15);
    const model = new ScriptedModel();
    const run = await runPipeline(db, { workspaceId, pipelineId, options: { full: true, replay: true } }, { model });
    expect(run.status).toBe("completed");
    expect(model.calls.filter((c) => c.task === "extract-list")).toHaveLength(0);
    const { branch } = await getBranch(db, pipelineId, "main");
    expect(await db.branchPointer.count({ where: { branchId: branch.id, step: "facts" } })).toBe(rows.length);
  }, 120_000);
});
