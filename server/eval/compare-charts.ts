/**
 * The data of the compare page's charts, each answering one question:
 * - accuracy against cost: which runs are dominated (another run is at least as accurate for at
 *   most the cost, and better in one of the two) — the Pareto frontier;
 * - per category, each run's delta to the baseline (a heatmap: runs × categories);
 * - a metric over time for the runs' branches (history of the labels on the page, and every
 *   branch of the baseline's pipeline) on the same dataset;
 * - cost per step: what each run's memory cost to build, step by step.
 * Reads run rows only (their stored metrics, categories, cost, latency), never the cases.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { ensureAggregates, type EvalAggregates } from "./aggregates";
import { BootstrapPlan, pairedDelta } from "./bootstrap";
import { COST_AXIS_LABELS, type CostAxis } from "./compare-kinds";
import { LOWER_IS_BETTER, type MetricName, type Metrics } from "./metrics";
import { evalLabel, runNames } from "./run-labels";
import { evalCostSchema, latencySchema, metricsSchema, perCategorySchema } from "./stored";


export interface ParetoInput {
  id: string;
  cost: number;
  value: number;
}

/**
 * Marks each point dominated or not. Cost is always lower-better; `value` is higher-better unless
 * `lowerIsBetter`. A point is dominated by another that is no worse on both and better on one;
 * `frontier` lists the undominated points by ascending cost (the line the chart draws).
 */
export function paretoFrontier(points: readonly ParetoInput[], lowerIsBetter = false) {
  const better = (a: number, b: number) => (lowerIsBetter ? a < b : a > b);
  const noWorse = (a: number, b: number) => (lowerIsBetter ? a <= b : a >= b);
  const marked = points.map((p) => {
    const by = points.filter((q) => q.id !== p.id && q.cost <= p.cost && noWorse(q.value, p.value) && (q.cost < p.cost || better(q.value, p.value)));
    return { ...p, dominated: by.length > 0, dominatedBy: by.map((q) => q.id) };
  });
  const frontier = marked.filter((p) => !p.dominated).sort((a, b) => a.cost - b.cost || a.id.localeCompare(b.id));
  return { points: marked, frontier: frontier.map((p) => p.id) };
}

export interface RunAggregates {
  id: string;
  metrics: Metrics;
  perCategory: Record<string, Metrics & { questions: number }>;
}

/**
 * The per-category 95% interval of a run's delta to the baseline: the leaderboard's paired
 * bootstrap (bootstrap.ts, same resamples and seed), over the questions of that category both runs
 * scored (aligned by question id). Null without both runs' per-question values or with < 2 pairs.
 */
export function categoryInterval(run: EvalAggregates | null | undefined, baseline: EvalAggregates | null | undefined, category: string, metric: MetricName, plans: Map<number, BootstrapPlan>) {
  const a = run?.metrics[metric];
  const b = baseline?.metrics[metric];
  if (!run || !baseline || !a || !b) return { ci95: null, withinNoise: null };
  const baseIndex = new Map<string, number>();
  baseline.questionIds.forEach((q, i) => baseline.categories[i] === category && baseIndex.set(q, i));
  const mine: Array<number | null> = [];
  const theirs: Array<number | null> = [];
  run.questionIds.forEach((q, i) => {
    const j = run.categories[i] === category ? baseIndex.get(q) : undefined;
    if (j === undefined) return;
    mine.push(a[i] ?? null);
    theirs.push(b[j] ?? null);
  });
  const d = pairedDelta(mine, theirs, plans);
  return d.ci95 ? { ci95: d.ci95, withinNoise: d.withinNoise } : { ci95: null, withinNoise: null };
}

/**
 * Runs × categories: each cell the run's value of `metric` in that category and its delta to the
 * baseline's (null where either run has no such category), with the delta's 95% interval and
 * whether it is within noise (from the runs' per-question `aggregates`, when given; the baseline's
 * own cells have none). Categories sorted by key.
 */
export function categoryDeltaGrid(runs: readonly RunAggregates[], baselineId: string, metric: MetricName, aggregates: ReadonlyMap<string, EvalAggregates | null> = new Map()) {
  const baseline = runs.find((r) => r.id === baselineId);
  if (!baseline) throw new Error(`baseline ${baselineId} is not among the runs`);
  const categories = [...new Set(runs.flatMap((r) => Object.keys(r.perCategory)))].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  const plans = new Map<number, BootstrapPlan>();
  return {
    categories: categories.map((key) => ({ key, questions: baseline.perCategory[key]?.questions ?? Math.max(0, ...runs.map((r) => r.perCategory[key]?.questions ?? 0)) })),
    rows: runs.map((r) => ({
      runId: r.id,
      cells: categories.map((key) => {
        const value = r.perCategory[key]?.[metric];
        const base = baseline.perCategory[key]?.[metric];
        const delta = value !== undefined && base !== undefined ? value - base : null;
        const noise = r.id !== baselineId && delta !== null ? categoryInterval(aggregates.get(r.id), aggregates.get(baselineId), key, metric, plans) : { ci95: null, withinNoise: null };
        return { category: key, value: value ?? null, delta, ...noise };
      }),
    })),
  };
}

export interface HistoryRun {
  id: string;
  label: string;
  at: Date;
  metrics: Metrics;
}

