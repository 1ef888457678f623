/**
 * Question by question: a baseline eval run against one other run, each question in exactly one
 * outcome (regressed, improved, both wrong, both right, or only in one run), so the counts add up
 * to the number of questions; and one question drilled down: the gold evidence and each run's top
 * hits side by side, the hits that reach the evidence marked, with where to open each record.
 *
 * (The older `compareEvalRuns` marked a question "regressed" when any of the other runs lost it,
 * with a looser rule for regressions than for improvements, and counted adversarial questions that
 * the headline `questions` leaves out — hence "391 regressed, 18 improved" for 383 questions.)
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { ensureAggregates } from "./aggregates";
import { apartLabel, QUESTION_OUTCOMES, RIGHT_AT, type OutcomeMetric, type QuestionOutcome } from "./compare-kinds";
import { METRIC_NAMES, type Metrics } from "./metrics";
import { evidenceSchema, metricsSchema, storedHitsSchema } from "./stored";

const isRight = (scores: Metrics | undefined, metric: OutcomeMetric) => (scores?.[metric] ?? 0) >= RIGHT_AT;

/** One outcome per question: both runs right or wrong, or which way it moved; absent from one run apart. */
export function questionOutcome(base: Metrics | undefined, other: Metrics | undefined, metric: OutcomeMetric): QuestionOutcome {
  if (!base || !other) return "only_one";
  const b = isRight(base, metric);
  const o = isRight(other, metric);
  return b && !o ? "regressed" : !b && o ? "improved" : b ? "both_right" : "both_wrong";
}

export interface CaseScores {
  questionId: string;
  question: string;
  category: string;
  sample: string;
  scores: Metrics;
}

export interface QuestionRow {
  questionId: string;
  question: string;
  category: string;
  sample: string;
  outcome: QuestionOutcome;
  base: number | null;
  other: number | null;
  /** Scored apart (adversarial, abstention): not in the headline metrics nor the leaderboard's count. */
  apart: boolean;
}

const ORDER: Record<QuestionOutcome, number> = { regressed: 0, improved: 1, both_wrong: 2, only_one: 3, both_right: 4 };

/**
 * Every question of either run, once, with its outcome; `counts` has one entry per outcome and
 * they sum to `total` (= rows). Regressions first, then improvements, both wrong, the rest.
 * `scored` + `apart` = `total`: `scored` is the leaderboard's question count, `apart` the questions
 * scored apart (`apartIds`) that it leaves out — said on screen so the two counts agree.
 */
export function questionOutcomes(baseCases: readonly CaseScores[], otherCases: readonly CaseScores[], metric: OutcomeMetric, apartIds: ReadonlySet<string> = new Set()) {
  const other = new Map(otherCases.map((c) => [c.questionId, c]));
  const seen = new Set<string>();
  const rows: QuestionRow[] = [];
  const row = (c: CaseScores, b: CaseScores | undefined, o: CaseScores | undefined): QuestionRow => ({
    questionId: c.questionId,
    question: c.question,
    category: c.category,
    sample: c.sample,
    outcome: questionOutcome(b?.scores, o?.scores, metric),
    base: b ? (b.scores[metric] ?? 0) : null,
    other: o ? (o.scores[metric] ?? 0) : null,
    apart: apartIds.has(c.questionId),
  });
  for (const b of baseCases) {
    if (seen.has(b.questionId)) continue;
    seen.add(b.questionId);
    rows.push(row(b, b, other.get(b.questionId)));
  }
  for (const o of otherCases) {
    if (seen.has(o.questionId)) continue;
    seen.add(o.questionId);
    rows.push(row(o, undefined, o));
  }
  rows.sort((a, b) => ORDER[a.outcome] - ORDER[b.outcome]);
  const counts = Object.fromEntries(QUESTION_OUTCOMES.map((k) => [k, rows.filter((r) => r.outcome === k).length])) as Record<QuestionOutcome, number>;
  const apart = rows.filter((r) => r.apart).length;
  return { rows, counts, total: rows.length, scored: rows.length - apart, apart };
}

async function completedRun(db: Db, workspaceId: string, id: string) {
  const run = await db.evalRun.findFirst({
    where: { id, workspaceId },
    select: { id: true, workspaceId: true, status: true, benchmark: true, datasetId: true, pipelineId: true, template: true, branch: true, evalPipelineId: true },
  });
  if (!run) throw notFound(`Eval run ${id} not found.`);
  if (run.status !== "completed") throw badRequest(`Eval run ${id} is ${run.status}: only completed runs can be compared question by question.`);
  return run;
}

