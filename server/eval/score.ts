/**
 * Phase 2 of an eval: every question searched within its sample's scope at the run's altitude and
 * mode (past k when the top k do not fill the context budget), the hits traced to sessions and
 * turns (trace.ts, or lineage for a team's question set) and scored (metrics.ts), answered
 * extractively or by the answer model and judged (judge.ts); then the means per run and category,
 * cost and latency. Returns what the run stores; storing it is service.ts's.
 */
import type { Prisma } from "../generated/prisma/client";
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { toJsonColumn } from "../core/json";
import type { ModelProvider } from "../engine/model";
import { workspaceModel } from "../llm/workspace-model";
import { search, type SearchMode } from "../search/search";
import { walk } from "../search/walk";
import { getBranch } from "../services/pipelines";
import { branchBuildCostPerStep, branchStepRecords } from "../store/provenance-reads";
import { Bm25Index, bm25Terms } from "../text/bm25";
import { buildAggregates, type EvalAggregates } from "./aggregates";
import { getDataset } from "./dataset-store";
import { AnswerJudge, OFFLINE_JUDGE, type JudgeRecord } from "./judge";
import { meanMetrics, percentile, scoreCase, tokenF1, contextCut, estimateContextTokens, CONTEXT_BUDGET, type Metrics, type TracedHit } from "./metrics";
import type { EvalBuilt, EvalControl, EvalRunRow } from "./phase";
import { getQuestionSet, LineageTracer, QUESTION_SET_BENCHMARK } from "./question-sets";
import { buildStatsSchema, judgeRecordSchema } from "./stored";
import { ProvenanceTracer, type HitRecord } from "./trace";
import { LOCOMO_CATEGORIES, sampleScope, type LoadSkip, type Question, type Session } from "./types";

/**
 * How deep the ranking goes when the top k records do not fill the context budget (short records:
 * facts): evidence_recall@2k takes records in rank order until 2,000 tokens, as the baseline takes
 * every ranked unit (shared/tools/locomo-baseline), so a template of short records is not capped at
 * k of them. The same rule for every template; long records fill the budget within k and never go deeper.
 */
export const FILL_DEPTH = 200;
/** Retrieved records stored per case (for the per-question view). */
const STORED_HITS = 20;

/** What scoring hands to the run's store: its rows and cases. */
export interface Evaluated {
  questions: number;
  metrics: Metrics;
  perCategory: Record<string, Metrics & { questions: number }>;
  cost: Record<string, unknown>;
  latency: { p50: number; p95: number; mean: number };
  skips: LoadSkip[];
  cases: Prisma.EvalCaseCreateManyInput[];
  judge: JudgeRecord;
  aggregates: EvalAggregates;
}

/** Every search of an eval failed: the run ends failed with this reason (the first error, and how many). */
export class EvalSearchFailed extends Error {
  constructor(failures: Array<{ question: string; error: string }>, questions: number) {
    const first = failures[0]!;
    const others = new Set(failures.map((f) => f.error)).size - 1;
    super(
      `Every search failed (${failures.length} of ${questions} questions): nothing was scored. First error (question ${first.question}): ${first.error}` +
        (others > 0 ? ` (and ${others} other error${others === 1 ? "" : "s"}).` : ""),
    );
    this.name = "EvalSearchFailed";
  }
}

