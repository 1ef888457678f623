import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptedModel } from "../llm/fake-model";
import { Pipeline } from "../pipeline/sdk";
import type { PipelineSpec } from "../pipeline/spec";
import type { Db } from "../core/db";
import { appendSourceRecords, createPipeline, getBranch, saveVersion } from "../services/pipelines";
import { createBranch } from "../services/branches";
import type { SourceItem } from "../core/source-item";
import { planPipeline, runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { PostgresRecordStore } from "../store/record-store";
import { createTestDb } from "../store/test-db";
import { ModelError } from "./model";
import { executeRun } from "./runner";
import type { RecordStore } from "./types";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let n = 0;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { workspace } = await signUp(db, { email: "engine@example.com", password: "engine-password" });
  workspaceId = workspace.id;
});
afterAll(async () => close());

const FAST = { retryBaseMs: 1 };

function chatSpec(summaryPrompt = "Summarize: {{ record.content }}"): PipelineSpec {
  return new Pipeline("chat", { agent: "test" })
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", prompt: summaryPrompt })
    .aggregate("monthly", { from: "summaries", period: "month", prompt: "Month {{ group.key }}: {% for r in records %}{{ r.content }}{% endfor %}" })
    .fold("world", { from: "monthly", prompt: "State: {{ state }} New: {{ record.content }}", checkpointEvery: 2 })
    .output("context", { from: "world", surface: "projection" })
    .toSpec();
}

function conversation(i: number, month: string, extra = ""): SourceItem {
  return {
    externalId: `conv-${i}`,
    content: `Conversation ${i} about topic ${i % 3}. The user asked question number ${i}. ${extra}`.trim(),
    metadata: { time: { created_at: `${month}-${String((i % 27) + 1).padStart(2, "0")}T10:00:00Z` }, chat: { conversation_id: `conv-${i}` } },
  };
}

async function newPipeline(spec: PipelineSpec) {
  n += 1;
  const created = await createPipeline(db, workspaceId, { name: `p${n}`, spec });
  return created.pipeline.id;
}

async function pointed(pipelineId: string, step: string, branch = "main") {
  const { branch: b } = await getBranch(db, pipelineId, branch);
  const pointers = await db.branchPointer.findMany({ where: { branchId: b.id, step } });
  const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } } });
  return records.sort((a, b) => a.materializationKey.localeCompare(b.materializationKey));
}

function statsOf(run: { stats: unknown }, step: string) {
  return (run.stats as { steps: Array<{ step: string; modelCalls: number; input: number; output: number; errors: number; skipped: number }> }).steps.find(
    (s) => s.step === step,
  )!;
}

describe("transform", () => {
  it("is strictly 1:1 and inherits scope and time", async () => {
    const id = await newPipeline(chatSpec());
    await appendSourceRecords(db, id, "chats", [0, 1, 2].map((i) => ({ ...conversation(i, "2024-01"), scope: "acme:eng" })));
    const model = new ScriptedModel();
    const run = await runPipeline(db, { workspaceId, pipelineId: id, options: { steps: ["summaries"] } }, { model, runOptions: FAST });
    expect(run.status).toBe("completed");
    const summaries = await pointed(id, "summaries");
    expect(summaries).toHaveLength(3);
    expect(model.calls).toHaveLength(3);
    for (const s of summaries) {
      expect(s.scope).toBe("acme:eng");
      const edges = await db.recordEdge.findMany({ where: { childId: s.id } });
      expect(edges).toHaveLength(1);
      expect((s.metadata as { time: { created_at: string } }).time.created_at).toMatch(/^2024-01/);
      expect(s.audit).toMatchObject({ model: "offline/extractive", temperature: 0 });
      // The prompt as sent is kept, readable on the record page (issue 33 item 4).
      expect(model.calls.map((c) => c.prompt)).toContain((s.audit as { renderedPrompt: string }).renderedPrompt);
    }
  });
});

