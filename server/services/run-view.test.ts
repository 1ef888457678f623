/**
 * Issue #33 item 2: the Run row lists every selected step from the moment the run starts (queued),
 * shows each step's state as it goes, and says the truth at the end: a step whose work items all
 * failed is failed (not a green "completed"), and a step downstream of it that got nothing to read
 * is skipped, with why. The model is a fake that fails every summaries call (the only fake here).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { ModelError, type ModelProvider, type ModelRequest } from "../engine/model";
import { OfflineModel } from "../llm/offline-model";
import { startMockOpenAIServer } from "../llm/testing/mock-openai-server";
import { workspaceModel } from "../llm/workspace-model";
import { Pipeline } from "../pipeline/sdk";
import { parseRunStats, type StepRunStats } from "../store/runs";
import { createTestDb } from "../store/test-db";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { upsertProvider } from "./providers";
import { runPipeline } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "run-view@example.com", password: "run-view-password-1" }));
});
afterAll(async () => close());

const spec = new Pipeline("run-view", { agent: "test" })
  .source("chats", { format: "jsonl" })
  .transform("summaries", { from: "chats", prompt: "Summarize:\n{{ record.content }}" })
  .aggregate("weekly", { from: "summaries", groupBy: { period: "week" }, prompt: "Reflect:\n{% for r in records %}{{ r.content }}\n{% endfor %}" })
  .transform("facts", { from: "chats", prompt: "Facts:\n{{ record.content }}" })
  .toSpec();

/** Offline answers, except that every summaries call fails as an item failure. */
class FailingSummaries implements ModelProvider {
  private readonly offline = new OfflineModel();
  complete(request: ModelRequest) {
    if (request.prompt?.startsWith("Summarize:")) return Promise.reject(new ModelError("the provider returned no text"));
    return this.offline.complete(request);
  }
}

describe("the live run view", () => {
  it("lists every step from the start; all items failed is failed; downstream with nothing to read is skipped with why", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "run-view", spec });
    await appendSourceRecords(
      db,
      pipeline.id,
      "chats",
      Array.from({ length: 6 }, (_, i) => ({ externalId: `c-${i}`, content: `conversation ${i} about tea number ${i}`, metadata: { time: { created_at: `2024-03-0${i + 1}T10:00:00Z` } } })),
    );
    // What the Run row said while the run went: polled at every engine event.
    const seen: StepRunStats[][] = [];
    const snapshot = async () => {
      const row = await db.run.findFirst({ where: { pipelineId: pipeline.id }, orderBy: { createdAt: "desc" } });
      if (row) seen.push(parseRunStats(row).steps);
    };
    const events: Promise<void>[] = [];
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model: new FailingSummaries(), afterRun: false, onEvent: (e) => void (e.type === "step-started" && events.push(snapshot())) });
    await Promise.all(events);

    // From the first step on, the row lists every step; those not started are queued (pending).
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]!.map((s) => s.step)).toEqual(["summaries", "weekly", "facts"]);
    expect(seen[0]!.map((s) => s.status)).toEqual(["pending", "pending", "pending"]);

    const steps = new Map(parseRunStats(run).steps.map((s) => [s.step, s]));
    expect(run.status).toBe("completed_with_errors");
    expect(steps.get("summaries")).toMatchObject({ status: "failed", items: 6, errors: 6, output: 0, reason: "All 6 work items failed." });
    expect(steps.get("weekly")).toMatchObject({ status: "skipped", items: 0, reason: "Nothing new to read: summaries failed." });
    expect(steps.get("facts")).toMatchObject({ status: "completed", items: 6, errors: 0, output: 6 });
  }, 120_000);
});

/** Every model call fails (an item failure each time). */
class FailingAll implements ModelProvider {
  complete() {
    return Promise.reject(new ModelError("the provider returned no text"));
  }
}