/** A run's cases without their hits (scores only): small rows, read in one query per run. */
async function caseScores(db: Db, workspaceId: string, evalRunId: string): Promise<CaseScores[]> {
  const rows = await db.evalCase.findMany({
    where: { workspaceId, evalRunId },
    orderBy: { position: "asc" },
    select: { questionId: true, question: true, category: true, sample: true, scores: true },
  });
  return rows.map((r) => ({ ...r, scores: metricsSchema.parse(r.scores) }));
}

/** The baseline against one other run, every question once with its outcome by `metric`. */
export async function compareQuestions(db: Db, workspaceId: string, input: { baselineId: string; otherId: string; metric: OutcomeMetric }) {
  const [base, other] = await Promise.all([completedRun(db, workspaceId, input.baselineId), completedRun(db, workspaceId, input.otherId)]);
  if (base.datasetId !== other.datasetId) throw badRequest(`Eval run ${other.id} scored another dataset than the baseline ${base.id}: compare runs of one benchmark file.`);
  const [baseCases, otherCases] = await Promise.all([caseScores(db, workspaceId, base.id), caseScores(db, workspaceId, other.id)]);
  const apartIds = await apartQuestionIds(db, [base, other]);
  return {
    baselineId: base.id,
    otherId: other.id,
    metric: input.metric,
    rightAt: RIGHT_AT,
    apartLabel: apartLabel(base.benchmark),
    ...questionOutcomes(baseCases, otherCases, input.metric, apartIds),
  };
}

/** The questions the runs scored apart (from their aggregates, built once per completed run). */
async function apartQuestionIds(db: Db, runs: Array<{ id: string; workspaceId: string; status: string; benchmark: string; datasetId: string }>) {
  const ids = new Set<string>();
  const stored = await db.evalRun.findMany({ where: { id: { in: runs.map((r) => r.id) } }, select: { id: true, aggregates: true } });
  for (const run of runs) {
    const agg = await ensureAggregates(db, { ...run, aggregates: stored.find((s) => s.id === run.id)?.aggregates ?? null });
    agg?.questionIds.forEach((q, i) => agg.apart[i] && ids.add(q));
  }
  return ids;
}

/** Hits per run the drill-down shows. */
export const DRILLDOWN_HITS = 5;

/**
 * One question in several runs: its gold answer and evidence (turn and session ids), and per run
 * the top hits with which of them reach the evidence (a gold turn, or an evidence session when
 * the benchmark names only sessions), and the eval copy and branch their record pages live on.
 */
export async function questionDrilldown(db: Db, workspaceId: string, input: { runIds: string[]; questionId: string; hits?: number }) {
  const runIds = [...new Set(input.runIds)];
  const runs = await Promise.all(runIds.map((id) => completedRun(db, workspaceId, id)));
  const datasets = new Set(runs.map((r) => r.datasetId));
  if (datasets.size > 1) throw badRequest("These eval runs scored different datasets: drill into a question of one benchmark file.");
  const cases = await db.evalCase.findMany({
    where: { workspaceId, evalRunId: { in: runIds }, questionId: input.questionId },
    select: { id: true, evalRunId: true, question: true, category: true, sample: true, gold: true, evidence: true, retrieved: true, answer: true, scores: true },
  });
  const first = cases[0];
  if (!first) throw notFound(`Question ${input.questionId} is not in these eval runs.`);
  const evidence = evidenceSchema.parse(first.evidence);
  const evidenceSessions = new Set(evidence.sessions);
  const take = Math.min(Math.max(input.hits ?? DRILLDOWN_HITS, 1), 20);
  return {
    questionId: input.questionId,
    question: first.question,
    category: first.category,
    sample: first.sample,
    gold: first.gold,
    evidence,
    runs: runs.map((run) => {
      const c = cases.find((x) => x.evalRunId === run.id);
      const hits = c
        ? storedHitsSchema
            .parse(c.retrieved)
            .slice(0, take)
            .map((h) => {
              const sessions = h.sessions.filter((s) => evidenceSessions.has(s));
              return { ...h, evidence: h.goldTurns.length > 0 || (evidence.turns.length === 0 && sessions.length > 0), evidenceSessions: sessions };
            })
        : [];
      const scores = c ? metricsSchema.parse(c.scores) : null;
      return {
        runId: run.id,
        caseId: c?.id ?? null,
        answer: c?.answer ?? null,
        scores: scores ? Object.fromEntries(METRIC_NAMES.filter((m) => scores[m] !== undefined).map((m) => [m, scores[m]!])) : null,
        recordPipelineId: run.evalPipelineId,
        recordBranch: run.branch,
        hits,
      };
    }),
  };
}