/** One series per label, points in time order (runs without the metric left out). */
export function historySeries(runs: readonly HistoryRun[], metric: MetricName) {
  const series = new Map<string, Array<{ runId: string; at: string; value: number }>>();
  for (const r of [...runs].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const value = r.metrics[metric];
    if (value === undefined) continue;
    const list = series.get(r.label) ?? [];
    list.push({ runId: r.id, at: r.at.toISOString(), value });
    series.set(r.label, list);
  }
  return [...series.entries()].map(([label, points]) => ({ label, points }));
}

const RUN_SELECT = {
  id: true,
  status: true,
  pipelineId: true,
  template: true,
  branch: true,
  versionId: true,
  specHash: true,
  datasetId: true,
  mode: true,
  step: true,
  metrics: true,
  perCategory: true,
  cost: true,
  latency: true,
  createdAt: true,
  finishedAt: true,
} as const;

/** Runs kept in the history chart (the newest of them). */
const HISTORY_RUNS = 300;

/** The charts of a baseline beside others: Pareto points, category deltas, cost per step, history. */
export async function compareCharts(db: Db, workspaceId: string, input: { baselineId: string; otherIds: string[]; metric: MetricName; cost: CostAxis }) {
  const ids = [input.baselineId, ...input.otherIds.filter((id) => id !== input.baselineId)];
  const rows = await db.evalRun.findMany({ where: { workspaceId, id: { in: ids } }, select: RUN_SELECT });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered = ids.map((id) => {
    const r = byId.get(id);
    if (!r) throw notFound(`Eval run ${id} not found.`);
    return r;
  });
  const baseline = ordered[0]!;
  for (const r of ordered) {
    if (r.status !== "completed") throw badRequest(`Eval run ${r.id} is ${r.status}: only completed runs are charted.`);
    if (r.datasetId !== baseline.datasetId) throw badRequest(`Eval run ${r.id} scored another dataset than the baseline ${baseline.id}: compare runs of one benchmark file.`);
  }
  const history = await db.evalRun.findMany({
    where: {
      workspaceId,
      datasetId: baseline.datasetId,
      status: "completed",
      OR: [
        ...(baseline.pipelineId ? [{ pipelineId: baseline.pipelineId }] : []),
        ...ordered.map((r) => (r.template ? { template: r.template } : { pipelineId: r.pipelineId, branch: r.branch })),
      ],
    },
    orderBy: { createdAt: "desc" },
    take: HISTORY_RUNS,
    select: RUN_SELECT,
  });
  const names = await runNames(db, workspaceId, [...ordered, ...history]);

  // Per-question values (computed once per completed run) for the category cells' intervals.
  const stored = await db.evalRun.findMany({ where: { workspaceId, id: { in: ids } }, select: { id: true, workspaceId: true, status: true, benchmark: true, datasetId: true, aggregates: true } });
  const aggregates = new Map<string, EvalAggregates | null>();
  for (const row of stored) aggregates.set(row.id, await ensureAggregates(db, row));

  const runs = ordered.map((r) => {
    const cost = evalCostSchema.parse(r.cost ?? {});
    return {
      id: r.id,
      label: evalLabel(r, names),
      mode: r.mode,
      step: r.step,
      metrics: metricsSchema.parse(r.metrics),
      perCategory: perCategorySchema.parse(r.perCategory),
      cost,
      latency: latencySchema.parse(r.latency ?? {}),
    };
  });
  const costOf = (r: (typeof runs)[number]): number =>
    input.cost === "contextTokens" ? (r.metrics.context_tokens ?? 0) : input.cost === "buildTokens" ? (r.cost.buildTokens ?? 0) : input.cost === "latencyP50" ? (r.latency.p50 ?? 0) : (r.cost.buildCostUsd ?? 0);
  const pareto = paretoFrontier(
    runs.map((r) => ({ id: r.id, cost: costOf(r), value: r.metrics[input.metric] ?? 0 })),
    LOWER_IS_BETTER.has(input.metric),
  );
  const steps = [...new Set(runs.flatMap((r) => (r.cost.perStep ?? []).map((s) => s.step)))];
  return {
    baselineId: baseline.id,
    datasetId: baseline.datasetId,
    metric: input.metric,
    cost: input.cost,
    costLabel: COST_AXIS_LABELS[input.cost],
    runs: runs.map((r) => ({ id: r.id, label: r.label, mode: r.mode, step: r.step })),
    pareto,
    categories: categoryDeltaGrid(runs, baseline.id, input.metric, aggregates),
    costPerStep: {
      steps,
      rows: runs.map((r) => ({
        runId: r.id,
        buildTokens: r.cost.buildTokens ?? 0,
        buildCostUsd: r.cost.buildCostUsd ?? 0,
        contextTokens: r.metrics.context_tokens ?? null,
        latencyP50: r.latency.p50 ?? null,
        perStep: (r.cost.perStep ?? []).map((s) => ({ step: s.step, records: s.records, tokens: s.tokensIn + s.tokensOut, costUsd: s.costUsd })),
      })),
    },
    history: historySeries(
      history.map((r) => ({ id: r.id, label: evalLabel(r, names), at: r.finishedAt ?? r.createdAt, metrics: metricsSchema.parse(r.metrics) })),
      input.metric,
    ),
  };
}

