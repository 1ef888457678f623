/**
 * npm run soak:load — runs and evals on the embedded database at a forced high load: CPU burners
 * (busy child processes, default two per core) beside it the whole time, several pipeline runs and
 * evals at once through the app's own connection path (this process connects to the owner like
 * the CLI). Shows that under load work is slower but never wrong: every run and every eval ends
 * completed, each exactly once (one Run row per started run, each with one completed status; one
 * EvalRun per eval), with the records a run on a quiet machine makes. Asserts, and exits non-zero
 * when something failed or ran twice. A benchmark, not a timed test.
 *
 *   npm run soak:load -- [--burners 4] [--runs 4] [--conversations 30] [--evals bm25-sessions,bm25-windows,rag-baseline]
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};

if (process.env.SOAK_BURNER === "1") {
  // A burner: spin until killed.
  for (;;) Math.sqrt(Math.random());
}

const burners = Number(flag("burners", String(availableParallelism() * 2)));
const runs = Number(flag("runs", "4"));
const conversations = Number(flag("conversations", "30"));
const evalTemplates = flag("evals", "bm25-sessions,bm25-windows,rag-baseline").split(",").filter(Boolean);
const dir = mkdtempSync(path.join(tmpdir(), "synthex-soak-load-"));
process.env.SYNTHEX_DATA_DIR = path.join(dir, "data");
delete process.env.DATABASE_URL;

function chatExport(n: number, tag: string): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const t0 = 1_704_067_200 + i * 86_400;
    const texts = [`In ${tag} conversation ${i} I planned the trip to Lyon by train, leg ${i % 4}.`, `Noted: leg ${i % 4} of the Lyon trip for ${tag}.`];
    const mapping: Record<string, unknown> = { root: { id: "root", message: null, parent: null, children: ["m0"] } };
    texts.forEach((text, k) => {
      mapping[`m${k}`] = {
        id: `m${k}`,
        parent: k === 0 ? "root" : `m${k - 1}`,
        children: k < texts.length - 1 ? [`m${k + 1}`] : [],
        message: { id: `m${k}`, author: { role: k % 2 ? "assistant" : "user", name: null, metadata: {} }, create_time: t0 + k * 60, content: { content_type: "text", parts: [text] }, status: "finished_successfully", weight: 1, metadata: {}, recipient: "all" },
      };
    });
    return { id: `${tag}-${i}`, conversation_id: `${tag}-${i}`, title: `${tag} #${i}`, create_time: t0, update_time: t0 + 600, current_node: `m${texts.length - 1}`, mapping };
  });
}

async function main() {
  const children: ChildProcess[] = Array.from({ length: burners }, () => fork(import.meta.filename, [], { env: { ...process.env, SOAK_BURNER: "1" }, stdio: "ignore", execArgv: ["--import", "tsx"] }));
  const failures: string[] = [];
  try {
    const { openMigratedDb } = await import("../server/store/runtime-env");
    const { closeDb } = await import("../server/store/db");
    const { signUp } = await import("../server/services/users");
    const { createPipeline, templateSpec } = await import("../server/services/pipelines");
    const { importFile } = await import("../server/services/imports");
    const { runPipeline } = await import("../server/services/runs");
    const { importDataset } = await import("../server/eval/dataset-store");
    const { runEval } = await import("../server/eval/service");
    const { locomoFixture } = await import("../server/eval/testing/locomo-fixture");
    await new Promise((r) => setTimeout(r, 3000)); // the burners are up
    console.log(`soak:load — ${burners} CPU burners on ${availableParallelism()} cores; ${runs} runs (${conversations} conversations each) and ${evalTemplates.length} evals at once; load ${loadavg()[0]!.toFixed(1)}`);
    const t0 = performance.now();
    const db = await openMigratedDb();
    const { workspace } = await signUp(db, { email: "soak-load@example.com", password: "soak-password-1" });
    const pipelines = [];
    for (let i = 0; i < runs; i++) {
      const { pipeline } = await createPipeline(db, workspace.id, { name: `soak-${i}`, spec: templateSpec("chat-memory") });
      const file = path.join(dir, `export-${i}.json`);
      writeFileSync(file, JSON.stringify(chatExport(conversations, `p${i}`)));
      await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: file });
      pipelines.push(pipeline);
    }
    const dataset = await importDataset(db, workspace.id, { benchmark: "locomo", text: JSON.stringify(locomoFixture()), name: "soak-fixture.json" });
    const work = [
      ...pipelines.map(async (p) => {
        const run = await runPipeline(db, { workspaceId: workspace.id, pipelineId: p.id });
        if (run.status !== "completed") failures.push(`run of ${p.name}: ${run.status} ${run.error ?? ""}`);
        return `run ${p.name} ${run.status}`;
      }),
      ...evalTemplates.map(async (template) => {
        const ev = await runEval(db, { workspaceId: workspace.id, template, datasetId: dataset.id });
        if (ev.status !== "completed") failures.push(`eval ${template}: ${ev.status} ${ev.error ?? ""}`);
        return `eval ${template} ${ev.status}`;
      }),
    ];
    const outcomes = await Promise.allSettled(work);
    for (const o of outcomes) if (o.status === "rejected") failures.push(`threw: ${o.reason instanceof Error ? o.reason.message : String(o.reason)}`);
    const elapsed = (performance.now() - t0) / 1000;
    // Each once: one Run per pipeline (the eval copies have their own), completed; one EvalRun per eval.
    for (const p of pipelines) {
      const rows = await db.run.findMany({ where: { pipelineId: p.id }, select: { status: true } });
      if (rows.length !== 1 || rows[0]!.status !== "completed") failures.push(`${p.name}: runs ${JSON.stringify(rows.map((r) => r.status))}`);
    }
    const records = await Promise.all(pipelines.map((p) => db.record.count({ where: { pipelineId: p.id } })));
    if (new Set(records).size !== 1) failures.push(`records differ between identical pipelines: ${records.join(", ")}`);
    const evalRows = await db.evalRun.findMany({ where: { workspaceId: workspace.id }, select: { template: true, status: true } });
    for (const t of evalTemplates) {
      const mine = evalRows.filter((e) => e.template === t);
      if (mine.length !== 1 || mine[0]!.status !== "completed") failures.push(`eval ${t}: ${JSON.stringify(mine.map((e) => e.status))}`);
    }
    for (const o of outcomes) if (o.status === "fulfilled") console.log(`  ${o.value}`);
    console.log(`soak:load  runs ${runs} completed-once ${runs - failures.filter((f) => f.startsWith("soak-") || f.startsWith("run ")).length}  evals ${evalTemplates.length}  records per run ${records.join("/")}  in ${elapsed.toFixed(1)} s  load ${loadavg()[0]!.toFixed(1)}  failures ${failures.length}`);
    for (const f of failures) console.log(`  FAILED ${f}`);
    await closeDb();
  } finally {
    for (const c of children) c.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
