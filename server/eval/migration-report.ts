/**
 * The migration report (issue 50): a candidate branch (another architecture on the same raw data)
 * against main, on the team's own questions and traffic, in one read:
 *
 * - question sets: the latest completed evals of one team question set on both branches — every
 *   leaderboard metric with its paired 95% interval (leaderboard.ts), cost and latency per query,
 *   and the questions main answered and the candidate does not (compare-questions.ts), each with
 *   the records that answer it;
 * - replay of the logged traffic (replay.ts): overlap, RBO, citation recall and the judge's
 *   preference with their intervals, latency p50/p95 per side, and the queries that got worse
 *   (a cited record lost, or the judge preferring main) with the records main served and the
 *   candidate lost;
 * - shadow traffic (shadow-report.ts), when the candidate shadowed main;
 * - cost: what a full build of each costs (services/cost.ts) and what the candidate's runs spent.
 * Nothing here computes a metric of its own: it reads the existing computations side by side.
 */
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { planWithCost } from "../services/cost";
import { getBranch } from "../services/pipelines";
import { parseRunStats } from "../store/runs";
import { compareQuestions } from "./compare-questions";
import { evalLeaderboard, type LeaderboardCell } from "./leaderboard-rows";
import { percentile } from "./metrics";
import { getQuestionSet, QUESTION_SET_BENCHMARK } from "./question-sets";
import { replayQueries, type ReplayInput } from "./replay";
import type { PairedInterval } from "./replay-metrics";
import { shadowReport } from "./shadow-report";

/** One metric, both sides, and the candidate − main difference with its 95% interval. */
export interface ReportMetric {
  /** Where it was measured. */
  from: "question-set" | "replay" | "shadow";
  metric: string;
  main: number | null;
  candidate: number | null;
  delta: number | null;
  ci95: [number, number] | null;
  /** Pairs (questions or queries) the interval is over. */
  n: number | null;
  lowerIsBetter: boolean;
}

export interface MigrationReportInput {
  workspaceId: string;
  pipelineId: string;
  branch: string;
  baseline?: string;
  /** A team question set (id or name); default: the newest one both branches were scored on. */
  questionSet?: string;
  /** Replay options (a window, a sample, a judge model); `false` leaves replay out. */
  replay?: Pick<ReplayInput, "from" | "to" | "sample" | "seed" | "k" | "judgeModel" | "budgetUsd"> | false;
  /** Worse questions and queries listed (default 50). */
  limit?: number;
}

const interval = (p: PairedInterval): [number, number] | null => (p.low !== null && p.high !== null ? [p.low, p.high] : null);
const latency = (xs: number[]) => (xs.length ? { p50: percentile(xs, 50), p95: percentile(xs, 95) } : { p50: null, p95: null });

/** The newest completed question-set evals of `branch` and `baseline`, on one set both were scored on. */
async function questionSetRuns(db: Db, input: MigrationReportInput, baseline: string) {
  const setId = input.questionSet ? (await getQuestionSet(db, input.workspaceId, input.questionSet)).id : undefined;
  const runs = await db.evalRun.findMany({
    where: { workspaceId: input.workspaceId, pipelineId: input.pipelineId, benchmark: QUESTION_SET_BENCHMARK, status: "completed", branch: { in: [input.branch, baseline] }, ...(setId ? { datasetId: setId } : {}) },
    orderBy: { createdAt: "desc" },
    select: { id: true, branch: true, datasetId: true },
  });
  for (const c of runs.filter((r) => r.branch === input.branch)) {
    const m = runs.find((r) => r.branch === baseline && r.datasetId === c.datasetId);
    if (m) return { main: m.id, candidate: c.id, setId: c.datasetId };
  }
  return null;
}

