/**
 * npm run bench:eval — the full LoCoMo dev split end to end on the embedded database, through the
 * app's own connection path: import the file, build the eval copy (an incremental pipeline run),
 * search and score every question. Prints time per phase, total time and peak memory for each
 * template, then the same eval again (incremental: nothing to compute). Asserts nothing.
 *
 * Usage: npm run bench:eval -- [file=../shared/data/locomo-dev/locomo-dev.json] [templates=chat-memory]
 *   templates: comma-separated (chat-memory, rag-baseline, bm25-sessions, bm25-windows) or "all".
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const file = path.resolve(process.argv[2] ?? "../shared/data/locomo-dev/locomo-dev.json");
const templatesArg = process.argv[3] ?? "chat-memory";
const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-eval-bench-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

async function main() {
  if (!existsSync(file)) {
    console.error(`bench:eval needs the LoCoMo file (not in the repository: CC BY-NC): ${file} does not exist.`);
    process.exitCode = 2;
    return;
  }
  const { closeDb } = await import("../server/store/db");
  // A fresh embedded database: migrated first (getDb only checks that a schema exists).
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const { signUp } = await import("../server/services/users");
  const { importDataset } = await import("../server/eval/dataset-store");
  const { runEval } = await import("../server/eval/service");
  const { EVAL_TEMPLATES } = await import("../server/eval/templates");
  const templates = templatesArg === "all" ? [...EVAL_TEMPLATES] : templatesArg.split(",");

  const t0 = performance.now();
  const db = await openMigratedDb();
  const { workspace } = await signUp(db, { email: "eval-bench@example.com", password: "bench-password-1" });
  const tImport = performance.now();
  const dataset = await importDataset(db, workspace.id, { benchmark: "locomo", text: readFileSync(file, "utf8"), name: path.basename(file) });
  const importMs = performance.now() - tImport;
  console.log(`database ready + sign-up ${s(tImport - t0)}; dataset ${dataset.name}: ${dataset.samples} conversations, ${dataset.questions} questions, imported in ${s(importMs)}`);

  for (const template of templates) {
    for (const pass of ["first", "again"] as const) {
      const phases: Record<string, number> = {};
      let last = performance.now();
      let phase = "";
      const started = performance.now();
      const run = await runEval(
        db,
        { workspaceId: workspace.id, template, datasetId: dataset.id },
        {
          onProgress: (p) => {
            if (p.phase !== phase) {
              const now = performance.now();
              if (phase) phases[phase] = (phases[phase] ?? 0) + now - last;
              last = now;
              phase = p.phase;
            }
          },
        },
      );
      const total = performance.now() - started;
      if (phase) phases[phase] = (phases[phase] ?? 0) + performance.now() - last;
      const m = run.metrics as Record<string, number>;
      const cost = run.cost as { buildTokens: number; thisRun: { modelCalls: number } };
      const latency = run.latency as { p50: number; p95: number };
      console.log(
        `${template.padEnd(14)} ${pass.padEnd(5)} ${run.status} in ${s(total)} (${Object.entries(phases).map(([k, v]) => `${k} ${s(v)}`).join(", ")}) · ` +
          `${run.questions} questions · hit@1 ${m["session_hit@1"]?.toFixed(3)} hit@5 ${m["session_hit@5"]?.toFixed(3)} recall@2k ${m["evidence_recall@2k"]?.toFixed(3)} · ` +
          `search p50 ${latency.p50.toFixed(1)} ms p95 ${latency.p95.toFixed(1)} ms · model calls ${cost.thisRun.modelCalls} · build tokens ${Math.round(cost.buildTokens)}`,
      );
    }
  }
  console.log(`total ${s(performance.now() - t0)} · peak memory (RSS, this process incl. the embedded database) ${mb(process.resourceUsage().maxRSS)}`);
  await closeDb();
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dataDir, { recursive: true, force: true }));