/** Searches, traces, scores (and answers and judges) every question of the run, over what `buildEval` built. */
export async function evaluate(db: Db, run: EvalRunRow, built: EvalBuilt, model: ModelProvider | undefined, { progress, checkCancel }: EvalControl): Promise<Evaluated> {
  const corpus = await evalCorpus(db, run, built);
  await checkCancel();
  const bm25 = new Map<string, { index: Bm25Index; records: HitRecord[] }>();
  const skips: LoadSkip[] = [...corpus.skips];
  const cases: Prisma.EvalCaseCreateManyInput[] = [];
  const scored: Array<{ q: Question; m: Metrics }> = [];
  const latencies: number[] = [];
  const searchFailures: Array<{ question: string; error: string }> = [];
  const { questions, tracer } = corpus;
  const configured = judgeRecordSchema.parse(run.judge);
  const categories = run.benchmark === "locomo" ? LOCOMO_CATEGORIES : Object.fromEntries([...new Set(questions.map((q) => q.category))].map((c) => [c, c]));
  const judge = configured.measured
    ? new AnswerJudge(model ?? workspaceModel(db, run.workspaceId), { answerModel: configured.answerModel!, judgeModel: configured.judgeModel, budgetUsd: configured.budgetUsd }, categories)
    : null;
  for (let i = 0; i < questions.length; i++) {
    const q = questions[i]!;
    if (i % 25 === 0) await checkCancel();
    const scope = corpus.scopeOf(q);
    const started = performance.now();
    let hits: Array<HitRecord & { score: number }>;
    try {
      hits = await retrieve(db, run, scope, q.question, bm25, run.k, q.askedAt);
      if (hits.length >= run.k && hits.reduce((a, h) => a + estimateContextTokens(h.content), 0) < CONTEXT_BUDGET) {
        // The top k fit the budget with room to spare: the ranking continues past k (the top k keep their ranks).
        const seen = new Set(hits.map((h) => h.id));
        const deeper = await retrieve(db, run, scope, q.question, bm25, FILL_DEPTH, q.askedAt);
        hits = [...hits, ...deeper.filter((h) => !seen.has(h.id))];
      }
    } catch (err) {
      skips.push({ where: q.id, reason: `search failed: ${(err as Error).message}; skipped`, dropped: true });
      searchFailures.push({ question: q.id, error: (err as Error).message });
      continue;
    }
    const latencyMs = performance.now() - started;
    latencies.push(latencyMs);
    await tracer.load(hits.map((h) => h.id));
    const traced = hits.map((h) => tracer.trace(h));
    const temporal = isTemporal(run.benchmark, q);
    const m = scoreCase({
      evidence: q.evidence,
      evidenceSessions: q.evidenceSessions,
      hits: traced,
      temporalAnswer: temporal ? q.answer : undefined,
      freshness: q.stale ? { current: q.answer, stale: q.stale } : undefined,
    });
    const context = contextCut(traced).hits;
    let answer = extractiveAnswer(q.question, context);
    if (judge && q.answer) {
      const judged = await judge.answerAndJudge({ id: q.id, question: q.question, gold: q.answer }, context.map((h) => ({ id: h.id, content: h.content ?? "" })));
      if (judged?.answer) answer = judged.answer;
      if (judged && judged.j !== null) m.j = judged.j;
    }
    if (q.answer) m.f1 = tokenF1(answer, q.answer.split(";")[0]!);
    scored.push({ q, m });
    cases.push({
      workspaceId: run.workspaceId,
      evalRunId: run.id,
      position: i,
      questionId: q.id,
      sample: q.sample,
      category: q.category,
      question: q.question,
      gold: q.answer,
      evidence: toJsonColumn({ turns: q.evidence, sessions: q.evidenceSessions }),
      retrieved: toJsonColumn(storedHits(hits, traced, new Set(q.evidence))),
      answer,
      scores: toJsonColumn(m),
      tokens: m.context_tokens ?? 0,
      latencyMs,
    });
    progress({ phase: "search", done: i + 1, total: questions.length });
  }

  // An eval whose every search failed measured nothing: it is failed, with the reason, never completed with zeros.
  if (questions.length > 0 && scored.length === 0 && searchFailures.length > 0) throw new EvalSearchFailed(searchFailures, questions.length);

  const main = scored.filter((s) => !s.q.apart);
  const perCategory: Evaluated["perCategory"] = {};
  for (const cat of [...new Set(scored.map((s) => s.q.category))].sort()) {
    const list = scored.filter((s) => s.q.category === cat);
    perCategory[cat] = { ...meanMetrics(list.map((s) => s.m)), questions: list.length };
  }
  const cost = await buildCost(db, run, corpus.built);
  return {
    questions: main.length,
    metrics: meanMetrics(main.map((s) => s.m)),
    perCategory,
    cost: { ...cost, sourcesAdded: corpus.sourcesAdded, ...(corpus.reusedRunId ? { reusedBuildRunId: corpus.reusedRunId } : {}) },
    latency: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), mean: latencies.reduce((a, n) => a + n, 0) / Math.max(1, latencies.length) },
    skips,
    cases,
    judge: judge ? judge.record : OFFLINE_JUDGE,
    aggregates: buildAggregates(scored.map((s) => ({ questionId: s.q.id, category: s.q.category, apart: s.q.apart, scores: s.m }))),
  };
}