describe("incrementality", () => {
  it("re-running unchanged makes zero model calls; a new source record costs one transform", async () => {
    const id = await newPipeline(chatSpec());
    await appendSourceRecords(db, id, "chats", [0, 1, 2, 3].map((i) => conversation(i, "2024-01")));
    await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    const again = new ScriptedModel();
    const second = await runPipeline(db, { workspaceId, pipelineId: id }, { model: again, runOptions: FAST });
    expect(again.calls).toHaveLength(0);
    expect(statsOf(second, "summaries").skipped).toBe(4);
    const plan = await planPipeline(db, id);
    expect(plan.every((p) => p.pending === 0)).toBe(true);

    // Re-importing the same records adds nothing.
    expect((await appendSourceRecords(db, id, "chats", [conversation(0, "2024-01")])).added).toBe(0);
    await appendSourceRecords(db, id, "chats", [conversation(4, "2024-02")]);
    const third = new ScriptedModel();
    await runPipeline(db, { workspaceId, pipelineId: id }, { model: third, runOptions: FAST });
    const byTask = third.calls.map((c) => c.task);
    expect(byTask.filter((t) => t === "summarize")).toHaveLength(2); // one summary + the new month
    expect(await pointed(id, "monthly")).toHaveLength(2);
  });

  it("changing a template re-runs that step and everything downstream, nothing upstream", async () => {
    const spec = new Pipeline("chain", {})
      .source("chats", { format: "jsonl" })
      .transform("clean", { from: "chats", prompt: "Clean {{ record.content }}" })
      .transform("summaries", { from: "clean", prompt: "Summarize {{ record.content }}" })
      .aggregate("monthly", { from: "summaries", period: "month", prompt: "{% for r in records %}{{ r.content }}{% endfor %}" })
      .toSpec();
    const id = await newPipeline(spec);
    await appendSourceRecords(db, id, "chats", [0, 1, 2].map((i) => conversation(i, "2024-03")));
    await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    const changed = structuredClone(spec);
    const summaries = changed.steps.find((s) => s.name === "summaries")! as { prompt?: string };
    summaries.prompt = "Summarize briefly: {{ record.content }}";
    const { diff } = await saveVersion(db, id, { spec: changed, message: "shorter summaries" });
    expect(diff.invalidated.sort()).toEqual(["monthly", "summaries"]);
    const plan = await planPipeline(db, id);
    expect(plan.find((p) => p.step === "clean")!.pending).toBe(0);
    expect(plan.find((p) => p.step === "summaries")!.pending).toBe(3);
    expect(plan.find((p) => p.step === "monthly")!.pending).toBeGreaterThan(0);
    const model = new ScriptedModel();
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { model, runOptions: FAST });
    expect(statsOf(run, "clean").modelCalls).toBe(0);
    expect(statsOf(run, "summaries").modelCalls).toBe(3);
    expect(statsOf(run, "monthly").modelCalls).toBe(1);
    expect(await pointed(id, "summaries")).toHaveLength(3);
  });
});

describe("branches", () => {
  it("a branch created from main and run unchanged makes zero model calls; a changed branch leaves main alone", async () => {
    const id = await newPipeline(chatSpec());
    await appendSourceRecords(db, id, "chats", [0, 1, 2, 3, 4].map((i) => conversation(i, i < 3 ? "2024-01" : "2024-02")));
    await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    const recordsBefore = await db.record.count({ where: { pipelineId: id } });
    await createBranch(db, id, { name: "experiment" });
    expect(await db.record.count({ where: { pipelineId: id } })).toBe(recordsBefore);
    const model = new ScriptedModel();
    await runPipeline(db, { workspaceId, pipelineId: id, branch: "experiment" }, { model, runOptions: FAST });
    expect(model.calls).toHaveLength(0);

    const mainWorld = await pointed(id, "world");
    await saveVersion(db, id, { spec: chatSpec("Different: {{ record.content }}"), branch: "experiment" });
    const model2 = new ScriptedModel();
    await runPipeline(db, { workspaceId, pipelineId: id, branch: "experiment" }, { model: model2, runOptions: FAST });
    expect(model2.calls.length).toBeGreaterThan(0);
    expect((await pointed(id, "world")).map((r) => r.id)).toEqual(mainWorld.map((r) => r.id));
    expect((await pointed(id, "summaries", "experiment")).map((r) => r.id)).not.toEqual((await pointed(id, "summaries")).map((r) => r.id));
  });
});

