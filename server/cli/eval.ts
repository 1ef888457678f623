/**
 * `synthex eval <locomo|longmemeval|synthexbench> …`: score the selected pipeline's branch (or
 * templates) on a benchmark, print a progress bar and the metrics table (or `--json`), and
 * `synthex eval report` for the latest runs side by side. Works through the tRPC procedures like
 * every other command, so the same permissions apply.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Argument, Command, Option } from "commander";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../api/root";
import { METRIC_NAMES, LOWER_IS_BETTER } from "../eval/metrics";
import { EVAL_MODES, EVAL_TEMPLATES } from "../eval/templates";
import { BENCHMARKS, LOCOMO_CATEGORIES } from "../eval/types";
import { isTransientDbError } from "../store/db-errors";
import type { Connection } from "./api";
import { bar, ProgressLine, table } from "./output";
import { compareCommand, evalConcurrency, pool } from "./eval-compare";
import { freshnessCommand } from "./eval-freshness";

type EvalRun = inferRouterOutputs<AppRouter>["evals"]["get"];

export interface EvalCliDeps {
  action: <A extends unknown[]>(fn: (conn: Connection, opts: EvalGlobalOptions, ...args: A) => Promise<void>) => (...args: unknown[]) => Promise<void>;
  fail: (message: string, exitCode?: number) => never;
  pipelineName: (opts: EvalGlobalOptions) => string | undefined;
}

export interface EvalGlobalOptions {
  pipeline?: string;
  branch: string;
  json?: boolean;
}

interface EvalOptions extends EvalGlobalOptions {
  data?: string;
  compare?: string;
  step?: string;
  mode?: (typeof EVAL_MODES)[number];
  k?: string;
  template?: string;
  seed?: string;
  people?: string;
  size?: "tiny" | "small" | "medium" | "large";
  answerModel?: string;
  judgeModel?: string;
  budget?: string;
  baseline?: string;
}

const fmt = (name: string, v: number | undefined) => (v === undefined ? "-" : name === "context_tokens" ? v.toFixed(0) : v.toFixed(3));

/** The `--json` shape of one eval. */
export function evalJson(run: EvalRun, pipelineLabel: string) {
  const cost = run.cost as Record<string, unknown>;
  return {
    id: run.id,
    benchmark: run.benchmark,
    pipeline: pipelineLabel,
    status: run.status,
    branch: run.branch,
    step: run.step,
    mode: run.mode,
    questions: run.questions,
    metrics: run.metrics,
    perCategory: run.perCategory,
    cost,
    latency: run.latency,
    judge: run.judge,
    skips: (run.skips as unknown[]).length,
  };
}

/** How one target of `synthex eval` ended: its run (completed), or the reason it did not. */
type Outcome = { label: string; run: EvalRun | null; error?: string };

/** The `--json` shape of a target that failed: named, with its run (when it started) and the reason. */
function failureJson(r: Outcome, benchmark: string) {
  return { id: r.run?.id ?? null, benchmark, pipeline: r.label.split("@")[0]!, branch: r.run?.branch ?? r.label.split("@")[1] ?? "main", status: r.run?.status ?? "failed", error: r.error };
}

/** Metrics as rows, one column per eval (with deltas against the first). */
export function metricsTable(runs: Array<{ label: string; run: EvalRun }>): string {
  const rows = METRIC_NAMES.filter((m) => runs.some((r) => r.run.metrics[m] !== undefined)).map((m) => {
    const row: Record<string, string> = { metric: m };
    const base = runs[0]!.run.metrics[m];
    runs.forEach((r, i) => {
      const v = r.run.metrics[m];
      let cell = fmt(m, v);
      if (i > 0 && v !== undefined && base !== undefined) {
        const d = v - base;
        cell += ` (${d >= 0 ? "+" : ""}${m === "context_tokens" ? d.toFixed(0) : d.toFixed(3)}${LOWER_IS_BETTER.has(m) ? "" : ""})`;
      }
      row[r.label] = cell;
    });
    return row;
  });
  const extra = (name: string, get: (r: EvalRun) => string) => {
    const row: Record<string, string> = { metric: name };
    for (const r of runs) row[r.label] = get(r.run);
    rows.push(row);
  };
  extra("latency p50 / p95 ms", (r) => {
    const l = r.latency as { p50?: number; p95?: number };
    return `${(l.p50 ?? 0).toFixed(1)} / ${(l.p95 ?? 0).toFixed(1)}`;
  });
  extra("build tokens", (r) => String(Math.round(Number((r.cost as { buildTokens?: number }).buildTokens ?? 0))));
  extra("build cost USD", (r) => `$${Number((r.cost as { buildCostUsd?: number }).buildCostUsd ?? 0).toFixed(4)}`);
  extra("model calls (this eval)", (r) => String((r.cost as { thisRun?: { modelCalls?: number } }).thisRun?.modelCalls ?? 0));
  return table(rows);
}

