/**
 * Runs side by side: a baseline eval run beside others, with metric deltas, per category, cost,
 * and (unless asked for the runs only) every question with each run's first hits. The compare
 * page asks for the runs only and reads questions through compare-questions.ts.
 */
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import type { Metrics } from "./metrics";
import { getEvalRun, judgeSummary } from "./run-reads";
import { metricsSchema, storedHitsSchema, type StoredHit } from "./stored";

/** Hits per question and run a comparison returns (the compare view shows 8). */
const COMPARE_HITS = 10;
/** Cases read per query: a full run's cases (kilobytes each, with their hits) are never read in one result. */
const CASE_PAGE = 200;

/**
 * Runs side by side (metrics, deltas to the baseline) and, unless `withQuestions` is false, every
 * question with each run's first hits — the expensive part (every case of every run is read);
 * questions are ordered regressions first (the baseline found an evidence session in its top 5,
 * another run did not), then improvements, then the rest.
 */
export async function compareEvalRuns(db: Db, workspaceId: string, baselineId: string, otherIds: string[], withQuestions = true) {
  const ids = [baselineId, ...otherIds.filter((id) => id !== baselineId)];
  const runs = await Promise.all(ids.map((id) => getEvalRun(db, workspaceId, id)));
  const baseline = runs[0]!;
  for (const r of runs) {
    if (r.status !== "completed") throw badRequest(`Eval run ${r.id} is ${r.status}: only completed runs can be compared.`);
    if (r.datasetId !== baseline.datasetId) throw badRequest(`Eval run ${r.id} scored another dataset than the baseline: compare runs of one benchmark file.`);
  }
  const byQuestion = new Map<string, { question: string; category: string; gold: string; sample: string; runs: Record<string, { caseId: string; scores: Metrics; answer: string; retrieved: StoredHit[] }> }>();
  for (const id of withQuestions ? ids : []) {
    for await (const c of evalCasePages(db, workspaceId, id)) {
      const row = byQuestion.get(c.questionId) ?? { question: c.question, category: c.category, gold: c.gold, sample: c.sample, runs: {} };
      // The first hits only (what the compare view lists); the case itself has them all.
      row.runs[c.evalRunId] = { caseId: c.id, scores: metricsSchema.parse(c.scores), answer: c.answer, retrieved: storedHitsSchema.parse(c.retrieved).slice(0, COMPARE_HITS) };
      byQuestion.set(c.questionId, row);
    }
  }
  const hit = (m?: Metrics) => m?.["session_hit@5"] ?? 0;
  const questions = [...byQuestion.entries()].map(([questionId, row]) => {
    const base = row.runs[baselineId]?.scores;
    const others = otherIds.map((id) => row.runs[id]?.scores);
    const regressed = others.some((m) => hit(base) > hit(m) || (base?.["evidence_recall@2k"] ?? 0) - (m?.["evidence_recall@2k"] ?? 0) > 0.5);
    const improved = others.some((m) => hit(m) > hit(base));
    return { questionId, ...row, status: regressed ? ("regressed" as const) : improved ? ("improved" as const) : ("same" as const) };
  });
  const order = { regressed: 0, improved: 1, same: 2 };
  questions.sort((a, b) => order[a.status] - order[b.status]);
  return {
    baselineId,
    benchmark: baseline.benchmark,
    runs: runs.map((r) => ({
      id: r.id,
      label: r.label,
      version: r.version,
      branch: r.branch,
      template: r.template,
      pipelineId: r.pipelineId,
      mode: r.mode,
      step: r.step,
      questions: r.questions,
      metrics: r.metrics,
      perCategory: r.perCategory,
      cost: r.cost,
      latency: r.latency,
      judge: judgeSummary(r.judge),
      deltas: Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, (v ?? 0) - (baseline.metrics[k as keyof Metrics] ?? 0)])),
    })),
    questions,
    counts: { regressed: questions.filter((q) => q.status === "regressed").length, improved: questions.filter((q) => q.status === "improved").length },
  };
}

/** A run's cases in position order, a page per query (keyset on the (evalRunId, position) index). */
async function* evalCasePages(db: Db, workspaceId: string, evalRunId: string) {
  let after = -1;
  for (;;) {
    const page = await db.evalCase.findMany({
      where: { workspaceId, evalRunId, position: { gt: after } },
      orderBy: { position: "asc" },
      take: CASE_PAGE,
      select: { id: true, evalRunId: true, position: true, questionId: true, question: true, category: true, gold: true, sample: true, scores: true, answer: true, retrieved: true },
    });
    yield* page;
    if (page.length < CASE_PAGE) return;
    after = page[page.length - 1]!.position;
  }
}