describe("aggregate and fold", () => {
  it("a late record for a closed month replaces that month; the fold resumes from the nearest valid checkpoint", async () => {
    const id = await newPipeline(chatSpec());
    const months = ["2024-01", "2024-02", "2024-03", "2024-04", "2024-05", "2024-06"];
    await appendSourceRecords(db, id, "chats", months.map((m, i) => conversation(i, m)));
    await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    const monthlyBefore = await pointed(id, "monthly");
    expect(monthlyBefore).toHaveLength(6);
    const worldBefore = await pointed(id, "world");
    expect(worldBefore).toHaveLength(1);
    expect((await db.recordEdge.findMany({ where: { childId: worldBefore[0]!.id } })).length).toBe(6);

    // A late conversation for May (month 5 of 6): checkpoints every 2 → resume from position 4.
    await appendSourceRecords(db, id, "chats", [conversation(99, "2024-05", "A late arrival about budgets.")]);
    const model = new ScriptedModel();
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { model, runOptions: FAST });
    const monthlyAfter = await pointed(id, "monthly");
    expect(monthlyAfter).toHaveLength(6);
    const may = (rs: typeof monthlyAfter) => rs.find((r) => (r.metadata as { time: { period: string } }).time.period === "2024-05")!;
    expect(may(monthlyAfter).id).not.toBe(may(monthlyBefore).id);
    expect(await db.recordEdge.count({ where: { childId: may(monthlyAfter).id } })).toBe(2);
    expect(may(monthlyAfter).content).toContain("question number 99");
    expect(monthlyAfter.filter((r) => r.id !== may(monthlyAfter).id).map((r) => r.id).sort()).toEqual(
      monthlyBefore.filter((r) => r.id !== may(monthlyBefore).id).map((r) => r.id).sort(),
    );
    const foldCalls = model.calls.filter((c) => c.task === "fold");
    expect(foldCalls).toHaveLength(2); // months 5 and 6, not all 6
    expect(statsOf(run, "world").input).toBe(2);
    const worldAfter = await pointed(id, "world");
    expect(worldAfter[0]!.id).not.toBe(worldBefore[0]!.id);
    expect(worldAfter[0]!.audit).toMatchObject({ resumedFrom: 4 });
  });

  it("folds in order of the order key", async () => {
    const spec = new Pipeline("ordered", {})
      .source("events", { format: "jsonl" })
      .fold("story", { from: "events", prompt: "{{ state }}|{{ record.content }}", checkpointEvery: 10 })
      .toSpec();
    const id = await newPipeline(spec);
    await appendSourceRecords(db, id, "events", [
      { externalId: "c", content: "third", metadata: { time: { created_at: "2024-03-01T00:00:00Z" } } },
      { externalId: "a", content: "first", metadata: { time: { created_at: "2024-01-01T00:00:00Z" } } },
      { externalId: "b", content: "second", metadata: { time: { created_at: "2024-02-01T00:00:00Z" } } },
    ]);
    const model = new ScriptedModel();
    await runPipeline(db, { workspaceId, pipelineId: id }, { model, runOptions: FAST });
    expect(model.calls.map((c) => c.inputs[0]!.content)).toEqual(["first", "second", "third"]);
    // Each call sees the state the previous one produced.
    expect(model.calls[1]!.state).toContain("first");
    expect(model.calls[2]!.state).toContain("second");
  });

  it("aggregates per scope and by count window", async () => {
    const spec = new Pipeline("tiers", {})
      .source("obs", { format: "jsonl" })
      .aggregate("tier1", { from: "obs", every: 3, operator: { kind: "extractive-summary", sentences: 2 } })
      .toSpec();
    const id = await newPipeline(spec);
    const items = Array.from({ length: 7 }, (_, i) => ({
      externalId: `o${i}`,
      content: `Observation ${i}. It is about item ${i}.`,
      scope: i % 2 ? "team:a" : "team:b",
      metadata: { time: { created_at: `2024-01-0${i + 1}T00:00:00Z` } },
    }));
    await appendSourceRecords(db, id, "obs", items);
    await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    const tiers = await pointed(id, "tier1");
    // team:a has 3 (one window), team:b has 4 (a full window and a partial one).
    expect(tiers.map((t) => t.scope).sort()).toEqual(["team:a", "team:b", "team:b"]);
    for (const t of tiers) {
      const parents = await db.record.findMany({ where: { id: { in: (await db.recordEdge.findMany({ where: { childId: t.id } })).map((e) => e.parentId) } } });
      expect(parents.every((p) => p.scope === t.scope)).toBe(true);
    }
  });
});