/** What an eval searches and how hits are traced: a benchmark's eval copy, or a team's own memory. */
interface Corpus {
  questions: Question[];
  skips: LoadSkip[];
  tracer: { load(ids: string[]): Promise<void>; trace(hit: HitRecord): TracedHit };
  /** The scope a question searches within (a benchmark sample), or none (the team's whole memory). */
  scopeOf(q: Question): string | undefined;
  /** The run that built the memory for this eval (none for a question set: the memory as it is). */
  built: { stats: unknown; startedAt: Date | null; finishedAt: Date | null };
  sourcesAdded: number;
  /** The earlier run whose build was searched as it was (nothing rebuilt). */
  reusedRunId?: string;
}

/** The questions and how to trace their hits, over what `buildEval` built. */
async function evalCorpus(db: Db, run: EvalRunRow, built: EvalBuilt): Promise<Corpus> {
  if (run.benchmark === QUESTION_SET_BENCHMARK) {
    const set = await getQuestionSet(db, run.workspaceId, run.datasetId);
    return {
      questions: set.questions.map((q) => ({ id: q.id, sample: set.name, question: q.question, answer: q.answer, category: "team", evidence: q.recordIds, evidenceSessions: q.sources, apart: false })),
      skips: [],
      tracer: new LineageTracer(db, run.workspaceId),
      scopeOf: () => undefined,
      built: { stats: {}, startedAt: null, finishedAt: null },
      sourcesAdded: 0,
    };
  }
  const { dataset, skips } = await getDataset(db, run.workspaceId, run.datasetId);
  const spec = (await getBranch(db, run.evalPipelineId, run.branch)).spec;
  const buildRun = built.buildRunId ? await db.run.findUnique({ where: { id: built.buildRunId }, select: { stats: true, startedAt: true, finishedAt: true } }) : null;
  const sessions = new Map<string, Map<string, Session>>(dataset.samples.map((s) => [s.id, new Map(s.sessions.map((x) => [x.id, x]))]));
  return {
    questions: dataset.questions,
    skips,
    tracer: new ProvenanceTracer(db, run.workspaceId, spec.sources.map((s) => s.name), sessions),
    scopeOf: (q) => sampleScope(dataset.benchmark, q.sample),
    built: buildRun ?? { stats: {}, startedAt: null, finishedAt: null },
    sourcesAdded: built.sourcesAdded,
    reusedRunId: built.reusedRunId,
  };
}

function isTemporal(benchmark: string, q: Question): boolean {
  return (benchmark === "locomo" && q.category === "2") || q.category === "temporal" || q.category === "temporal-reasoning";
}