async function questionSetPart(db: Db, input: MigrationReportInput, baseline: string, limit: number) {
  const pair = await questionSetRuns(db, input, baseline);
  if (!pair) {
    const how = `score a question set on both: synthex eval --question-set <set> --branch ${baseline} and --branch ${input.branch}`;
    return { part: null, metrics: [] as ReportMetric[], note: `Question sets: not measured (no completed eval of one question set on both branches; ${how}).` };
  }
  const board = await evalLeaderboard(db, input.workspaceId, { runIds: [pair.main, pair.candidate], baselineId: pair.main });
  const [mainRow, candRow] = [board.rows.find((r) => r.id === pair.main)!, board.rows.find((r) => r.id === pair.candidate)!];
  const lower = new Set(board.lowerIsBetter);
  const metrics: ReportMetric[] = board.metrics.map((m) => {
    const a: LeaderboardCell | undefined = mainRow.metrics[m];
    const b: LeaderboardCell | undefined = candRow.metrics[m];
    return { from: "question-set", metric: m, main: a?.value ?? null, candidate: b?.value ?? null, delta: b?.delta ?? null, ci95: b?.ci95 ?? null, n: candRow.questions, lowerIsBetter: lower.has(m) };
  });
  const set = await getQuestionSet(db, input.workspaceId, pair.setId);
  const byId = new Map(set.questions.map((q) => [q.id, q]));
  const outcomes = await compareQuestions(db, input.workspaceId, { baselineId: pair.main, otherId: pair.candidate, metric: "session_hit@5" });
  const worse = outcomes.rows
    .filter((r) => r.outcome === "regressed")
    .slice(0, limit)
    .map((r) => ({ questionId: r.questionId, question: r.question, main: r.base, candidate: r.other, recordIds: byId.get(r.questionId)?.recordIds ?? [], sourceIds: byId.get(r.questionId)?.sources ?? [] }));
  return {
    part: {
      set: { id: set.id, name: set.name, questions: set.questions.length },
      evalRuns: { main: pair.main, candidate: pair.candidate },
      outcomeMetric: outcomes.metric,
      counts: outcomes.counts,
      latencyMs: { main: { p50: mainRow.latencyP50Ms, p95: mainRow.latencyP95Ms }, candidate: { p50: candRow.latencyP50Ms, p95: candRow.latencyP95Ms } },
      perQuery: { main: { tokens: mainRow.queryTokens, costUsd: mainRow.queryCostUsd }, candidate: { tokens: candRow.queryTokens, costUsd: candRow.queryCostUsd } },
      worse,
    },
    metrics,
    note: null,
  };
}

async function replayPart(db: Db, input: MigrationReportInput, baseline: string, limit: number) {
  if (input.replay === false) return { part: null, metrics: [] as ReportMetric[], note: "Replay: left out of this report." };
  const replay = await replayQueries(db, { workspaceId: input.workspaceId, pipelineId: input.pipelineId, branch: input.branch, baseline, ...(input.replay ?? {}) });
  const ok = replay.queries.filter((q) => !q.error);
  if (!ok.length) return { part: null, metrics: [], note: "Replay: not measured (no logged search or ask to replay: turn the query log on and let agents call the pipeline)." };
  const s = replay.summary;
  const metrics: ReportMetric[] = [
    { from: "replay", metric: "overlap@k", main: 1, candidate: s.meanOverlap, delta: s.meanOverlap - 1, ci95: null, n: s.replayed, lowerIsBetter: false },
    { from: "replay", metric: "citation_recall", main: s.citationRecall.main, candidate: s.citationRecall.branch, delta: s.citationRecall.diff.n ? s.citationRecall.diff.mean : null, ci95: interval(s.citationRecall.diff), n: s.citationRecall.diff.n, lowerIsBetter: false },
    { from: "replay", metric: "latency_ms", main: s.meanLatencyMs.main, candidate: s.meanLatencyMs.branch, delta: s.latencyDiff.mean, ci95: interval(s.latencyDiff), n: s.latencyDiff.n, lowerIsBetter: true },
  ];
  const pref = s.preference;
  if (pref.measured) {
    metrics.push({ from: "replay", metric: "judge_preference", main: null, candidate: pref.winRate, delta: pref.interval.n ? pref.interval.mean : null, ci95: interval(pref.interval), n: pref.interval.n, lowerIsBetter: false });
  }
  const worse = ok
    .map((q) => {
      const why: string[] = [];
      if (q.main.citationRecall !== null && q.branch.citationRecall !== null && q.branch.citationRecall < q.main.citationRecall) why.push("lost a cited record");
      if (q.preference?.winner === "main") why.push("the judge preferred main");
      return { q, why };
    })
    .filter((w) => w.why.length)
    .slice(0, limit)
    .map(({ q, why }) => ({ entryId: q.entryId, kind: q.kind, query: q.query, scope: q.scope, why, cited: q.cited, lost: q.lost, mainIds: q.main.ids.slice(0, 10), candidateIds: q.branch.ids.slice(0, 10) }));
  return {
    part: {
      replayed: s.replayed,
      skipped: replay.skipped,
      failed: replay.queries.length - ok.length,
      meanOverlap: s.meanOverlap,
      meanRbo: s.meanRbo,
      gained: s.gained,
      lost: s.lost,
      latencyMs: { main: latency(ok.map((q) => q.main.latencyMs)), candidate: latency(ok.map((q) => q.branch.latencyMs)) },
      preference: pref,
      worse,
    },
    metrics,
    note: pref.measured ? null : `Replay: ${pref.reason}.`,
  };
}

