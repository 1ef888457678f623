/**
 * The leaderboard a team decides from: one row per eval run (a pipeline's branch, a template), the
 * baseline pinned on top, each headline metric with its delta to the baseline and the 95% interval
 * of that delta (paired bootstrap over the questions both answered: bootstrap.ts), build cost,
 * query cost and latency. Runs that failed, were cancelled or are still running are rows too, with
 * their state, reason and progress, so nothing silently drops out of a comparison.
 *
 * Reads only run rows: the per-question vectors were stored when each run completed
 * (aggregates.ts; older runs are backfilled once). The same service serves tRPC, REST and
 * `synthex eval compare`; `leaderboardMarkdown` / `leaderboardCsv` are its exports.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { findTemplate, offlineStandInOf } from "../pipeline/templates";
import { ensureAggregates, type EvalAggregates } from "./aggregates";
import { pairedDelta, type BootstrapPlan } from "./bootstrap";
import { apartLabel } from "./compare-kinds";
import { LOWER_IS_BETTER, type MetricName } from "./metrics";
import { evalLabel, runNames, runVersion } from "./run-labels";
import { evalCostSchema, judgeRecordSchema, latencySchema, metricsSchema } from "./stored";

/** The metrics every leaderboard shows, in this order (`j` and `f1` join when a run measured them). */
export const LEADERBOARD_METRICS = ["session_hit@1", "session_hit@5", "evidence_recall@2k", "mrr"] as const satisfies readonly MetricName[];
const OPTIONAL_METRICS = ["f1", "j"] as const satisfies readonly MetricName[];
export const MAX_LEADERBOARD_RUNS = 24;

export interface LeaderboardCell {
  value: number | null;
  /** value − the baseline's value (null for the baseline itself, or when either did not measure it). */
  delta: number | null;
  /** 95% interval of the delta from a paired bootstrap over questions; null without pairs. */
  ci95: [number, number] | null;
  /** The interval includes zero: the difference may be noise. */
  withinNoise: boolean | null;
}