/** Ranked records for one question, within its sample's scope. */
async function retrieve(db: Db, run: EvalRunRow, scope: string | undefined, query: string, bm25: Map<string, { index: Bm25Index; records: HitRecord[] }>, limit: number, askedAt?: string) {
  if (run.mode === "bm25") {
    if (!run.step) throw badRequest("Mode bm25 ranks one step: this eval run has none.");
    const step = run.step;
    let entry = bm25.get(scope ?? "");
    if (!entry) {
      const records: HitRecord[] = await branchStepRecords(db, {
        workspaceId: run.workspaceId,
        pipelineId: run.evalPipelineId,
        branch: run.branch,
        step,
        scope: scope ?? null,
      });
      // Windows and chunks keep their order within a session: the split index.
      entry = { index: new Bm25Index(records.map((r) => r.content)), records };
      bm25.set(scope ?? "", entry);
    }
    return entry.index
      .rank(query)
      .slice(0, limit)
      .map((r) => ({ ...entry!.records[r.index]!, score: r.score }));
  }
  if (run.mode === "walk") {
    const walked = await walk(db, { workspaceId: run.workspaceId, pipelineId: run.evalPipelineId, branch: run.branch, query: query.slice(0, 1000), from: run.step!, scope, limit });
    return walked.hits.map((h) => ({ id: h.id, step: h.step, content: h.content, score: h.score }));
  }
  const result = await search(db, {
    workspaceId: run.workspaceId,
    pipelineId: run.evalPipelineId,
    branch: run.branch,
    query: query.slice(0, 1000),
    mode: run.mode as SearchMode,
    step: run.step ?? undefined,
    scope,
    limit,
    // A relative time in the question ("last week") means the week before it was asked.
    ...(askedAt ? { asOf: askedAt } : {}),
    // Metrics read each hit's content; highlighted snippets would only cost time.
    snippets: false,
  });
  return result.hits.map((h) => ({ id: h.id, step: h.step, content: h.content, score: h.score.fused }));
}

/** Offline answer: the sentence of the retrieved context that shares most terms with the question. */
export function extractiveAnswer(question: string, context: TracedHit[]): string {
  const terms = new Set(bm25Terms(question));
  let best = "";
  let bestScore = 0;
  for (const h of context) {
    for (const line of (h.content ?? "").split(/\n+|(?<=[.!?])\s+/)) {
      const text = line.replace(/^#\s*/, "").trim();
      if (!text) continue;
      const score = bm25Terms(text).filter((t) => terms.has(t)).length;
      if (score > bestScore) {
        best = text;
        bestScore = score;
      }
    }
  }
  return best.slice(0, 500);
}

function storedHits(hits: Array<HitRecord & { score: number }>, traced: TracedHit[], gold: ReadonlySet<string>) {
  const inContext = new Set(contextCut(traced).hits.map((h) => h.id));
  return traced.slice(0, STORED_HITS).map((t, i) => ({
    id: t.id,
    step: hits[i]!.step,
    rank: i + 1,
    score: hits[i]!.score,
    tokens: t.tokens,
    sessions: t.sessions,
    goldTurns: t.turns.filter((x) => gold.has(x)),
    turns: t.turns.length,
    inContext: inContext.has(t.id),
    reachesSource: t.reachesSource,
    preview: (t.content ?? "").slice(0, 300),
  }));
}

/** What the memory cost to build (every record the branch shows, per step) and what this eval's run spent. */
async function buildCost(db: Db, run: EvalRunRow, built: { stats: unknown; startedAt: Date | null; finishedAt: Date | null }) {
  const perStep = await branchBuildCostPerStep(db, { workspaceId: run.workspaceId, pipelineId: run.evalPipelineId, branch: run.branch });
  const { steps } = buildStatsSchema.parse(built.stats ?? {});
  return {
    buildTokens: perStep.reduce((a, s) => a + s.tokensIn + s.tokensOut, 0),
    buildCostUsd: perStep.reduce((a, s) => a + s.costUsd, 0),
    perStep,
    thisRun: {
      modelCalls: steps.reduce((a, s) => a + s.modelCalls, 0),
      tokens: steps.reduce((a, s) => a + s.tokensIn + s.tokensOut, 0),
      costUsd: steps.reduce((a, s) => a + s.costUsd, 0),
      durationMs: built.startedAt && built.finishedAt ? built.finishedAt.getTime() - built.startedAt.getTime() : 0,
    },
  };
}
