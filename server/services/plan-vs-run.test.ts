/**
 * Issue #33 item 3 / #38 item 5: the plan shown before Run and the run agree, step by step. Over a
 * sequence of edits (first run, new sources, a prompt edit upstream, a prompt edit mid-pipeline,
 * an added step, a branch with its own edit), the plan's work items per step equal the items each
 * step of the following run found to compute; and once a run has calibrated a step, its token
 * estimate is within ±20% of what the next run of that step used, with its source shown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb } from "../store/test-db";
import { planWithCost, type PlanWithCost } from "./cost";
import type { Db } from "../core/db";
import type { SourceItem } from "../core/source-item";
import type { PipelineSpec } from "../pipeline/spec";
import { templateSpec } from "../pipeline/templates";
import { appendSourceRecords, createPipeline, getBranch, saveVersion } from "./pipelines";
import { createBranch } from "./branches";
import { runPipeline } from "./runs";
import { parseRunStats, type StepRunStats } from "../store/runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "plan-run@example.com", password: "plan-run-password-1" }));
});
afterAll(async () => close());

const TOPICS = ["the garden", "a trip to Lisbon", "the Rust rewrite", "a half marathon", "the new lease"];

function conversation(i: number, month: number): SourceItem {
  const topic = TOPICS[i % TOPICS.length]!;
  const lines = Array.from({ length: 8 }, (_, k) => `${k % 2 ? "assistant" : "user"}: About ${topic}, point ${i}-${k}: item ${k * 7 + i} mattered.`);
  return {
    externalId: `conv-${i}`,
    content: `# Conversation ${i}\n\n${lines.join("\n")}`,
    metadata: { time: { created_at: `2024-${String(month).padStart(2, "0")}-${String((i % 27) + 1).padStart(2, "0")}T10:00:00Z` }, chat: { title: `Conversation ${i}` } },
  };
}

async function editSpec(pipelineId: string, branch: string, edit: (spec: PipelineSpec) => void) {
  const { spec } = await getBranch(db, pipelineId, branch);
  const next = structuredClone(spec);
  edit(next);
  await saveVersion(db, pipelineId, { spec: next, branch, message: "edit" });
}

const setPrompt = (name: string, suffix: string) => (spec: PipelineSpec) => {
  const step = spec.steps.find((s) => s.name === name) as { prompt?: string };
  step.prompt = `${step.prompt ?? ""}\n${suffix}`;
};

/** Plan, run, and the per-step comparison of planned work items with what the run's steps found. */
async function planThenRun(pipelineId: string, branch: string) {
  const plan = await planWithCost(db, pipelineId, branch);
  const run = await runPipeline(db, { workspaceId, pipelineId, branch }, { afterRun: false });
  expect(run.status).toBe("completed");
  const ran = new Map(parseRunStats(run).steps.map((s) => [s.step, s]));
  const planned = plan.steps.map((s) => ({ step: s.step, items: s.pending }));
  const actual = plan.steps.map((s) => ({ step: s.step, items: ran.get(s.step)?.items ?? -1 }));
  return { plan, ran, planned, actual };
}

/** Within ±20% for every model step the plan calibrated from an earlier run. */
function calibratedWithin(plan: PlanWithCost, ran: Map<string, StepRunStats>) {
  const off: string[] = [];
  for (const s of plan.steps.filter((x) => x.calls > 0 && x.basis.startsWith("calibrated"))) {
    const a = ran.get(s.step)!;
    const used = a.tokensIn + a.tokensOut;
    const est = s.estimatedTokensIn + s.estimatedTokensOut;
    if (used > 0 && Math.abs(est - used) / used > 0.2) off.push(`${s.step}: estimated ${est}, used ${used}`);
  }
  return off;
}

describe("plan versus run", () => {
  it("agree per step across edits: first run, new sources, prompt edits, an added step, a branch", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "plan-vs-run", spec: templateSpec("chat-memory") });
    const pid = pipeline.id;
    await appendSourceRecords(db, pid, "chats", Array.from({ length: 12 }, (_, i) => conversation(i, (i % 3) + 1)));

    const scenarios: Array<{ name: string; branch?: string; before: () => Promise<void> }> = [
      { name: "first run", before: async () => {} },
      { name: "nothing changed", before: async () => {} },
      { name: "new sources in a new month", before: () => appendSourceRecords(db, pid, "chats", Array.from({ length: 4 }, (_, i) => conversation(40 + i, 5))).then(() => {}) },
      { name: "prompt edit upstream (summaries)", before: () => editSpec(pid, "main", setPrompt("summaries", "Mention the people by name.")) },
      { name: "prompt edit mid-pipeline (monthly)", before: () => editSpec(pid, "main", setPrompt("monthly", "Be brief.")) },
      {
        name: "added step",
        before: () =>
          editSpec(pid, "main", (spec) => {
            spec.steps.push({ name: "titles", type: "transform", from: "summaries", prompt: "Give this summary a title.\n\n{{ record.content }}" } as PipelineSpec["steps"][number]);
          }),
      },
      {
        name: "branch with its own prompt edit",
        branch: "experiment",
        before: async () => {
          await createBranch(db, pid, { name: "experiment" });
          await editSpec(pid, "experiment", setPrompt("transcripts", "Keep timestamps."));
        },
      },
      { name: "sources added after branching, run on the branch", branch: "experiment", before: () => appendSourceRecords(db, pid, "chats", Array.from({ length: 3 }, (_, i) => conversation(60 + i, 2))).then(() => {}) },
    ];
    const report: string[] = [];
    const mismatches: string[] = [];
    for (const sc of scenarios) {
      await sc.before();
      const { plan, ran, planned, actual } = await planThenRun(pid, sc.branch ?? "main");
      planned.forEach((p, i) => {
        if (p.items !== actual[i]!.items) mismatches.push(`${sc.name}: ${p.step} planned ${p.items}, the run found ${actual[i]!.items}`);
      });
      for (const off of calibratedWithin(plan, ran)) mismatches.push(`${sc.name}: ${off}`);
      report.push(`${sc.name}: ${planned.map((p) => `${p.step} ${p.items}`).join(", ")}`);
    }
    console.log(report.join("\n"));
    expect(mismatches).toEqual([]);
    // The scenarios did real work (not a run of zeros that trivially agrees).
    expect(report.join("\n")).toMatch(/first run: transcripts 12, summaries 12, monthly 3/);
  }, 300_000);
});
