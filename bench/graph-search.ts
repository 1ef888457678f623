/**
 * npm run bench:graph-search — graph retrieval on the LoCoMo dev split built with the `synapsis`
 * template, on a fresh embedded database: import the file, build the template's eval copy and
 * score it in mode hybrid, score it again in mode graph (same build, nothing recomputed), then
 * time every question's search in both modes and graph retrieval alone (the entity lookup, the
 * hops and the source read, without the dense and sparse lists). Prints hit@1/@5, recall@2k and
 * latency p50/p95 per mode. Asserts nothing. The data is CC BY-NC: read from its path, never copied.
 *
 * Usage: npm run bench:graph-search -- [file=../shared/data/locomo-dev/locomo-dev.json] [--repeat 1]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const file = path.resolve(args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--")) ?? "../shared/data/locomo-dev/locomo-dev.json");
const repeat = Math.max(1, Number(flag("repeat") ?? 1));
const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-graph-bench-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function main() {
  if (!existsSync(file)) {
    console.error(`bench:graph-search needs the LoCoMo file (not in the repository: CC BY-NC): ${file} does not exist.`);
    process.exitCode = 2;
    return;
  }
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const { signUp } = await import("../server/services/users");
  const { importDataset } = await import("../server/eval/dataset-store");
  const { runEval } = await import("../server/eval/service");
  const { sampleScope } = await import("../server/eval/types");
  const { search } = await import("../server/search/search");
  const { indexedSteps, resolveBranch } = await import("../server/search/context");
  const { graphRetrieve } = await import("../server/search/graph-retrieval");

  const t0 = performance.now();
  const db = await openMigratedDb();
  const { workspace } = await signUp(db, { email: "graph-bench@example.com", password: "bench-password-1" });
  const dataset = await importDataset(db, workspace.id, { benchmark: "locomo", text: readFileSync(file, "utf8"), name: path.basename(file) });
  console.log(`dataset ${dataset.name}: ${dataset.samples} conversations, ${dataset.questions} questions (imported ${s(performance.now() - t0)})`);

  const runs: Record<string, Awaited<ReturnType<typeof runEval>>> = {};
  for (const mode of ["hybrid", "graph"] as const) {
    const started = performance.now();
    const run = await runEval(db, { workspaceId: workspace.id, template: "synapsis", datasetId: dataset.id, mode });
    runs[mode] = run;
    const m = run.metrics as Record<string, number>;
    const latency = run.latency as { p50: number; p95: number };
    console.log(
      `eval synapsis --mode ${mode.padEnd(6)} ${run.status} in ${s(performance.now() - started)} · ${run.questions} questions · ` +
        `hit@1 ${m["session_hit@1"]?.toFixed(3)} hit@5 ${m["session_hit@5"]?.toFixed(3)} recall@2k ${m["evidence_recall@2k"]?.toFixed(3)} mrr ${m["mrr"]?.toFixed(3)} · ` +
        `eval search p50 ${ms(latency.p50)} p95 ${ms(latency.p95)}`,
    );
  }

  // Every question again, timed here: both modes as an agent calls them, and graph retrieval alone.
  const run = runs.graph!;
  const cases = await db.evalCase.findMany({ where: { evalRunId: run.id }, select: { question: true, sample: true }, orderBy: { position: "asc" } });
  const ctx = await resolveBranch(db, workspace.id, run.evalPipelineId, run.branch);
  const evalSteps = run.step ? [run.step] : [...indexedSteps(ctx.spec).keys()];
  const timings: Record<string, number[]> = { hybrid: [], graph: [], "graph retrieval alone": [] };
  let withEntities = 0;
  let paths = 0;
  let beliefs = 0;
  for (let r = 0; r < repeat; r++) {
    for (const c of cases) {
      const scope = sampleScope("locomo", c.sample);
      const query = c.question.slice(0, 1000);
      for (const mode of ["hybrid", "graph"] as const) {
        const t = performance.now();
        const result = await search(db, { workspaceId: workspace.id, pipelineId: run.evalPipelineId, branch: run.branch, query, mode, scope, step: run.step ?? undefined, limit: 10, snippets: false });
        timings[mode]!.push(performance.now() - t);
        if (mode === "graph" && r === 0) {
          if (result.graph?.entities.length) withEntities++;
          paths += result.hits.filter((h) => h.evidencePaths?.length).length;
          beliefs += result.graph?.beliefsRead ?? 0;
        }
      }
      const t = performance.now();
      await graphRetrieve(db, ctx, { question: query, steps: evalSteps, filters: { scope }, n: 50 });
      timings["graph retrieval alone"]!.push(performance.now() - t);
    }
  }
  console.log(
    `${cases.length} questions × ${repeat}: ${withEntities} name an entity of the graph; graph hits with an evidence path ${paths} (of ${cases.length * 10} max); beliefs read per question ${(beliefs / Math.max(1, cases.length)).toFixed(0)}`,
  );
  for (const [name, xs] of Object.entries(timings)) console.log(`${name.padEnd(22)} p50 ${ms(pct(xs, 50))}  p95 ${ms(pct(xs, 95))}  max ${ms(Math.max(...xs))}  (n=${xs.length})`);
  console.log(`total ${s(performance.now() - t0)}`);
  await closeDb();
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dataDir, { recursive: true, force: true }));