/** What the judge measured (or why it did not), with what it spent and what it could not grade. */
export function judgeLine(label: string, run: EvalRun): string {
  const j = run.judge;
  if (!j.measured) return `${label}: j not measured (${j.reason}).`;
  const unjudged = [j.garbage ? `${j.garbage} garbage judge replies` : "", j.failed ? `${j.failed} failed calls` : "", j.overBudget ? `${j.overBudget} over the $${j.budgetUsd} budget` : ""].filter(Boolean);
  return `${label}: j measured on ${j.judged} questions by ${j.judgeModel} (answers by ${j.answerModel}); ${j.calls} calls, ${j.tokens} tokens, $${(j.spentUsd ?? 0).toFixed(4)} of $${j.budgetUsd}${unjudged.length ? `; not judged: ${unjudged.join(", ")}` : ""}.`;
}

function categoryTable(run: EvalRun): string {
  const metrics = ["session_hit@1", "session_hit@5", "evidence_recall@2k", "mrr"] as const;
  const rows = Object.entries(run.perCategory).map(([cat, m]) => ({
    category: `${cat}${run.benchmark === "locomo" ? ` ${LOCOMO_CATEGORIES[cat] ?? ""}` : ""}${cat === "5" && run.benchmark === "locomo" ? " (apart)" : ""}`,
    questions: m.questions,
    ...Object.fromEntries(metrics.map((k) => [k, fmt(k, m[k])])),
  }));
  return table(rows);
}

