/**
 * consolidate on hand-built facts against a real database: the four decisions with their history,
 * incrementality (a late fact re-decides only the tail of its scope), and bad input (facts without
 * time, contradictory facts, a model that answers with an unknown decision or malformed JSON).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../core/db";
import { ProviderLimiter } from "../../llm/limiter";
import { AiSdkModel } from "../../llm/sdk-model";
import { startMockOpenAIServer, type MockOpenAIServer } from "../../llm/testing/mock-openai-server";
import { Pipeline } from "../../pipeline/sdk";
import { appendSourceRecords, createPipeline, getBranch } from "../../services/pipelines";
import { runPipeline } from "../../services/runs";
import { signUp } from "../../services/users";
import { createTestDb } from "../../store/test-db";
import { deletedPointerStep, memoryMetaOf } from "./consolidate";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let mock: MockOpenAIServer;
let n = 0;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "consolidate@example.com", password: "consolidate-password" }));
  mock = await startMockOpenAIServer();
});
afterAll(async () => {
  await mock.close();
  await close();
});

const FAST = { retryBaseMs: 1 };

async function newPipeline(model?: string) {
  n += 1;
  const spec = new Pipeline(`c${n}`, { agent: "test" })
    .source("facts", { format: "jsonl" })
    .consolidate("memories", { from: "facts", prompt: "Fact: {{ record.content }}\n{% for r in records %}[{{ r.id }}] {{ r.content }}\n{% endfor %}", ...(model ? { model } : {}) })
    .output("search", { from: "memories", surface: "search" })
    .toSpec();
  return (await createPipeline(db, workspaceId, { name: `c${n}`, spec })).pipeline.id;
}

let fid = 0;
function fact(content: string, day: number | null, scope = "alice") {
  fid += 1;
  return { externalId: `f${fid}`, content, scope, metadata: day === null ? {} : { time: { created_at: `2024-03-${String(day).padStart(2, "0")}T10:00:00Z` } } };
}

async function branchId(pipelineId: string) {
  return (await getBranch(db, pipelineId, "main")).branch.id;
}

async function pointed(pipelineId: string, step: string) {
  const pointers = await db.branchPointer.findMany({ where: { branchId: await branchId(pipelineId), step } });
  const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } } });
  return records.sort((a, b) => a.content.localeCompare(b.content));
}

async function decisions(pipelineId: string) {
  // In the order they were decided: by the time of their fact, then the fact's content key (the step's tie-break, tieKey).
  const rows = await db.record.findMany({ where: { pipelineId, step: "memories" } });
  const events = rows.filter((r) => memoryMetaOf(r as never)).map((r) => ({ content: r.content, ...memoryMetaOf(r as never)! }));
  const facts = new Map((await db.record.findMany({ where: { id: { in: events.map((e) => e.fact!) } } })).map((f) => [f.id, f]));
  const at = (e: (typeof events)[number]) => {
    const f = facts.get(e.fact!)!;
    return `${(f.metadata as { time?: { created_at?: string } }).time?.created_at ?? ""}|${f.contentFingerprint} ${f.materializationKey}`;
  };
  return events.sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : 0));
}

function statsOf(run: { stats: unknown }) {
  return (run.stats as { steps: Array<{ step: string; input: number; output: number; errors: number; modelCalls: number }> }).steps.find((s) => s.step === "memories")!;
}

describe("consolidate (offline rule)", () => {
  it("decides ADD, UPDATE, DELETE and NONE, keeps every version with the fact that made it", async () => {
    const id = await newPipeline();
    await appendSourceRecords(db, id, "facts", [
      fact("Alice lives in Paris", 1),
      fact("Alice works as a nurse at the city hospital", 2),
      fact("Alice lives in Paris", 3), // near-duplicate → NONE
      fact("Alice lives in Berlin", 4), // same subject, changed value → UPDATE
      fact("Alice no longer works as a nurse at the city hospital", 5), // explicit negation → DELETE
    ]);
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    expect(run.status).toBe("completed");

    const events = await decisions(id);
    expect(events.map((e) => e.event)).toEqual(["ADD", "ADD", "NONE", "UPDATE", "DELETE"]);

    const active = await pointed(id, "memories");
    expect(active.map((r) => r.content)).toEqual(["Alice lives in Berlin"]);
    const berlin = memoryMetaOf(active[0] as never)!;
    expect(berlin).toMatchObject({ event: "UPDATE", version: 2, status: "active" });
    // The superseded version is still there, and the new one points at it and at its fact.
    const paris = await db.record.findUniqueOrThrow({ where: { id: berlin.previous! } });
    expect(paris.content).toBe("Alice lives in Paris");
    const edges = await db.recordEdge.findMany({ where: { childId: active[0]!.id }, orderBy: { position: "asc" } });
    expect(edges.map((e) => e.parentId)).toEqual([berlin.fact, paris.id]);
    expect((await db.record.findUniqueOrThrow({ where: { id: berlin.fact! } })).content).toBe("Alice lives in Berlin");

    // The deleted memory is a tombstone (what it said), pointed under #deleted, not searchable.
    const deleted = await pointed(id, deletedPointerStep("memories"));
    expect(deleted.map((r) => r.content)).toEqual(["Alice's job title is nurse (Alice works as a nurse at the city hospital)"]);
    expect(memoryMetaOf(deleted[0] as never)).toMatchObject({ event: "DELETE", status: "deleted", version: 2 });
  });

  it("re-running unchanged decides nothing; a late fact re-decides only the facts after it in its scope", async () => {
    const id = await newPipeline();
    await appendSourceRecords(db, id, "facts", [
      fact("Bob plays the guitar in a band", 1, "bob"),
      fact("Bob drinks green tea every morning", 3, "bob"),
      fact("Bob has a dog named Rex", 5, "bob"),
      fact("Bob likes hiking in the Alps", 7, "bob"),
      fact("Carol studies marine biology", 2, "carol"),
    ]);
    const first = await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    expect(statsOf(first).input).toBe(5);
    const before = await db.record.count({ where: { pipelineId: id, step: "memories" } });

    const again = await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    expect(statsOf(again).input).toBe(0);
    expect(await db.record.count({ where: { pipelineId: id, step: "memories" } })).toBe(before);

    // A late fact dated between the 2nd and 3rd of Bob's facts: the first two are replayed from
    // their stored decisions, the late one and the two after it are decided again; Carol is untouched.
    await appendSourceRecords(db, id, "facts", [fact("Bob drinks coffee every morning", 4, "bob")]);
    const late = await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    expect(late.status).toBe("completed");
    const newDecisions = await db.record.findMany({ where: { pipelineId: id, step: "memories", runId: late.id } });
    const decided = newDecisions.filter((r) => memoryMetaOf(r as never));
    const factContents = await db.record.findMany({ where: { id: { in: decided.map((r) => memoryMetaOf(r as never)!.fact!) } } });
    expect(factContents.map((f) => f.content).sort()).toEqual(["Bob drinks coffee every morning", "Bob has a dog named Rex", "Bob likes hiking in the Alps"]);
    expect(decided.every((r) => r.scope === "bob")).toBe(true);
    // The coffee fact updated the tea memory; the earlier version stays in history.
    const active = (await pointed(id, "memories")).map((r) => r.content);
    expect(active).toContain("Bob drinks coffee every morning");
    expect(active).not.toContain("Bob drinks green tea every morning");
    expect(active).toContain("Carol studies marine biology");
    expect(active).toHaveLength(5);
  });

  it("facts without time go first (flagged); contradictory facts in one batch apply in time order and both stay in history", async () => {
    const id = await newPipeline();
    await appendSourceRecords(db, id, "facts", [
      fact("Dan owns a red bicycle", null, "dan"),
      fact("Dan's favourite colour is blue", 6, "dan"),
      fact("Dan's favourite colour is green", 6, "dan"),
    ]);
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    expect(run.status).toBe("completed");
    const events = await decisions(id);
    const untimed = events.find((e) => e.content === "Dan owns a red bicycle")!;
    expect(untimed).toMatchObject({ event: "ADD", untimed: true });
    // Same timestamp: ordered by content key, so one of them wins deterministically and the other is its previous version.
    const active = (await pointed(id, "memories")).map((r) => r.content);
    expect(active).toHaveLength(2);
    const colour = events.filter((e) => e.content.startsWith("Dan's favourite colour"));
    expect(colour.map((e) => e.event)).toEqual(["ADD", "UPDATE"]);
    expect(active).toContain(colour[1]!.content);
    expect(colour[1]!.previous).toBeTruthy();
  });
});

describe("consolidate with a model (mock OpenAI server)", () => {
  function model() {
    return new AiSdkModel(
      { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-test-consolidate", timeoutMs: 5000 },
      { retryBaseMs: 1, limiter: new ProviderLimiter({ maxConcurrency: 4 }) },
    );
  }

  it("uses the model's structured decision", async () => {
    const id = await newPipeline("mock/gpt-4o-mini");
    await appendSourceRecords(db, id, "facts", [fact("Eve keeps bees", 1, "eve"), fact("Eve keeps three hives of bees", 2, "eve")]);
    mock.reset();
    mock.enqueue({ kind: "ok", content: JSON.stringify({ event: "ADD", text: "Eve keeps bees" }) });
    const runs = await runPipeline(db, { workspaceId, pipelineId: id }, { model: model(), runOptions: FAST });
    expect(runs.status).toBe("completed");
    // The second answer is the mock's schema sample: ADD (the first allowed event).
    expect(mock.count("chat/completions")).toBe(2);
    const body = mock.requests[1]!.body as { response_format?: unknown };
    expect(JSON.stringify(body)).toMatch(/UPDATE/);
    expect(mock.requests[1]!.text).toContain("Eve keeps bees");
  });

  it("an unknown decision or malformed JSON is retried, then recorded as a failure with the raw response; nothing is lost", async () => {
    const id = await newPipeline("mock/gpt-4o-mini");
    await appendSourceRecords(db, id, "facts", [fact("Finn rows on Sundays", 1, "finn"), fact("Finn rows on Saturdays", 2, "finn"), fact("Finn owns a kayak", 3, "finn")]);
    mock.reset();
    mock.enqueue(
      { kind: "ok", content: JSON.stringify({ event: "ADD", text: "Finn rows on Sundays" }) },
      { kind: "ok", content: JSON.stringify({ event: "MERGE", memory_id: "x" }) },
      { kind: "malformed", content: "{\"event\": \"UPD" },
      { kind: "ok", content: JSON.stringify({ event: "MERGE" }) },
    );
    const failed = await runPipeline(db, { workspaceId, pipelineId: id }, { model: model(), runOptions: { ...FAST, maxAttempts: 3 } });
    expect(failed.status).toBe("completed_with_errors");
    const failures = await db.runFailure.findMany({ where: { runId: failed.id } });
    expect(failures).toHaveLength(1);
    expect(failures[0]!.error).toMatch(/unknown decision "MERGE"/);
    expect(failures[0]!.error).toMatch(/after 3 attempts/);
    expect(failures[0]!.rawResponse).toContain("MERGE");
    expect(failures[0]!.attempts).toBe(3);
    // The fact before the failure is consolidated and visible; the failed one and the one after wait.
    expect((await pointed(id, "memories")).map((r) => r.content)).toEqual(["Finn rows on Sundays"]);

    // The next run resumes at the failed fact: the first one is not asked again.
    mock.reset();
    const memories = await pointed(id, "memories");
    const memoryId = memoryMetaOf(memories[0] as never)!.id;
    mock.enqueue(
      { kind: "ok", content: JSON.stringify({ event: "UPDATE", memory_id: memoryId, text: "Finn rows on Saturdays" }) },
      { kind: "ok", content: JSON.stringify({ event: "ADD", text: "Finn owns a kayak" }) },
    );
    const resumed = await runPipeline(db, { workspaceId, pipelineId: id }, { model: model(), runOptions: FAST });
    expect(resumed.status).toBe("completed");
    expect(mock.count("chat/completions")).toBe(2);
    expect((await pointed(id, "memories")).map((r) => r.content)).toEqual(["Finn owns a kayak", "Finn rows on Saturdays"]);
  });
});