describe("merge", () => {
  async function mergePipeline(dedupe: unknown, conflict: string) {
    const spec = new Pipeline("m", {})
      .source("chatgpt", { format: "chatgpt-export" })
      .source("claude", { format: "claude-export" })
      .merge("unified", { from: ["chatgpt", "claude"], dedupe: dedupe as "content_hash", conflict: conflict as "prefer_latest" })
      .toSpec();
    const id = await newPipeline(spec);
    await appendSourceRecords(db, id, "chatgpt", [
      { externalId: "x", content: "Same text", metadata: { time: { created_at: "2024-01-01T00:00:00Z" }, chat: { conversation_id: "c1" } } },
      { externalId: "y", content: "Only in chatgpt", metadata: { time: { created_at: "2024-01-02T00:00:00Z" }, chat: { conversation_id: "c2" } } },
    ]);
    await appendSourceRecords(db, id, "claude", [
      { externalId: "x2", content: "Same text", metadata: { time: { created_at: "2024-02-01T00:00:00Z" }, chat: { conversation_id: "c3" } } },
      { externalId: "z", content: "c2 in claude, edited", metadata: { time: { created_at: "2024-03-01T00:00:00Z" }, chat: { conversation_id: "c2" } } },
    ]);
    const model = new ScriptedModel();
    await runPipeline(db, { workspaceId, pipelineId: id }, { model, runOptions: FAST });
    expect(model.calls).toHaveLength(0);
    return pointed(id, "unified");
  }
  const sourceOf = (r: { metadata: unknown }) => (r.metadata as { source: { type: string } }).source.type;

  it("content_hash + prefer_latest keeps one copy, the latest", async () => {
    const out = await mergePipeline("content_hash", "prefer_latest");
    expect(out).toHaveLength(3);
    const same = out.filter((r) => r.content === "Same text");
    expect(same).toHaveLength(1);
    expect(sourceOf(same[0]!)).toBe("claude-export");
    expect((await db.recordEdge.findMany({ where: { childId: same[0]!.id } })).length).toBe(2);
  });
  it("content_hash + prefer_first keeps the first source's copy", async () => {
    const out = await mergePipeline("content_hash", "prefer_first");
    expect(sourceOf(out.find((r) => r.content === "Same text")!)).toBe("chatgpt-export");
  });
  it("metadataMatch dedupes on the named fields", async () => {
    const out = await mergePipeline({ metadataMatch: ["chat.conversation_id"] }, "prefer_latest");
    expect(out.map((r) => r.content).sort()).toEqual(["Same text", "Same text", "c2 in claude, edited"]);
  });
  it("keep_all emits every record", async () => {
    expect(await mergePipeline("content_hash", "keep_all")).toHaveLength(4);
  });
});