export interface LeaderboardRow {
  id: string;
  label: string;
  kind: "branch" | "template";
  pipelineId: string | null;
  template: string | null;
  branch: string;
  /** Which version of the pipeline was scored: "v3" (its number in the pipeline's history); null for a template. */
  version: string | null;
  /** Short spec hash of what was scored (a template's too). */
  specHash: string;
  mode: string;
  step: string | null;
  status: string;
  /** Why it failed or was cancelled. */
  error: string | null;
  progress: { phase: string; done: number; total: number } | null;
  isBaseline: boolean;
  /** Questions in the headline metrics (what Question by question calls scored). */
  questions: number;
  /** Questions the run scored apart (adversarial, abstention): not in `questions`; null until completed. */
  questionsApart: number | null;
  metrics: Record<string, LeaderboardCell>;
  buildCostUsd: number | null;
  buildTokens: number | null;
  /** What answering one question costs: context tokens read, and USD spent by the answer/judge models. */
  queryTokens: number | null;
  queryCostUsd: number | null;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  /** The template ran with an offline stand-in for a model (what it stands in for), when it declares one. */
  offlineStandIn: string | null;
  /** Why this row has no deltas (e.g. another dataset than the baseline). */
  note: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

/** How the baseline was picked: named by the caller, or the default rule (defaultBaseline). */
export interface BaselineChoice {
  kind: "chosen" | "main" | "strongest" | "none";
  /** Why this baseline, in one sentence: the leaderboard's caption and `synthex eval compare` say it. */
  text: string;
  /** The default rule in full (DEFAULT_BASELINE_RULE): the caption's tooltip. */
  rule: string;
}

export interface Leaderboard {
  baselineId: string | null;
  baselineRule: BaselineChoice;
  benchmark: string | null;
  datasetId: string | null;
  metrics: string[];
  lowerIsBetter: string[];
  /** What the questions scored apart are called on screen ("adversarial" for LoCoMo). */
  apartLabel: string;
  rows: LeaderboardRow[];
}

const SELECT = {
  id: true,
  workspaceId: true,
  pipelineId: true,
  template: true,
  branch: true,
  specHash: true,
  versionId: true,
  datasetId: true,
  benchmark: true,
  step: true,
  mode: true,
  status: true,
  error: true,
  progress: true,
  questions: true,
  perCategory: true,
  metrics: true,
  cost: true,
  latency: true,
  judge: true,
  createdAt: true,
  finishedAt: true,
} as const;

const intervalKey = (runId: string, baselineId: string, metric: string) => `${runId}|${baselineId}|${metric}`;

/** Intervals already computed, by run, baseline and metric (both runs completed: immutable). Bounded. */
const intervals = new Map<string, { ci95: [number, number] | null; withinNoise: boolean | null }>();
const MAX_CACHED_INTERVALS = 5000;
/** Empties the intervals kept in memory (as a restarted server has none): for tests of what a first read does. */
export function forgetComputedIntervals() {
  intervals.clear();
}
function remember(key: string, value: { ci95: [number, number] | null; withinNoise: boolean | null }) {
  if (intervals.size >= MAX_CACHED_INTERVALS) intervals.delete(intervals.keys().next().value!);
  intervals.set(key, value);
}

/** "offline stand-in for an LLM step: …" and which steps, for a template whose offline path only stands in for one. */
function offlineStandIn(template: string | null): string | null {
  const def = template ? findTemplate(template) : undefined;
  const standIn = def ? offlineStandInOf(def) : null;
  return standIn ? `${standIn.note} — ${standIn.detail}` : null;
}

/** Questions scored apart: every question scored (per category, apart ones too) less the headline's. */
function questionsApart(perCategory: unknown, questions: number): number {
  const cats = (perCategory ?? {}) as Record<string, { questions?: unknown }>;
  const all = Object.values(cats).reduce((n, c) => n + (typeof c?.questions === "number" ? c.questions : 0), 0);
  return Math.max(0, all - questions);
}

function progressOf(stored: unknown): LeaderboardRow["progress"] {
  const p = stored as { phase?: unknown; done?: unknown; total?: unknown } | null;
  return p && typeof p.phase === "string" && typeof p.done === "number" && typeof p.total === "number" ? { phase: p.phase, done: p.done, total: p.total } : null;
}

/** The headline values of a run's main questions (not scored apart), by question id. */
function vectors(agg: EvalAggregates, metrics: readonly string[]) {
  const index = new Map<string, number>();
  agg.questionIds.forEach((id, i) => {
    if (!agg.apart[i]) index.set(id, i);
  });
  return { index, values: Object.fromEntries(metrics.map((m) => [m, agg.metrics[m] ?? null])) };
}

/** The metric the default baseline is the strongest on, when no pipeline's main was scored. */
export const BASELINE_STRENGTH_METRIC = "session_hit@5" satisfies MetricName;

/** The default baseline's rule in one sentence (the leaderboard's caption, its tooltip and the CLI say it). */
export const DEFAULT_BASELINE_RULE = `By default the baseline is a pipeline's main branch, its newest finished run on this dataset; without one, the strongest real run by ${BASELINE_STRENGTH_METRIC} (a template scored with an offline stand-in for its model is not its architecture's result, so it is never the default).`;

const choice = (kind: BaselineChoice["kind"], text: string): BaselineChoice => ({ kind, text, rule: DEFAULT_BASELINE_RULE });

type BaselineCandidate = { id: string; pipelineId: string | null; branch: string; template: string | null; datasetId: string; status: string; metrics: unknown; createdAt: Date; finishedAt: Date | null };

/**
 * The default baseline of a comparison (one place: tRPC, REST and `synthex eval compare` all
 * read it here): among the completed runs on the comparison's dataset (the one most of them
 * scored; ties go to the newest run's), a pipeline's main branch's newest finished run; else the
 * strongest run by BASELINE_STRENGTH_METRIC that is not a template's offline stand-in (ties: the
 * newest); else, every run being a stand-in, the strongest of them.
 */
export function defaultBaseline<R extends BaselineCandidate>(runs: readonly R[]): { run: R | null; rule: BaselineChoice } {
  const completed = runs.filter((r) => r.status === "completed");
  if (!completed.length) return { run: null, rule: choice("none", "No run here completed: there is no baseline yet.") };
  const finished = (r: R) => +(r.finishedAt ?? r.createdAt);
  const newestFirst = [...completed].sort((a, b) => finished(b) - finished(a));
  const counts = new Map<string, number>();
  for (const r of newestFirst) counts.set(r.datasetId, (counts.get(r.datasetId) ?? 0) + 1);
  const dataset = newestFirst.reduce((best, r) => (counts.get(r.datasetId)! > counts.get(best)! ? r.datasetId : best), newestFirst[0]!.datasetId);
  const onDataset = newestFirst.filter((r) => r.datasetId === dataset);
  const main = onDataset.find((r) => r.pipelineId && r.branch === "main");
  if (main) return { run: main, rule: choice("main", "Default baseline: the pipeline's main branch, its newest finished run on this dataset.") };
  const strength = (r: R) => metricsSchema.parse(r.metrics)[BASELINE_STRENGTH_METRIC] ?? -Infinity;
  const strongest = (list: R[]) => list.reduce<R | null>((best, r) => (!best || strength(r) > strength(best) ? r : best), null);
  const real = strongest(onDataset.filter((r) => !offlineStandIn(r.template)));
  if (real) return { run: real, rule: choice("strongest", `Default baseline: no pipeline's main branch was scored on this dataset, so the strongest real run by ${BASELINE_STRENGTH_METRIC} (not a template's offline stand-in).`) };
  return { run: strongest(onDataset), rule: choice("strongest", `Default baseline: every run here is a template's offline stand-in, so the strongest of them by ${BASELINE_STRENGTH_METRIC}.`) };
}

/**
 * The leaderboard of `runIds` (this workspace's only: an id of another workspace is not found)
 * against `baselineId`, by default defaultBaseline's pick.
 */
export async function evalLeaderboard(db: Db, workspaceId: string, input: { runIds: string[]; baselineId?: string }): Promise<Leaderboard> {
  const ids = [...new Set([...(input.baselineId ? [input.baselineId] : []), ...input.runIds])];
  if (!ids.length) throw badRequest("Name at least one eval run to compare.");
  if (ids.length > MAX_LEADERBOARD_RUNS) throw badRequest(`At most ${MAX_LEADERBOARD_RUNS} eval runs fit one leaderboard (${ids.length} given).`);
  const found = await db.evalRun.findMany({ where: { workspaceId, id: { in: ids } }, select: SELECT });
  const byId = new Map(found.map((r) => [r.id, r]));
  const missing = ids.filter((id) => !byId.has(id));
  if (missing.length) throw notFound(`Eval run${missing.length > 1 ? "s" : ""} ${missing.join(", ")} not found in this workspace.`);
  const runs = ids.map((id) => byId.get(id)!);
  const names = await runNames(db, workspaceId, runs);

  const completed = runs.filter((r) => r.status === "completed");
  const picked = input.baselineId ? null : defaultBaseline(runs);
  const baseline = input.baselineId ? byId.get(input.baselineId)! : picked!.run;
  const baselineRule: BaselineChoice = picked?.rule ?? choice("chosen", "The baseline was chosen for this comparison (not the default).");
  if (baseline && baseline.status !== "completed") throw badRequest(`The baseline ${baseline.id} is ${baseline.status}: pick a completed run as the baseline.`);

  const parsed = new Map(completed.map((r) => [r.id, metricsSchema.parse(r.metrics)]));
  const metrics: string[] = [...LEADERBOARD_METRICS, ...OPTIONAL_METRICS.filter((m) => completed.some((r) => parsed.get(r.id)![m] !== undefined))];

  // The per-question vectors (the largest column) are read only for intervals not computed yet.
  const uncached = (r: (typeof runs)[number]) =>
    !!baseline &&
    r.id !== baseline.id &&
    r.datasetId === baseline.datasetId &&
    metrics.some((m) => parsed.get(r.id)![m as MetricName] != null && parsed.get(baseline.id)![m as MetricName] != null && !intervals.has(intervalKey(r.id, baseline.id, m)));
  const need = completed.filter(uncached).map((r) => r.id);
  const aggregates = new Map<string, EvalAggregates | null>();
  if (need.length) {
    const stored = await db.evalRun.findMany({ where: { workspaceId, id: { in: [baseline!.id, ...need] } }, select: { id: true, aggregates: true } });
    for (const row of stored) aggregates.set(row.id, await ensureAggregates(db, { ...byId.get(row.id)!, aggregates: row.aggregates }));
  }

  const baseAgg = baseline ? aggregates.get(baseline.id) : null;
  const base = baseAgg ? vectors(baseAgg, metrics) : null;
  const plans = new Map<number, BootstrapPlan>();

  const rows = runs.map((r): LeaderboardRow => {
    const done = r.status === "completed";
    const values = done ? parsed.get(r.id)! : {};
    const comparable = !!baseline && done && r.datasetId === baseline.datasetId;
    const agg = aggregates.get(r.id);
    const mine = agg && base && comparable && r.id !== baseline!.id ? vectors(agg, metrics) : null;
    // Questions both runs scored (the same ids), in the baseline's order.
    const shared = mine ? [...base!.index.keys()].filter((q) => mine.index.has(q)) : [];
    const cells: Record<string, LeaderboardCell> = {};
    for (const m of metrics) {
      const value = values[m as MetricName] ?? null;
      const baseValue = baseline && comparable ? (parsed.get(baseline.id)![m as MetricName] ?? null) : null;
      if (!baseline || r.id === baseline.id || value === null || baseValue === null) {
        cells[m] = { value, delta: null, ci95: null, withinNoise: null };
        continue;
      }
      // Completed runs never change: an interval computed once is served from memory after.
      const key = intervalKey(r.id, baseline.id, m);
      let paired = intervals.get(key);
      const a = mine?.values[m];
      const b = base?.values[m];
      if (!paired && a && b && shared.length) {
        const d = pairedDelta(
          shared.map((q) => a[mine!.index.get(q)!] ?? null),
          shared.map((q) => b[base!.index.get(q)!] ?? null),
          plans,
        );
        paired = { ci95: d.ci95, withinNoise: d.ci95 ? d.withinNoise : null };
        remember(key, paired);
      }
      cells[m] = { value, delta: value - baseValue, ci95: paired?.ci95 ?? null, withinNoise: paired?.withinNoise ?? null };
    }
    const cost = evalCostSchema.parse(r.cost ?? {});
    const latency = latencySchema.parse(r.latency ?? {});
    const judge = judgeRecordSchema.safeParse(r.judge);
    const spent = judge.success && judge.data.measured ? (judge.data.spentUsd ?? 0) : 0;
    const note = !done ? null : !baseline ? null : r.datasetId !== baseline.datasetId ? "scored another dataset than the baseline: no deltas" : null;
    return {
      id: r.id,
      label: evalLabel(r, names),
      kind: r.template ? "template" : "branch",
      pipelineId: r.pipelineId,
      template: r.template,
      branch: r.branch,
      version: runVersion(r, names),
      specHash: r.specHash.slice(0, 7),
      mode: r.mode,
      step: r.step,
      status: r.status,
      error: r.error,
      progress: done ? null : progressOf(r.progress),
      isBaseline: r.id === baseline?.id,
      questions: r.questions,
      questionsApart: done ? questionsApart(r.perCategory, r.questions) : null,
      metrics: cells,
      buildCostUsd: done ? (cost.buildCostUsd ?? 0) : null,
      buildTokens: done ? (cost.buildTokens ?? 0) : null,
      queryTokens: done ? (values.context_tokens ?? null) : null,
      queryCostUsd: done ? (r.questions ? spent / r.questions : 0) : null,
      latencyP50Ms: done ? (latency.p50 ?? null) : null,
      latencyP95Ms: done ? (latency.p95 ?? null) : null,
      offlineStandIn: offlineStandIn(r.template),
      note,
      createdAt: r.createdAt,
      finishedAt: r.finishedAt,
    };
  });
  // Baseline first, then completed runs in the order asked, then the ones still running or failed.
  const rank = (row: LeaderboardRow) => (row.isBaseline ? 0 : row.status === "completed" ? 1 : 2);
  rows.sort((a, b) => rank(a) - rank(b));
  return {
    baselineId: baseline?.id ?? null,
    baselineRule,
    benchmark: baseline?.benchmark ?? runs[0]!.benchmark,
    datasetId: baseline?.datasetId ?? runs[0]!.datasetId,
    metrics,
    lowerIsBetter: [...LOWER_IS_BETTER],
    apartLabel: apartLabel(baseline?.benchmark ?? runs[0]!.benchmark),
    rows,
  };
}