describe("a run's end status (issue #48 item 3)", () => {
  it("a run in which every model call failed is failed with the reason, not completed with errors", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "run-all-fail", spec });
    await appendSourceRecords(db, pipeline.id, "chats", Array.from({ length: 4 }, (_, i) => ({ externalId: `f-${i}`, content: `conversation ${i}`, metadata: { time: { created_at: `2024-03-0${i + 1}T10:00:00Z` } } })));
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model: new FailingAll(), afterRun: false, runOptions: { retryBaseMs: 1, maxAttempts: 1 } });
    expect(run.status).toBe("failed");
    expect(run.error).toBe("Every work item failed (summaries 4 of 4, facts 4 of 4): nothing was computed. The run's failures list each item's error.");
    const steps = new Map(parseRunStats(run).steps.map((s) => [s.step, s]));
    expect(steps.get("summaries")).toMatchObject({ status: "failed", errors: 4, output: 0 });
    expect(steps.get("facts")).toMatchObject({ status: "failed", errors: 4, output: 0 });
    expect(steps.get("weekly")?.status).toBe("skipped");
    expect(await db.runFailure.count({ where: { runId: run.id } })).toBe(8);
  }, 120_000);
});

/**
 * The slow fake LLM: the mock OpenAI-compatible server answering after 300 ms, reached through the
 * workspace's real provider resolver. Before each call it reads the Run row (as the run view's poll
 * would), so what the row says is seen while that step's model calls are in flight.
 */
class WatchedSlowModel implements ModelProvider {
  seen: Array<{ step: string; statuses: Record<string, string> }> = [];
  constructor(
    private readonly inner: ModelProvider,
    private readonly pipelineId: string,
  ) {}
  async complete(request: ModelRequest) {
    const row = await db.run.findFirstOrThrow({ where: { pipelineId: this.pipelineId }, orderBy: { createdAt: "desc" } });
    const step = request.prompt?.startsWith("Facts:") ? "facts" : "summaries";
    this.seen.push({ step, statuses: Object.fromEntries(parseRunStats(row).steps.map((s) => [s.step, s.status])) });
    return this.inner.complete(request);
  }
}

describe("the step at work (issue #48 item 2)", () => {
  it("shows as running while its model calls are in flight; steps after it stay queued; then completed", async () => {
    process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-run-view";
    const mock = await startMockOpenAIServer({ latencyMs: 300 });
    try {
      await upsertProvider(db, workspaceId, { name: "slow", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-test", timeoutMs: 10_000, maxConcurrency: 2 });
      const slowSpec = new Pipeline("run-slow", { agent: "test" })
        .source("chats", { format: "jsonl" })
        .transform("summaries", { from: "chats", prompt: "Summarize:\n{{ record.content }}", model: "slow/gpt-4o-mini" })
        .transform("facts", { from: "summaries", prompt: "Facts:\n{{ record.content }}", model: "slow/gpt-4o-mini" })
        .toSpec();
      const { pipeline } = await createPipeline(db, workspaceId, { name: "run-slow", spec: slowSpec });
      await appendSourceRecords(db, pipeline.id, "chats", Array.from({ length: 3 }, (_, i) => ({ externalId: `s-${i}`, content: `slow conversation ${i}`, metadata: {} })));
      const model = new WatchedSlowModel(workspaceModel(db, workspaceId), pipeline.id);
      const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model, afterRun: false });

      expect(run.status).toBe("completed");
      expect(mock.count("chat/completions")).toBe(6);
      const during = (step: string) => model.seen.filter((s) => s.step === step).map((s) => s.statuses);
      expect(during("summaries")).toHaveLength(3);
      for (const statuses of during("summaries")) expect(statuses).toEqual({ summaries: "running", facts: "pending" });
      expect(during("facts")).toHaveLength(3);
      for (const statuses of during("facts")) expect(statuses).toEqual({ summaries: "completed", facts: "running" });
      expect(parseRunStats(run).steps.map((s) => s.status)).toEqual(["completed", "completed"]);
    } finally {
      await mock.close();
    }
  }, 120_000);
});