export function registerEvalCommands(program: Command, deps: EvalCliDeps) {
  const cmd = program
    .command("eval")
    .description("score memory on a benchmark (locomo, longmemeval, synthexbench) or a team's question set, with its cost; `eval report` for the latest runs")
    .addArgument(new Argument("<benchmark>", `${BENCHMARKS.join(", ")}, freshness (changing facts, built in memory), the name of a question set (scored on the pipeline's own memory), "report", or "compare" (then the run ids)`))
    .addArgument(new Argument("[runIds...]", "compare: the eval runs of the leaderboard"))
    .option("--baseline <run-id>", "compare: the baseline run (default: the pipeline's main)")
    .option("--data <file>", "the benchmark file (LoCoMo locomo10.json, LongMemEval JSON)")
    .option("--compare <branch>", "also score this branch and show both side by side")
    .option("--step <step>", "altitude: search this step only (default: every indexed step)")
    .addOption(new Option("--mode <mode>", "search mode").choices([...EVAL_MODES]))
    .option("--k <n>", "records retrieved per question (1-100, default 50)")
    .option("--template <names>", `score templates instead of a pipeline (comma-separated: ${EVAL_TEMPLATES.join(", ")}, or "all")`)
    .option("--answer-model <provider/model>", "answer each question from the retrieved context with this model and measure the judge score j (default: extractive, j not measured)")
    .option("--judge-model <provider/model>", "the model that grades the answers (default: the answer model)")
    .option("--budget <usd>", "most the answer and judge calls may spend, in USD (default 1)")
    .option("--seed <n>", "synthexbench, freshness: generator seed", "1")
    .option("--people <n>", "freshness: people generated (default 40)")
    .addOption(new Option("--size <size>", "synthexbench: size").choices(["tiny", "small", "medium", "large"]).default("small"))
    .addOption(new Option("--format <format>", "report: md or html").choices(["md", "html"]).default("md"));

  cmd.action(
    deps.action(async (conn, opts, benchmark: string, runIds: string[] = []) => {
      const o = opts as EvalOptions & { format: "md" | "html" };
      if (benchmark === "compare") {
        await compareCommand(conn, runIds, o, deps.fail);
        return;
      }
      if (benchmark === "freshness") {
        await freshnessCommand(o, deps.fail, EVAL_TEMPLATES);
        return;
      }
      if (runIds.length) deps.fail(`Unexpected arguments after "${benchmark}": ${runIds.join(" ")} (run ids go after "compare").`, 2);
      if (benchmark === "report") {
        console.log(await report(conn, o.format, deps.pipelineName(o)));
        return;
      }
      const isBenchmark = (BENCHMARKS as readonly string[]).includes(benchmark);
      let text: string | undefined;
      let name: string | undefined;
      if (isBenchmark && benchmark !== "synthexbench") {
        if (!o.data) deps.fail(`${benchmark} needs its data file: pass --data <file>.`, 2);
        if (!existsSync(o.data!)) deps.fail(`File not found: ${o.data}`, 2);
        text = readFileSync(o.data!, "utf8");
        name = path.basename(o.data!);
      }
      const imported = isBenchmark
        ? await conn.api.evals.importDataset.mutate({
            workspaceId: conn.workspaceId,
            benchmark: benchmark as (typeof BENCHMARKS)[number],
            text,
            name,
            seed: o.seed !== undefined ? Number(o.seed) : undefined,
            size: benchmark === "synthexbench" ? o.size : undefined,
          })
        : null;
      if (imported && !o.json) {
        const dropped = (imported.skips as Array<{ dropped: boolean }>).filter((s) => s.dropped).length;
        const repaired = (imported.skips as unknown[]).length - dropped;
        console.error(`Dataset ${imported.name}: ${imported.samples} samples, ${imported.questions} questions (${dropped} skipped, ${repaired} repaired while loading).`);
      }
      // Not a benchmark: a team's question set, asked of the selected pipeline's own memory.
      const dataset = imported ?? (await questionSetAsDataset(conn, benchmark, o, deps));
      const templates = o.template ? (o.template === "all" ? [...EVAL_TEMPLATES] : o.template.split(",").map((t) => t.trim()).filter(Boolean)) : [];
      const targets: Array<{ label: string; pipelineId?: string; template?: (typeof EVAL_TEMPLATES)[number]; branch: string }> = [];
      for (const t of templates) {
        if (!(EVAL_TEMPLATES as readonly string[]).includes(t)) deps.fail(`Unknown template "${t}". Templates: ${EVAL_TEMPLATES.join(", ")}.`, 2);
        targets.push({ label: t, template: t as (typeof EVAL_TEMPLATES)[number], branch: "main" });
      }
      if (!templates.length) {
        const pipeline = deps.pipelineName(o);
        if (!pipeline) deps.fail("No pipeline selected: run `synthex init <name>`, pass --pipeline <name>, or score templates with --template all.", 2);
        targets.push({ label: `${pipeline}@${o.branch}`, pipelineId: pipeline, branch: o.branch });
        if (o.compare) targets.push({ label: `${pipeline}@${o.compare}`, pipelineId: pipeline, branch: o.compare });
      }
      const k = o.k !== undefined ? Number(o.k) : undefined;
      if (k !== undefined && !(Number.isInteger(k) && k >= 1 && k <= 100)) deps.fail("--k must be a whole number from 1 to 100.", 2);
      const budgetUsd = o.budget !== undefined ? Number(o.budget) : undefined;
      if (budgetUsd !== undefined && !(budgetUsd > 0)) deps.fail("--budget must be a positive number of US dollars.", 2);
      // Templates whose offline path only stands in for an LLM step say so beside their numbers.
      const standIns = templates.length
        ? new Map((await conn.api.evals.templates.query({ workspaceId: conn.workspaceId })).map((t) => [t.name, t.offlineStandIn]))
        : new Map<string, { note: string; detail: string } | null>();
      // Several targets (`--template all`) are scored at once, up to the machine's cores; each builds
      // its eval copy incrementally, so what an earlier run built is reused.
      const line = new ProgressLine();
      const active = new Map<string, string>();
      const show = () => {
        if (!o.json && active.size) line.update([...active.entries()].map(([label, p]) => (targets.length === 1 ? `${label.padEnd(22)} ${p}` : `${label} ${p}`)).join(" · "));
      };
      // Branches of one pipeline share its eval copy (one eval at a time there): those go one by one.
      // Each target ends with its run or its named failure: one that fails (or whose start or wait
      // throws) never loses the others' results, which are printed before the command fails.
      const settled = await pool(targets, targets.some((t) => t.pipelineId) ? 1 : evalConcurrency(targets.length), async (target): Promise<Outcome> => {
        try {
          return await scoreTarget(target);
        } catch (err) {
          active.delete(target.label);
          const error = err instanceof Error ? err.message : String(err);
          if (!o.json) line.done(`${target.label.padEnd(22)} failed (${error})`);
          show();
          return { label: target.label, run: null, error };
        }
      });
      async function scoreTarget(target: (typeof targets)[number]): Promise<Outcome> {
        const started = await conn.api.evals.start.mutate({
          workspaceId: conn.workspaceId,
          pipelineId: target.pipelineId,
          template: target.template,
          branch: target.branch,
          ...(isBenchmark ? { datasetId: dataset.id } : { questionSet: dataset.id }),
          step: o.step,
          mode: o.mode,
          k,
          answerModel: o.answerModel,
          judgeModel: o.judgeModel,
          budgetUsd,
        });
        const run = await waitForEval(() => conn.api.evals.get.query({ workspaceId: conn.workspaceId, id: started.id }), (r) => {
          const p = r.progress as { phase?: string; done?: number; total?: number };
          if (!p.phase) return;
          active.set(target.label, targets.length === 1 ? `${p.phase.padEnd(6)} ${bar(p.done ?? 0, p.total ?? 0)}` : `${p.phase} ${p.done ?? 0}/${p.total ?? 0}`);
          show();
        });
        active.delete(target.label);
        if (!o.json) line.done(`${target.label.padEnd(22)} ${run.status} · ${run.questions} questions${run.status === "completed" ? "" : ` (${run.id}: ${run.error ?? "no reason given"})`}`);
        show();
        return run.status === "completed" ? { label: target.label, run } : { label: target.label, run, error: run.error ?? "no reason given" };
      }
      const results = settled.filter((r): r is { label: string; run: EvalRun } => r.run !== null && !r.error);
      const failed = settled.filter((r) => r.error !== undefined);
      const failure = () => deps.fail(failed.map((r) => `The eval of ${r.label}${r.run ? ` (${r.run.id})` : ""} ${r.run?.status ?? "failed"}: ${r.error}`).join("\n"));
      if (o.json) {
        // Every target in the order asked: its figures, or its named failure (status and reason).
        const out = settled.map((r) => {
          if (r.error !== undefined) return failureJson(r, benchmark);
          const standIn = standIns.get(r.label);
          return { ...evalJson(r.run!, r.label.split("@")[0]!), ...(standIn ? { offlineStandIn: standIn } : {}) };
        });
        console.log(JSON.stringify(out.length === 1 ? out[0] : out, null, 2));
        if (failed.length) failure();
        return;
      }
      if (!results.length) failure();
      const lines = [`${benchmark} · ${dataset.name} · ${results[0]!.run.questions} scored questions${benchmark === "locomo" ? " (categories 1-4; 5 adversarial reported apart)" : ""}`, "", metricsTable(results)];
      const standInLines = results.flatMap((r) => {
        const standIn = standIns.get(r.label);
        return standIn ? [`${r.label}: ${standIn.note} (${standIn.detail})`] : [];
      });
      if (standInLines.length) lines.push("", ...standInLines);
      for (const r of results) {
        const standIn = standIns.get(r.label);
        lines.push("", `Per category · ${r.label}${standIn ? ` — ${standIn.note}` : ""}`, categoryTable(r.run));
      }
      lines.push("", ...results.map((r) => judgeLine(r.label, r.run)));
      lines.push("", "Open the Evals tab of the pipeline to compare runs question by question.");
      if (results.length > 1) lines.push(`Leaderboard with 95% intervals of the deltas: synthex eval compare ${results.map((r) => r.run.id).join(" ")}`);
      if (failed.length) lines.push("", `Failed (${failed.length} of ${settled.length}):`, ...failed.map((r) => `  ${r.label}${r.run ? ` (${r.run.id})` : ""} ${r.run?.status ?? "failed"}: ${r.error}`));
      console.log(lines.join("\n"));
      if (failed.length) failure();
    }),
  );
}