describe("faults", () => {
  it("a model error on one record fails that item; the run goes on and ends completed_with_errors", async () => {
    const id = await newPipeline(chatSpec());
    await appendSourceRecords(db, id, "chats", [0, 1, 2, 3].map((i) => conversation(i, "2024-01")));
    const model = new ScriptedModel();
    model.failWhen(
      (req) => req.inputs.some((r) => r.content.includes("question number 2")),
      () => new ModelError("provider refused", { raw: '{"error":"refused"}' }),
    );
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { model, runOptions: FAST });
    expect(run.status).toBe("completed_with_errors");
    expect(statsOf(run, "summaries")).toMatchObject({ errors: 1, output: 3 });
    const failures = await db.runFailure.findMany({ where: { runId: run.id } });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ step: "summaries", error: "provider refused", rawResponse: '{"error":"refused"}' });
    // Retrying later (model fixed) fills exactly the gap.
    const fixed = new ScriptedModel();
    await runPipeline(db, { workspaceId, pipelineId: id }, { model: fixed, runOptions: FAST });
    expect(fixed.calls.filter((c) => c.task === "summarize" && c.inputs.length === 1)).toHaveLength(1);
    expect(await pointed(id, "summaries")).toHaveLength(4);
  });

  it("transient errors are retried with backoff", async () => {
    const id = await newPipeline(chatSpec());
    await appendSourceRecords(db, id, "chats", [conversation(0, "2024-01")]);
    const model = new ScriptedModel();
    model.failTimes(2);
    const run = await runPipeline(db, { workspaceId, pipelineId: id, options: { steps: ["summaries"] } }, { model, runOptions: FAST });
    expect(run.status).toBe("completed");
    expect(statsOf(run, "summaries")).toMatchObject({ errors: 0, output: 1 });
  });

  it("a crash at random points, then a re-run, gives exactly the records of an uninterrupted run", async () => {
    const items = Array.from({ length: 30 }, (_, i) => conversation(i, `2024-0${(i % 4) + 1}`));
    const reference = await newPipeline(chatSpec());
    await appendSourceRecords(db, reference, "chats", items);
    await runPipeline(db, { workspaceId, pipelineId: reference }, { runOptions: { ...FAST, batchSize: 4 } });
    const expected = async (id: string) =>
      Object.fromEntries(
        await Promise.all(["summaries", "monthly", "world"].map(async (s) => [s, (await pointed(id, s)).map((r) => r.content).sort()])),
      );
    const want = await expected(reference);

    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 4; trial++) {
      const id = await newPipeline(chatSpec());
      await appendSourceRecords(db, id, "chats", items);
      const { branch, version } = await getBranch(db, id);
      let crashes = 0;
      for (let attempt = 0; attempt < 20; attempt++) {
        const crashAt = 1 + Math.floor(random() * 40);
        let calls = 0;
        const real = new PostgresRecordStore(db);
        const crashing = new Proxy(real, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver);
            if (typeof value !== "function") return value;
            return (...args: unknown[]) => {
              calls += 1;
              if (calls === crashAt) throw new Error("simulated crash");
              return value.apply(target, args);
            };
          },
        }) as RecordStore;
        const run = await db.run.create({
          data: { workspaceId, pipelineId: id, branchId: branch.id, versionId: version.id, status: "running" },
        });
        const result = await executeRun(
          { store: crashing, model: new ScriptedModel(), workspaceId, pipelineId: id, branchId: branch.id, runId: run.id, spec: version.spec as never },
          { ...FAST, batchSize: 4 },
        );
        await db.run.update({ where: { id: run.id }, data: { status: result.status } });
        if (result.status === "completed") break;
        crashes += 1;
      }
      expect(crashes).toBeGreaterThan(0);
      expect(await expected(id)).toEqual(want);
      const dupes = await db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM (SELECT "workKey" FROM "Record" WHERE "pipelineId" = $1 AND step = 'summaries' GROUP BY "workKey" HAVING count(*) > 1) d`,
        id,
      );
      expect(dupes[0]!.n).toBe(0);
    }
  });
});

describe("cancellation", () => {
  it("a cancel request stops the run at the next batch and leaves what was committed", async () => {
    const id = await newPipeline(chatSpec());
    await appendSourceRecords(db, id, "chats", Array.from({ length: 12 }, (_, i) => conversation(i, "2024-01")));
    const { createRun, executeRunRow, cancelRun } = await import("../services/runs");
    const run = await createRun(db, { workspaceId, pipelineId: id });
    const model = new ScriptedModel();
    let cancelled = false;
    const cancelling = {
      async complete(request: Parameters<ScriptedModel["complete"]>[0]) {
        if (!cancelled) {
          cancelled = true;
          await cancelRun(db, workspaceId, run.id);
        }
        return model.complete(request);
      },
    };
    const finished = await executeRunRow(db, run.id, { model: cancelling, runOptions: { ...FAST, batchSize: 4, concurrency: 1 } });
    expect(finished.status).toBe("cancelled");
    expect(model.calls.length).toBe(4); // the batch in flight finishes, nothing after it starts
    expect(await pointed(id, "summaries")).toHaveLength(4);
    expect(await pointed(id, "monthly")).toHaveLength(0);
  });
});

describe("full rebuild", () => {
  it("recomputes every item with new records; other branches keep theirs", async () => {
    const id = await newPipeline(chatSpec());
    await appendSourceRecords(db, id, "chats", [0, 1].map((i) => conversation(i, "2024-01")));
    await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    await createBranch(db, id, { name: "keep" });
    const before = (await pointed(id, "summaries")).map((r) => r.id);
    const model = new ScriptedModel();
    await runPipeline(db, { workspaceId, pipelineId: id, options: { full: true, steps: ["summaries"] } }, { model, runOptions: FAST });
    expect(model.calls).toHaveLength(2);
    const after = (await pointed(id, "summaries")).map((r) => r.id);
    expect(after.some((a) => before.includes(a))).toBe(false);
    expect((await pointed(id, "summaries", "keep")).map((r) => r.id).sort()).toEqual([...before].sort());
  });
});