async function shadowPart(db: Db, input: MigrationReportInput) {
  const report = await shadowReport(db, input.workspaceId, input.pipelineId, { branch: input.branch, limit: 0 });
  if (!report.shadow) return { part: null, metrics: [] as ReportMetric[], note: `Shadow traffic: not measured (start it with synthex shadow start --branch ${input.branch}).` };
  const s = report.summary;
  const metrics: ReportMetric[] = [
    { from: "shadow", metric: "overlap@k", main: 1, candidate: s.meanOverlap, delta: s.meanOverlap - 1, ci95: null, n: s.replayed, lowerIsBetter: false },
    { from: "shadow", metric: "citation_recall", main: s.citationRecall.main, candidate: s.citationRecall.branch, delta: s.citationRecall.diff.n ? s.citationRecall.diff.mean : null, ci95: interval(s.citationRecall.diff), n: s.citationRecall.diff.n, lowerIsBetter: false },
    { from: "shadow", metric: "latency_ms", main: s.meanLatencyMs.main, candidate: s.meanLatencyMs.branch, delta: s.latencyDiff.mean, ci95: interval(s.latencyDiff), n: s.latencyDiff.n, lowerIsBetter: true },
  ];
  return { part: { shadowId: report.shadow.id, state: report.shadow.state, startsAt: report.shadow.startsAt, endsAt: report.shadow.endsAt, compared: s.replayed, failed: report.failed }, metrics, note: null };
}

/** What each branch costs to build in full (the plan's estimate) and what its runs spent so far. */
async function costPart(db: Db, input: MigrationReportInput, baseline: string) {
  const plan = await planWithCost(db, input.pipelineId, input.branch);
  const spent = async (branch: string) => {
    const { branch: row } = await getBranch(db, input.pipelineId, branch);
    const runs = await db.run.findMany({ where: { branchId: row.id, status: { in: ["completed", "completed_with_errors"] } }, select: { id: true, stats: true } });
    const steps = runs.flatMap((r) => parseRunStats(r).steps);
    return { costUsd: steps.reduce((n, s) => n + s.costUsd, 0), tokens: steps.reduce((n, s) => n + s.tokensIn + s.tokensOut, 0), runs: runs.length };
  };
  const mainFull = baseline === "main" ? (plan.main?.fullCostUsd ?? null) : (await planWithCost(db, input.pipelineId, baseline, { full: true })).totals.fullCostUsd;
  return {
    build: {
      main: { fullCostUsd: mainFull, spent: await spent(baseline) },
      candidate: { fullCostUsd: plan.totals.fullCostUsd, spent: await spent(input.branch), pendingCostUsd: plan.totals.estimatedCostUsd, pending: plan.totals.pending },
      ratio: plan.costRatioVsMain ?? null,
    },
  };
}

/** The candidate against main: every metric with its interval, cost, latency, and what got worse. */
export async function migrationReport(db: Db, input: MigrationReportInput) {
  const baseline = input.baseline ?? "main";
  if (input.branch === baseline) throw badRequest(`branch: pick the candidate branch to report on (it is the baseline, "${baseline}").`);
  await Promise.all([getBranch(db, input.pipelineId, input.branch), getBranch(db, input.pipelineId, baseline)]);
  const limit = input.limit ?? 50;
  const questions = await questionSetPart(db, input, baseline, limit);
  const replay = await replayPart(db, input, baseline, limit);
  const shadow = await shadowPart(db, input);
  const cost = await costPart(db, input, baseline);
  return {
    branch: input.branch,
    baseline,
    metrics: [...questions.metrics, ...replay.metrics, ...shadow.metrics],
    questionSet: questions.part,
    replay: replay.part,
    shadow: shadow.part,
    cost,
    notes: [questions.note, replay.note, shadow.note].filter((n): n is string => Boolean(n)),
  };
}

export type MigrationReport = Awaited<ReturnType<typeof migrationReport>>;