/** How long the wait for an eval keeps retrying a database that does not answer (in a row). */
const EVAL_WAIT_OUTAGE_MS = 120_000;

/**
 * Polls a started eval until it is no longer queued or running. A transient database error (the
 * link dropped, an authentication or pool timeout under load) is retried with backoff: the eval
 * runs on, and its stored status decides how the command ends. Other errors, and an outage
 * longer than EVAL_WAIT_OUTAGE_MS, are thrown.
 */
async function waitForEval(get: () => Promise<EvalRun>, onProgress: (run: EvalRun) => void): Promise<EvalRun> {
  let failingSince: number | null = null;
  let backoff = 250;
  for (;;) {
    let run: EvalRun;
    try {
      run = await get();
    } catch (err) {
      if (!isTransientDbError(err)) throw err;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > EVAL_WAIT_OUTAGE_MS) throw err;
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 5_000);
      continue;
    }
    failingSince = null;
    backoff = 250;
    onProgress(run);
    if (!["queued", "running"].includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A question set named on the command line, in the shape the command prints; templates cannot score it. */
async function questionSetAsDataset(conn: Connection, name: string, o: EvalOptions, deps: EvalCliDeps) {
  if (o.template) deps.fail(`A question set asks a team's own memory: score a pipeline (--pipeline), not templates.`, 2);
  if (o.data) deps.fail(`"${name}" is not a benchmark (${BENCHMARKS.join(", ")}): --data is only for benchmark files.`, 2);
  const set = await conn.api.evals.questionSet.query({ workspaceId: conn.workspaceId, id: name });
  if (!o.json) console.error(`Question set ${set.name}: ${set.questions.length} questions, asked of the pipeline's own memory.`);
  return { id: set.id, name: set.name };
}

/** The latest completed eval of each pipeline/branch/template per benchmark, side by side (md or html). */
async function report(conn: Connection, format: "md" | "html", pipeline: string | undefined): Promise<string> {
  const runs = (await conn.api.evals.list.query({ workspaceId: conn.workspaceId, pipelineId: undefined })).filter((r) => r.status === "completed");
  const latest = new Map<string, (typeof runs)[number]>();
  for (const r of runs) {
    const key = `${r.benchmark}|${r.datasetId}|${r.label}|${r.mode}|${r.step ?? ""}`;
    if (!latest.has(key)) latest.set(key, r);
  }
  const chosen = [...latest.values()].filter((r) => !pipeline || r.label.startsWith(`${pipeline}@`) || r.template);
  if (!chosen.length) return format === "html" ? "<p>No completed evals yet.</p>" : "No completed evals yet: run `synthex eval locomo --data <file>`.";
  const metrics = METRIC_NAMES.filter((m) => chosen.some((r) => r.metrics[m] !== undefined));
  const header = ["eval", "benchmark", "mode", ...metrics, "build cost USD", "p50 ms"];
  const rows = chosen.map((r) => [
    r.label,
    r.benchmark,
    `${r.mode}${r.step ? ` @ ${r.step}` : ""}`,
    ...metrics.map((m) => fmt(m, r.metrics[m])),
    `$${Number((r.cost as { buildCostUsd?: number }).buildCostUsd ?? 0).toFixed(4)}`,
    ((r.latency as { p50?: number }).p50 ?? 0).toFixed(1),
  ]);
  if (format === "html") {
    const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
    return `<!doctype html><meta charset="utf-8"><title>Synthex eval report</title><table border="1" cellpadding="4"><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
  }
  return [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}
