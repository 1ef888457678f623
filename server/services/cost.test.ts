/**
 * Issue 14, item 4: the first plan of a pipeline (no run yet) estimates the later steps from the
 * inputs — aggregate groups from the source times, sizes from the upstream estimates — and shows a
 * range that holds the actual tokens of the run; once a run calibrates the steps, the range goes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb } from "../store/test-db";
import { planWithCost } from "./cost";
import type { Db } from "../core/db";
import type { SourceItem } from "../core/source-item";
import { templateSpec } from "../pipeline/templates";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "cost@example.com", password: "cost-password-1" }));
});
afterAll(async () => close());

const TOPICS = ["the garden and the tomatoes", "a trip to Lisbon", "the Rust rewrite of the billing service", "training for a half marathon", "the new apartment lease"];

/** A conversation of ~20 varied sentences, dated in one of `months` months of 2024. */
function conversation(i: number, months: number): SourceItem {
  const topic = TOPICS[i % TOPICS.length]!;
  const sentences = Array.from({ length: 20 }, (_, k) => `user: On day ${k + 1} we talked about ${topic}, detail ${i}-${k}: the plan changed because item ${k * 7 + i} mattered more than expected.`);
  const month = (i % months) + 1;
  return {
    externalId: `conv-${i}`,
    content: `# Conversation ${i}\n\n${sentences.join("\n")}`,
    metadata: { time: { created_at: `2024-${String(month).padStart(2, "0")}-${String((i % 27) + 1).padStart(2, "0")}T10:00:00Z` }, chat: { title: `Conversation ${i}` } },
  };
}

type Stats = { steps: Array<{ step: string; tokensIn: number; tokensOut: number; modelCalls?: number; output: number }> };

describe("first plan before any run", () => {
  it("counts aggregate groups from source times, sizes later steps from their inputs, and shows a range that holds the actual", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "cost-first-plan", spec: templateSpec("chat-memory") });
    await appendSourceRecords(db, pipeline.id, "chats", Array.from({ length: 30 }, (_, i) => conversation(i, 5)));

    const plan = await planWithCost(db, pipeline.id, "main");
    const step = (name: string) => plan.steps.find((s) => s.step === name)!;
    // 30 conversations over 5 months: 5 monthly groups, and the world model folds 5 reflections.
    expect(step("monthly")).toMatchObject({ pending: 5, total: 5, calls: 5 });
    expect(step("world-model").calls).toBe(5);
    expect(step("summaries").calls).toBe(30);
    for (const s of plan.steps.filter((x) => x.calls > 0)) {
      expect(s.basis).toBe("tokenizer");
      expect(s.estimatedTokensRange).not.toBeNull();
    }
    expect(plan.totals.estimatedTokensRange).not.toBeNull();

    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { afterRun: false });
    expect(run.status).toBe("completed");
    const actual = new Map((run.stats as Stats).steps.map((s) => [s.step, s]));
    for (const s of plan.steps.filter((x) => x.calls > 0)) {
      const a = actual.get(s.step)!;
      const tokens = a.tokensIn + a.tokensOut;
      const [low, high] = s.estimatedTokensRange!;
      expect({ step: s.step, tokens, inRange: tokens >= low && tokens <= high }).toEqual({ step: s.step, tokens, inRange: true });
      // The range is honest only if the point estimate is close: within 25% of what the offline
      // model actually read and wrote (its output ratios are known: a transcript writes all it reads).
      const estimate = s.estimatedTokensIn + s.estimatedTokensOut;
      expect({ step: s.step, error: Math.abs(estimate - tokens) / tokens < 0.25 }).toEqual({ step: s.step, error: true });
    }
    const [low, high] = plan.totals.estimatedTokensRange!;
    const total = [...actual.values()].reduce((n, a) => n + a.tokensIn + a.tokensOut, 0);
    expect(total).toBeGreaterThanOrEqual(low);
    expect(total).toBeLessThanOrEqual(high);

    // A month more: the plan is calibrated by the run (no range), and counts the new group.
    await appendSourceRecords(db, pipeline.id, "chats", Array.from({ length: 6 }, (_, i) => ({ ...conversation(100 + i, 1), metadata: { time: { created_at: "2024-09-15T10:00:00Z" } } })));
    const next = await planWithCost(db, pipeline.id, "main");
    const summaries = next.steps.find((s) => s.step === "summaries")!;
    expect(summaries.basis).toBe("calibrated");
    expect(summaries.estimatedTokensRange).toBeNull();
    expect(next.steps.find((s) => s.step === "monthly")!.pending).toBe(1);
  });
});
