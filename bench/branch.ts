/**
 * npm run bench:branch — what branching costs, on the embedded database with the offline model.
 * Prints numbers; asserts nothing.
 *
 *   1. create: a branch of a pipeline whose main shows N records (default 100,000), timed
 *      (one INSERT…SELECT of pointers), three times; then delete.
 *   2. run on a branch with one changed step, on a chats → summaries → monthly → world pipeline
 *      of M conversations (default 2,000): model calls, tokens and time per step, against main's
 *      full run; and an unchanged branch's run.
 *
 * Usage: npm run bench:branch -- [N] [M]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SourceItem } from "../server/core/source-item";
import { ScriptedModel } from "../server/llm/fake-model";
import { Pipeline } from "../server/pipeline/sdk";
import { createBranch, deleteBranch } from "../server/services/branches";
import { appendSourceRecords, createPipeline, saveVersion } from "../server/services/pipelines";
import { planPipeline, runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";

const [records = 100_000, conversations = 2_000] = process.argv.slice(2).map(Number).filter(Boolean);
const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-bench-branch-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const TOPICS = ["the garden", "a trip to Lisbon", "the billing rewrite", "marathon training", "the apartment lease", "a book club"];

function items(from: number, count: number): SourceItem[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const topic = TOPICS[i % TOPICS.length]!;
    return {
      externalId: `c${i}`,
      content: `user: Let's talk about ${topic} again, item ${i}.\nassistant: Sure. Last time we decided to revisit ${topic} in week ${i % 52}. The open question was budget line ${i % 17}.`,
      metadata: { time: { created_at: new Date(Date.UTC(2024, 0, 1) + i * 21_600_000).toISOString() } },
    };
  });
}

function spec(summaryPrompt: string) {
  return new Pipeline("bench-branch", {})
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", prompt: summaryPrompt })
    .aggregate("monthly", { from: "summaries", period: "month", prompt: "{% for r in records %}{{ r.content }}\n{% endfor %}" })
    .fold("world", { from: "monthly", prompt: "{{ state }}\n---\n{{ record.content }}" })
    .toSpec();
}

type Stats = { steps: Array<{ step: string; output: number; skipped: number; modelCalls: number; tokensIn: number; tokensOut: number }> };

function describeRun(label: string, run: { stats: unknown }, seconds: number) {
  const steps = (run.stats as Stats).steps;
  const calls = steps.reduce((n, s) => n + s.modelCalls, 0);
  const tokens = steps.reduce((n, s) => n + s.tokensIn + s.tokensOut, 0);
  console.log(`  ${label}: ${calls} model calls, ${tokens.toLocaleString("en-US")} tokens, ${seconds.toFixed(1)} s`);
  for (const s of steps) console.log(`    ${s.step.padEnd(10)} ${String(s.modelCalls).padStart(6)} calls  ${String(s.output).padStart(6)} made  ${String(s.skipped).padStart(6)} reused`);
  return { calls, tokens, seconds };
}

async function main() {
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const db = await openMigratedDb();
  const { workspace } = await signUp(db, { email: "bench-branch@example.com", password: "bench-password" });

  // 1. Branch creation at N records.
  const big = await createPipeline(db, workspace.id, { name: "bench-branch-create", spec: new Pipeline("x", {}).source("chats", { format: "jsonl" }).toSpec() });
  let t = performance.now();
  for (let i = 0; i < records; i += 5000) await appendSourceRecords(db, big.pipeline.id, "chats", items(i, Math.min(5000, records - i)));
  console.log(`branch create with ${records.toLocaleString("en-US")} records on main (import took ${((performance.now() - t) / 1000).toFixed(1)} s):`);
  await db.$executeRawUnsafe("ANALYZE");
  for (const name of ["b1", "b2", "b3"]) {
    t = performance.now();
    const created = await createBranch(db, big.pipeline.id, { name });
    const ms = performance.now() - t;
    console.log(`  create ${name}: ${ms.toFixed(0)} ms (${created.recordsShared.toLocaleString("en-US")} pointers copied, ${created.recordsComputed} records computed)`);
  }
  const recordRows = await db.record.count({ where: { pipelineId: big.pipeline.id } });
  console.log(`  records in the store after 3 branches: ${recordRows.toLocaleString("en-US")} (unchanged)`);
  t = performance.now();
  await deleteBranch(db, big.pipeline.id, "b1");
  console.log(`  delete b1: ${(performance.now() - t).toFixed(0)} ms`);

  // 2. Run on a branch with one changed step.
  const small = await createPipeline(db, workspace.id, { name: "bench-branch-run", spec: spec("Summarize: {{ record.content }}") });
  const ref = { workspaceId: workspace.id, pipelineId: small.pipeline.id };
  await appendSourceRecords(db, small.pipeline.id, "chats", items(0, conversations));
  console.log(`\nrun on a branch, ${conversations.toLocaleString("en-US")} conversations (chats → summaries → monthly → world):`);
  t = performance.now();
  const main = describeRun("main, full run", await runPipeline(db, ref, { model: new ScriptedModel(), afterRun: false }), (performance.now() - t) / 1000);

  await createBranch(db, small.pipeline.id, { name: "same" });
  t = performance.now();
  describeRun("unchanged branch", await runPipeline(db, { ...ref, branch: "same" }, { model: new ScriptedModel(), afterRun: false }), (performance.now() - t) / 1000);

  await createBranch(db, small.pipeline.id, { name: "decisions" });
  await saveVersion(db, small.pipeline.id, { branch: "decisions", spec: spec("List the decisions: {{ record.content }}") });
  const plan = await planPipeline(db, small.pipeline.id, "decisions");
  console.log(`  plan on the branch (summaries prompt changed): ${plan.map((p) => `${p.step} ${p.pending}/${p.total}`).join(", ")}`);
  t = performance.now();
  const changed = describeRun("branch, summaries prompt changed", await runPipeline(db, { ...ref, branch: "decisions" }, { model: new ScriptedModel(), afterRun: false }), (performance.now() - t) / 1000);
  console.log(
    `  branch run vs main's full run: ${(changed.calls / main.calls).toFixed(2)}× the model calls, ${(changed.tokens / main.tokens).toFixed(2)}× the tokens, ${(changed.seconds / main.seconds).toFixed(2)}× the time`,
  );

  await createBranch(db, small.pipeline.id, { name: "monthly-only" });
  await saveVersion(db, small.pipeline.id, {
    branch: "monthly-only",
    spec: { ...spec("Summarize: {{ record.content }}"), steps: spec("Summarize: {{ record.content }}").steps.map((s) => (s.name === "monthly" ? { ...s, prompt: `Month:\n${(s as { prompt: string }).prompt}` } : s)) },
  });
  t = performance.now();
  describeRun("branch, monthly prompt changed", await runPipeline(db, { ...ref, branch: "monthly-only" }, { model: new ScriptedModel(), afterRun: false }), (performance.now() - t) / 1000);

  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
