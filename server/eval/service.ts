/**
 * Evals: score a pipeline branch (or a template) on a benchmark, with its cost.
 *
 * How an eval runs: the benchmark's sessions become the source records of a hidden *eval copy*
 * of the pipeline (same spec, same branch names, its own records: the team's memory is never
 * touched), one scope per benchmark sample (`locomo:conv-26`). The copy's branch runs
 * incrementally — records are content-addressed, so a second eval of an unchanged spec computes
 * nothing. Each question is searched within its sample's scope at the configured altitude and
 * mode; the retrieved records are traced to sessions and turns through provenance and scored
 * (metrics.ts). The run row is `completed` only when every case is stored (one transaction).
 *
 * Past 500 lines, knowingly: it is one eval's lifecycle (start → build the copy → score → store),
 * read top to bottom like services/runs.ts. Scoring, traces, datasets and templates already live in
 * their own modules; the compare read is the next piece to move out (eval/compare.ts), not yet done.
 */
import { createHash } from "node:crypto";
import type { Prisma } from "../generated/prisma/client";
import type { ModelProvider } from "../engine/model";
import { specHash } from "../pipeline/hashing";
import type { PipelineSpec } from "../pipeline/spec";
import { search, type SearchMode } from "../search/search";
import { indexPipeline } from "../search/indexing";
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { createPipeline, getBranch, getPipeline, saveVersion, appendSourceRecords } from "../services/pipelines";
import { createBranch } from "../services/branches";
import type { SourceItem } from "../core/source-item";
import { runPipeline } from "../services/runs";
import { executorKind, type Env } from "../services/executor";
import { trackBackground } from "../services/background";
import { toJsonColumn } from "../core/json";
import { retryTransient } from "../store/db-errors";
import { claimEvalLease, keepLeaseAlive, processLeaseOwner, renewRunLease, runLeaseMs } from "../store/run-lease";
import { buildStatsSchema, evalCostSchema, evidenceSchema, judgeRecordSchema, latencySchema, loadSkipsSchema, metricsSchema, perCategorySchema, storedHitsSchema, type StoredHit } from "./stored";

export type { StoredHit } from "./stored";
import { branchBuildCostPerStep, branchStepRecords } from "../store/provenance-reads";
import { walk } from "../search/walk";
import { Bm25Index, bm25Terms } from "../text/bm25";
import { loadDataset, type DatasetSource } from "./datasets";
import { meanMetrics, percentile, scoreCase, tokenF1, contextCut, estimateContextTokens, CONTEXT_BUDGET, type Metrics, type TracedHit } from "./metrics";
import { evalLabel, runNames, runVersion } from "./run-labels";
import { evalTemplate, isEvalTemplate, EVAL_MODES, EVAL_TEMPLATES, type EvalMode, type EvalTemplate } from "./templates";
import { workspaceModel } from "../llm/workspace-model";
import { parseModelId } from "../llm/sdk-model";
import { availableProviders } from "../services/provider-check";
import { AnswerJudge, ANSWER_PROMPT, DEFAULT_BUDGET_USD, JUDGE_PROMPT, type JudgeRecord } from "./judge";
import { getQuestionSet, LineageTracer, QUESTION_SET_BENCHMARK } from "./question-sets";
import { ProvenanceTracer, type HitRecord } from "./trace";
import { buildAggregates, type EvalAggregates } from "./aggregates";
import { datasetSchema, LOCOMO_CATEGORIES, sampleScope, sessionContent, type Dataset, type LoadSkip, type Question, type Session } from "./types";

export const DEFAULT_K = 50;
export const MAX_K = 100;
/**
 * How deep the ranking goes when the top k records do not fill the context budget (short records:
 * facts): evidence_recall@2k takes records in rank order until 2,000 tokens, as the baseline takes
 * every ranked unit (shared/tools/locomo-baseline), so a template of short records is not capped at
 * k of them. The same rule for every template; long records fill the budget within k and never go deeper.
 */
export const FILL_DEPTH = 200;
/** Retrieved records stored per case (for the per-question view). */
const STORED_HITS = 20;
const OFFLINE_JUDGE: JudgeRecord = { measured: false, reason: "offline: no model configured, so answers are extractive (the best-matching sentence of the retrieved context) and the judge score j was not measured" };
const EXTRACTIVE = "offline/extractive";

export interface EvalProgress {
  phase: "ingest" | "build" | "search" | "store";
  done: number;
  total: number;
}

// ---------------------------------------------------------------------------------------------
// Datasets

/** SHA-256 of the normalized dataset (not its file name): the same benchmark imported twice is one row. */
export function datasetHash(dataset: Dataset): string {
  const { benchmark, samples, questions } = dataset;
  return createHash("sha256").update(JSON.stringify({ benchmark, samples, questions })).digest("hex");
}

/** Stores a loaded dataset once per workspace (content-addressed); returns the row. */
export async function saveDataset(db: Db, workspaceId: string, loaded: { dataset: Dataset; skips: LoadSkip[] }) {
  const contentHash = datasetHash(loaded.dataset);
  const existing = await db.evalDataset.findUnique({ where: { workspaceId_contentHash: { workspaceId, contentHash } } });
  if (existing) return existing;
  return db.evalDataset.create({
    data: {
      workspaceId,
      benchmark: loaded.dataset.benchmark,
      name: loaded.dataset.name,
      contentHash,
      data: toJsonColumn(loaded.dataset),
      samples: loaded.dataset.samples.length,
      questions: loaded.dataset.questions.length,
      skips: toJsonColumn(loaded.skips),
    },
  });
}

/** Parses a benchmark file's text (or generates SynthexBench) and stores it. */
export async function importDataset(db: Db, workspaceId: string, input: DatasetSource) {
  return saveDataset(db, workspaceId, loadDataset(input));
}

export async function listDatasets(db: Db, workspaceId: string) {
  return db.evalDataset.findMany({
    where: { workspaceId },
    orderBy: { createdAt: "desc" },
    select: { id: true, benchmark: true, name: true, samples: true, questions: true, contentHash: true, skips: true, createdAt: true },
  });
}

async function getDataset(db: Db, workspaceId: string, id: string) {
  const row = await db.evalDataset.findFirst({ where: { id, workspaceId } });
  if (!row) throw notFound(`Eval dataset ${id} not found in this workspace.`);
  return { row, dataset: datasetSchema.parse(row.data), skips: loadSkipsSchema.parse(row.skips) };
}

// ---------------------------------------------------------------------------------------------
// Eval copies

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 10);
}

/** The hidden copy of a pipeline (or template) an eval of this dataset runs on, on `branch` with `spec`. */
async function ensureEvalCopy(
  db: Db,
  workspaceId: string,
  target: { pipelineId: string | null; template: string | null; label: string },
  dataset: { id: string; contentHash: string },
  branch: string,
  spec: PipelineSpec,
) {
  const name = `eval-${shortHash(target.pipelineId ?? `template:${target.template}`)}-${dataset.contentHash.slice(0, 10)}`;
  let copy = await db.pipeline.findFirst({ where: { workspaceId, name } });
  if (!copy) {
    const created = await createPipeline(db, workspaceId, { name, spec, description: `Eval copy of ${target.label} on dataset ${dataset.id}` });
    copy = await db.pipeline.update({ where: { id: created.pipeline.id }, data: { evalOfId: target.pipelineId ?? `template:${target.template}` } });
  }
  if (!(await db.branch.findUnique({ where: { pipelineId_name: { pipelineId: copy.id, name: branch } } }))) {
    await createBranch(db, copy.id, { name: branch, from: "main" });
  }
  const head = await getBranch(db, copy.id, branch);
  if (head.version.hash !== specHash(spec)) await saveVersion(db, copy.id, { spec, branch, message: "Spec of the scored branch" });
  return copy;
}

function sourceItems(dataset: Dataset): SourceItem[] {
  const items: SourceItem[] = [];
  for (const sample of dataset.samples) {
    for (const session of sample.sessions) {
      const conversationId = `${sample.id}-s${session.id}`;
      items.push({
        externalId: `${dataset.benchmark}:${conversationId}`,
        content: sessionContent(session),
        scope: sampleScope(dataset.benchmark, sample.id),
        metadata: {
          time: session.time ? { created_at: session.time } : {},
          chat: { conversation_id: conversationId, title: `${sample.id} session ${session.id}`, roles: sample.speakers, message_count: session.turns.length },
          custom: { eval: { benchmark: dataset.benchmark, sample: sample.id, session: session.id } },
        },
      });
    }
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// Eval runs

export interface StartEvalInput {
  workspaceId: string;
  /** A team pipeline (id or name), or … */
  pipeline?: string;
  /** … a template scored on its own. */
  template?: string;
  branch?: string;
  /** A benchmark dataset, or … */
  datasetId?: string;
  /** … a team's own question set (id or name): scored on the pipeline's own memory. */
  questionSet?: string;
  /** Altitude: one step; omitted = the template's default, or unscoped (every indexed step). */
  step?: string;
  mode?: EvalMode;
  k?: number;
  /** `provider/model` that answers each question from the retrieved context (omitted: extractive, j not measured). */
  answerModel?: string;
  /** `provider/model` that grades the answers (default: the answer model). */
  judgeModel?: string;
  /** USD the answer and judge calls may spend (default $1). */
  budgetUsd?: number;
  triggeredBy?: string | null;
}

/** The judge configuration a run is created with (completed by the run with what it spent and counted). */
function judgeConfig(input: StartEvalInput): { model: string; judge: JudgeRecord } {
  if (!input.answerModel) {
    if (input.judgeModel) throw badRequest("A judge model needs an answer model to grade: pass --answer-model too.");
    return { model: EXTRACTIVE, judge: OFFLINE_JUDGE };
  }
  for (const [what, id] of [["answer", input.answerModel], ["judge", input.judgeModel]] as const) {
    if (id === undefined) continue;
    const { provider, name } = parseModelId(id);
    if (!provider || !name) throw badRequest(`The ${what} model "${id}" is not provider/model (e.g. openai/gpt-4o-mini).`);
  }
  const budgetUsd = input.budgetUsd ?? DEFAULT_BUDGET_USD;
  if (!(budgetUsd > 0 && budgetUsd <= 1000)) throw badRequest("The budget must be more than $0 and at most $1000.");
  return {
    model: input.answerModel,
    judge: { measured: true, answerModel: input.answerModel, judgeModel: input.judgeModel ?? input.answerModel, answerPrompt: ANSWER_PROMPT, prompt: JUDGE_PROMPT, budgetUsd },
  };
}

/** Refuses (before anything is queued) an answer or judge model whose provider this workspace cannot call. */
async function assertJudgeProviders(db: Db, input: StartEvalInput): Promise<void> {
  const models = [["answer", input.answerModel], ["judge", input.judgeModel]] as const;
  if (!models.some(([, id]) => id)) return;
  const available = await availableProviders(db, input.workspaceId);
  for (const [what, id] of models) {
    if (!id) continue;
    const { provider } = parseModelId(id);
    if (!available.includes(provider)) {
      throw badRequest(`The ${what} model "${id}" needs a provider named "${provider}", which this workspace does not have. Add it in Settings → Models (configured: ${available.join(", ")}).`);
    }
  }
}

/** Validates the request and creates the queued EvalRun row (with its eval copy ready). */
export async function createEvalRun(db: Db, input: StartEvalInput) {
  if (!input.pipeline === !input.template) throw badRequest("Name either a pipeline or a template to evaluate.");
  const branchName = input.branch ?? "main";
  if (!input.datasetId === !input.questionSet) throw badRequest("Name either a benchmark dataset or a question set to score.");
  const datasetRow = input.datasetId ? (await getDataset(db, input.workspaceId, input.datasetId)).row : null;
  const questionSet = input.questionSet ? await getQuestionSet(db, input.workspaceId, input.questionSet) : null;
  if (questionSet && input.template) throw badRequest("A team's question set asks the team's own memory: name a pipeline, not a template.");
  let spec: PipelineSpec;
  let pipelineId: string | null = null;
  let versionId: string | null = null;
  let label: string;
  let defaults: { step?: string; mode: EvalMode } = { mode: "hybrid" };
  if (input.template) {
    if (!isEvalTemplate(input.template)) throw badRequest(`Unknown template "${input.template}". Templates: ${EVAL_TEMPLATES.join(", ")}.`);
    const def = evalTemplate(input.template as EvalTemplate);
    spec = def.spec;
    defaults = { step: def.step, mode: def.mode };
    label = `template ${input.template}`;
  } else {
    const pipeline = await getPipeline(db, input.workspaceId, input.pipeline!);
    if (pipeline.evalOfId) throw badRequest(`"${pipeline.name}" is an eval copy; evaluate the pipeline it copies.`);
    const b = await getBranch(db, pipeline.id, branchName);
    spec = b.spec;
    pipelineId = pipeline.id;
    versionId = b.version.id;
    label = `${pipeline.name}@${branchName}`;
  }
  if (!spec.sources.length) throw badRequest("The pipeline has no source for the benchmark's conversations.");
  const mode = input.mode ?? defaults.mode;
  if (!(EVAL_MODES as readonly string[]).includes(mode)) throw badRequest(`Unknown mode "${mode}": use ${EVAL_MODES.join(", ")}.`);
  const step = input.step ?? defaults.step;
  const names = [...spec.sources.map((s) => s.name), ...spec.steps.map((s) => s.name)];
  if (step && !names.includes(step)) throw badRequest(`Unknown step "${step}". Steps in this pipeline: ${names.join(", ")}.`);
  if (mode === "bm25" && !step) throw badRequest("Mode bm25 ranks one step: pass --step.");
  if (mode === "walk" && !step) throw badRequest("Mode walk descends from one step (the top of the pyramid): pass --step.");
  const k = Math.floor(input.k ?? DEFAULT_K);
  if (!(k >= 1 && k <= MAX_K)) throw badRequest(`k must be between 1 and ${MAX_K}.`);
  const answering = judgeConfig(input);
  await assertJudgeProviders(db, input);
  if (questionSet) {
    if (!questionSet.questions.length) throw badRequest(`The question set "${questionSet.name}" has no questions yet.`);
    if (questionSet.questions[0]!.pipelineId !== pipelineId) throw badRequest(`The question set "${questionSet.name}" asks another pipeline's memory (its records were picked there).`);
  }
  const scored = datasetRow ? { id: datasetRow.id, benchmark: datasetRow.benchmark } : { id: questionSet!.id, benchmark: QUESTION_SET_BENCHMARK };
  // One eval at a time per eval copy (its branches share source records and runs).
  const running = await db.evalRun.findFirst({ where: { workspaceId: input.workspaceId, pipelineId, template: input.template ?? null, datasetId: scored.id, status: { in: ["queued", "running"] } } });
  if (running) throw badRequest(`An eval of ${label} on this dataset is already in progress (${running.id}). Wait for it or cancel it.`);
  // A benchmark is scored on an eval copy; a team's question set on the pipeline's own records.
  const evalPipelineId = datasetRow ? (await ensureEvalCopy(db, input.workspaceId, { pipelineId, template: input.template ?? null, label }, datasetRow, branchName, spec)).id : pipelineId!;
  return db.evalRun.create({
    data: {
      workspaceId: input.workspaceId,
      pipelineId,
      template: input.template ?? null,
      branch: branchName,
      versionId,
      specHash: specHash(spec),
      datasetId: scored.id,
      benchmark: scored.benchmark,
      evalPipelineId,
      step: step ?? null,
      mode,
      k,
      model: answering.model,
      judge: toJsonColumn(answering.judge),
      status: "queued",
      triggeredBy: input.triggeredBy ?? null,
    },
  });
}

class EvalCancelled extends Error {}
/** This process no longer holds the eval (the recovery sweep ended it, or another process took it). */
class EvalLeaseLost extends Error {}

export interface EvalDeps {
  model?: ModelProvider;
  onProgress?: (p: EvalProgress) => void;
  signal?: AbortSignal;
  /** Who executes the eval (default: this process) and how long its lease holds without a heartbeat (default `SYNTHEX_RUN_LEASE_MS`). */
  lease?: { owner?: string; ttlMs?: number };
}

/** What building an eval's memory hands to scoring it: plain data (an Inngest step's memoized output). */
export interface EvalBuilt {
  /** The pipeline run that built the eval copy (null for a question set: its memory is searched as it is). */
  buildRunId: string | null;
  sourcesAdded: number;
  /** The earlier pipeline run whose build this eval searched as it was (same spec, same sources): nothing was rebuilt. */
  reusedRunId?: string;
}

interface EvalControl {
  progress: (p: EvalProgress, force?: boolean) => void;
  checkCancel: () => Promise<void>;
  owner: string;
}

/**
 * Runs one phase of an eval under its lease (claimed here: queued → running, or taken back by the
 * owner already holding it), renewed by heartbeats while the phase works. A cancel ends the run
 * `cancelled`; any other error ends it `failed` — or, with `rethrow` (Inngest: it retries the
 * step, then its onFailure ends the run), is thrown. A process that dies mid-phase stops renewing
 * the lease and the recovery sweep ends the run (`endExpiredEvalRuns`). Returns the phase's
 * value, or the run row as it ended (or as it is, when it could not be claimed).
 */
async function underEvalLease<T>(
  db: Db,
  evalRunId: string,
  deps: EvalDeps,
  work: (run: EvalRunRow, ctl: EvalControl) => Promise<T>,
  options: { rethrow?: boolean } = {},
): Promise<{ value: T } | { ended: EvalRunRow }> {
  const owner = deps.lease?.owner ?? processLeaseOwner;
  const ttlMs = deps.lease?.ttlMs ?? runLeaseMs();
  const current = await db.evalRun.findUnique({ where: { id: evalRunId } });
  if (!current) throw notFound(`Eval run ${evalRunId} not found.`);
  if (!(await claimEvalLease(db, evalRunId, owner, ttlMs))) return { ended: current };
  const run = await db.evalRun.findUniqueOrThrow({ where: { id: evalRunId } });
  const stopHeartbeat = keepLeaseAlive(() => renewRunLease(db, run.id, owner, ttlMs, "EvalRun"), ttlMs, `eval run ${run.id}`);
  let lastWrite = 0;
  const ctl: EvalControl = {
    owner,
    progress: (p, force = false) => {
      deps.onProgress?.(p);
      if (!force && Date.now() - lastWrite < 500) return;
      lastWrite = Date.now();
      void db.evalRun.updateMany({ where: { id: run.id, leaseOwner: owner }, data: { progress: toJsonColumn(p) } }).catch(() => {});
    },
    checkCancel: async () => {
      if (deps.signal?.aborted) throw new EvalCancelled("cancelled");
      const row = await db.evalRun.findUnique({ where: { id: run.id }, select: { cancelRequested: true, status: true, leaseOwner: true } });
      if (row?.cancelRequested) throw new EvalCancelled("cancelled");
      if (row?.status !== "running" || row.leaseOwner !== owner) throw new EvalLeaseLost(`Eval run ${run.id} is no longer executed here.`);
    },
  };
  try {
    await ctl.checkCancel();
    // A phase stores its results only when it ends (a build reruns only work without records): a
    // transient database error (the owner busy, a connection dropped) runs it again, not fails the eval.
    return { value: await retryTransient(() => work(run, ctl), `eval run ${run.id}`, 3, 1000) };
  } catch (err) {
    if (err instanceof EvalLeaseLost) return { ended: await db.evalRun.findUniqueOrThrow({ where: { id: run.id } }) };
    const cancelled = err instanceof EvalCancelled;
    if (!cancelled && options.rethrow) throw err;
    return { ended: await endEvalRun(db, run.id, owner, cancelled ? "cancelled" : "failed", cancelled ? "Cancelled before it finished: no results were stored." : message(err)) };
  } finally {
    stopHeartbeat();
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Ends an active eval this owner holds (or nobody holds) as failed or cancelled; returns the row as it is now. */
export async function endEvalRun(db: Db, evalRunId: string, owner: string | null, status: "failed" | "cancelled", error: string) {
  await db.evalRun.updateMany({
    where: { id: evalRunId, status: { in: ["queued", "running"] }, ...(owner ? { OR: [{ leaseOwner: owner }, { leaseOwner: null }] } : {}) },
    data: { status, error, finishedAt: new Date(), leaseOwner: null, leaseExpiresAt: null },
  });
  return db.evalRun.findUniqueOrThrow({ where: { id: evalRunId } });
}

/**
 * Executes a queued eval in this process: builds its memory, then searches and scores every
 * question. Never leaves a run `running`: it ends completed, failed or cancelled — and if this
 * process dies, the recovery sweep ends it once its lease expires.
 */
export async function executeEvalRun(db: Db, evalRunId: string, deps: EvalDeps = {}) {
  const out = await underEvalLease(db, evalRunId, deps, async (run, ctl) => {
    const built = await buildEval(db, run, deps.model, ctl);
    return storeEval(db, run, await evaluate(db, run, built, deps.model, ctl), ctl);
  });
  return "ended" in out ? out.ended : out.value;
}

/** Phase 1 of an eval (an Inngest step of its own): its memory, built incrementally. */
export async function buildEvalPhase(db: Db, evalRunId: string, deps: EvalDeps & { rethrow?: boolean } = {}) {
  return underEvalLease(db, evalRunId, deps, (run, ctl) => buildEval(db, run, deps.model, ctl), { rethrow: deps.rethrow });
}

/** Phase 2 of an eval (an Inngest step of its own): search and score every question, store it all, complete the run. */
export async function scoreEvalPhase(db: Db, evalRunId: string, built: EvalBuilt, deps: EvalDeps & { rethrow?: boolean } = {}) {
  const out = await underEvalLease(db, evalRunId, deps, async (run, ctl) => storeEval(db, run, await evaluate(db, run, built, deps.model, ctl), ctl), { rethrow: deps.rethrow });
  return "ended" in out ? out.ended : out.value;
}

/** Stores every case and completes the run in one transaction — only while this owner still holds it. */
async function storeEval(db: Db, run: EvalRunRow, result: Evaluated, ctl: EvalControl) {
  ctl.progress({ phase: "store", done: 0, total: result.cases.length }, true);
  const stored = await db.$transaction(
    async (tx) => {
      const done = await tx.evalRun.updateMany({
        where: { id: run.id, status: "running", leaseOwner: ctl.owner, cancelRequested: false },
        data: {
          status: "completed",
          finishedAt: new Date(),
          leaseOwner: null,
          leaseExpiresAt: null,
          questions: result.questions,
          metrics: toJsonColumn(result.metrics),
          perCategory: toJsonColumn(result.perCategory),
          cost: toJsonColumn(result.cost),
          latency: toJsonColumn(result.latency),
          skips: toJsonColumn(result.skips),
          judge: toJsonColumn(result.judge),
          aggregates: toJsonColumn(result.aggregates),
          progress: { phase: "store", done: result.cases.length, total: result.cases.length },
        },
      });
      if (!done.count) return false;
      for (let i = 0; i < result.cases.length; i += 200) {
        await tx.evalCase.createMany({ data: result.cases.slice(i, i + 200) });
      }
      return true;
    },
    { timeout: 120_000 },
  );
  // Not stored: cancelled at the last moment, or ended by the recovery sweep meanwhile.
  if (!stored) await ctl.checkCancel();
  return db.evalRun.findUniqueOrThrow({ where: { id: run.id } });
}

type EvalRunRow = NonNullable<Awaited<ReturnType<Db["evalRun"]["findUnique"]>>>;

interface Evaluated {
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

async function evaluate(db: Db, run: EvalRunRow, built: EvalBuilt, model: ModelProvider | undefined, { progress, checkCancel }: EvalControl): Promise<Evaluated> {
  const corpus = await evalCorpus(db, run, built);
  await checkCancel();
  const bm25 = new Map<string, { index: Bm25Index; records: HitRecord[] }>();
  const skips: LoadSkip[] = [...corpus.skips];
  const cases: Prisma.EvalCaseCreateManyInput[] = [];
  const scored: Array<{ q: Question; m: Metrics }> = [];
  const latencies: number[] = [];
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

/**
 * Builds what an eval searches. A benchmark: its sessions become the eval copy's sources, which is
 * then built incrementally (computing only what is missing) and indexed. A team's question set:
 * the pipeline branch's own memory is only (re)indexed. Idempotent, so a retried phase computes nothing new.
 */
async function buildEval(db: Db, run: EvalRunRow, model: ModelProvider | undefined, { progress, checkCancel }: EvalControl): Promise<EvalBuilt> {
  // Every search mode reads the index (fts its BM25 postings and statistics), as after a normal run;
  // bm25 and walk rank in memory.
  const index = () => (run.mode !== "bm25" && run.mode !== "walk" ? indexPipeline(db, run.evalPipelineId, run.branch, { workspaceId: run.workspaceId }) : Promise.resolve());
  if (run.benchmark === QUESTION_SET_BENCHMARK) {
    progress({ phase: "build", done: 0, total: 1 }, true);
    await index();
    progress({ phase: "build", done: 1, total: 1 }, true);
    return { buildRunId: null, sourcesAdded: 0 };
  }
  const { dataset } = await getDataset(db, run.workspaceId, run.datasetId);
  const head = await getBranch(db, run.evalPipelineId, run.branch);
  const spec = head.spec;

  // 1. Sources: idempotent (content-addressed), so an unchanged dataset adds nothing.
  const items = sourceItems(dataset);
  progress({ phase: "ingest", done: 0, total: items.length }, true);
  const appended = await appendSourceRecords(db, run.evalPipelineId, spec.sources[0]!.name, items);
  progress({ phase: "ingest", done: items.length, total: items.length }, true);
  await checkCancel();

  // 2. Build: an incremental run of the copy's branch (computes only what is missing) — none at all
  // when the branch's last run completed on this spec and no source came since: what an earlier
  // eval of the same template or branch on the same data built is searched as it is.
  progress({ phase: "build", done: 0, total: spec.steps.length }, true);
  const reused = appended.added === 0 ? await reusableBuild(db, run.evalPipelineId, head.branch.id, head.version.hash) : null;
  if (reused) {
    await index();
    progress({ phase: "build", done: spec.steps.length, total: spec.steps.length }, true);
    return { buildRunId: null, sourcesAdded: 0, reusedRunId: reused };
  }
  const built = await runPipeline(db, { workspaceId: run.workspaceId, pipelineId: run.evalPipelineId, branch: run.branch, triggeredBy: `eval:${run.id}` }, { model, afterRun: false });
  if (built.status !== "completed") throw new Error(`The pipeline run of the eval copy ${built.status}${built.error ? `: ${built.error}` : ""}.`);
  await index();
  progress({ phase: "build", done: spec.steps.length, total: spec.steps.length }, true);
  return { buildRunId: built.id, sourcesAdded: appended.added };
}

/** The branch's last pipeline run, when it completed on a version of this spec (its build is current). */
async function reusableBuild(db: Db, pipelineId: string, branchId: string, hash: string): Promise<string | null> {
  const last = await db.run.findFirst({ where: { pipelineId, branchId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: { id: true, status: true, versionId: true } });
  if (last?.status !== "completed") return null;
  const version = await db.pipelineVersion.findUnique({ where: { id: last.versionId }, select: { hash: true } });
  return version?.hash === hash ? last.id : null;
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

/** Create and execute in one call (CLI, tests, bench). */
export async function runEval(db: Db, input: StartEvalInput, deps: Parameters<typeof executeEvalRun>[2] = {}) {
  const run = await createEvalRun(db, input);
  return executeEvalRun(db, run.id, deps);
}

/**
 * Cancels an eval in progress. One nobody has started yet ends `cancelled` now; a running one stops
 * at its next check (between phases, every 25 questions, and before its results are stored) and
 * ends `cancelled` with nothing stored — never `completed`.
 */
export async function cancelEvalRun(db: Db, workspaceId: string, id: string): Promise<{ id: string; status: "cancelled" | "cancelling" }> {
  const run = await db.evalRun.findFirst({ where: { id, workspaceId }, select: { status: true } });
  if (!run) throw notFound(`Eval run ${id} not found.`);
  if (run.status !== "queued" && run.status !== "running") throw badRequest(`That eval is not in progress: it is ${run.status}.`);
  const unstarted = await db.evalRun.updateMany({
    where: { id, workspaceId, status: "queued", leaseOwner: null },
    data: { status: "cancelled", cancelRequested: true, error: "Cancelled before it started: nothing was run.", finishedAt: new Date() },
  });
  if (unstarted.count) return { id, status: "cancelled" };
  const res = await db.evalRun.updateMany({ where: { id, workspaceId, status: { in: ["queued", "running"] } }, data: { cancelRequested: true } });
  if (!res.count) throw badRequest("That eval is not in progress: it ended meanwhile.");
  return { id, status: "cancelling" };
}

/**
 * Starts a created eval without waiting for it, on the configured executor (`SYNTHEX_EXECUTOR`):
 * in this process (tracked background work), or as the Inngest eval function
 * (inngest/functions/eval.ts) when the executor is Inngest.
 */
export async function dispatchEvalRun(db: Db, run: { id: string; workspaceId: string }, env: Env = process.env): Promise<void> {
  if (executorKind(env) === "inngest") {
    const { inngest, evalRequested } = await import("../../inngest/client");
    try {
      await inngest.send(evalRequested.create({ evalRunId: run.id, workspaceId: run.workspaceId }));
    } catch (err) {
      const reason = `Could not hand the eval to Inngest: ${message(err)}`;
      await endEvalRun(db, run.id, null, "failed", reason);
      throw new Error(reason);
    }
    return;
  }
  void trackBackground(executeEvalRun(db, run.id).catch((err: unknown) => console.error(`[synthex eval ${run.id}]`, message(err))));
}

// ---------------------------------------------------------------------------------------------
// Reading results

const RUN_LIST_SELECT = {
  id: true,
  pipelineId: true,
  template: true,
  branch: true,
  benchmark: true,
  datasetId: true,
  step: true,
  mode: true,
  k: true,
  status: true,
  error: true,
  questions: true,
  metrics: true,
  cost: true,
  latency: true,
  progress: true,
  model: true,
  judge: true,
  specHash: true,
  versionId: true,
  createdAt: true,
  finishedAt: true,
} as const;

/**
 * Eval runs, newest first. With `pipelineId` and `withTemplates`, the pipeline's runs plus the
 * template runs on the datasets it was scored on (all template runs before its first eval): the
 * rows a pipeline's Evals tab compares, in one list so one poll follows every run in progress.
 */
export async function listEvalRuns(db: Db, workspaceId: string, filter: { pipelineId?: string; benchmark?: string; withTemplates?: boolean } = {}) {
  let scope: Prisma.EvalRunWhereInput = filter.pipelineId ? { pipelineId: filter.pipelineId } : {};
  if (filter.pipelineId && filter.withTemplates) {
    const datasets = await db.evalRun.findMany({ where: { workspaceId, pipelineId: filter.pipelineId }, distinct: ["datasetId"], select: { datasetId: true } });
    const templates: Prisma.EvalRunWhereInput = datasets.length ? { template: { not: null }, datasetId: { in: datasets.map((d) => d.datasetId) } } : { template: { not: null } };
    scope = { OR: [{ pipelineId: filter.pipelineId }, templates] };
  }
  const runs = await db.evalRun.findMany({
    where: { workspaceId, ...scope, ...(filter.benchmark ? { benchmark: filter.benchmark } : {}) },
    orderBy: { createdAt: "desc" },
    take: 200,
    select: RUN_LIST_SELECT,
  });
  const names = await runNames(db, workspaceId, runs);
  return runs.map((r) => ({ ...r, metrics: metricsSchema.parse(r.metrics), judge: judgeSummary(r.judge), label: evalLabel(r, names), version: runVersion(r, names) }));
}

/** What a runs table or compare view shows of the judge: measured or why not, by which models, what it cost (no prompts). */
function judgeSummary(stored: unknown) {
  const parsed = judgeRecordSchema.safeParse(stored);
  // A row still queued before the judge config was stored reads as "{}".
  if (!parsed.success) return { measured: false, reason: "no judge configuration was recorded with this run" };
  const { measured, reason, answerModel, judgeModel, budgetUsd, spentUsd, judged, garbage, failed, overBudget } = parsed.data;
  return { measured, reason, answerModel, judgeModel, budgetUsd, spentUsd, judged, garbage, failed, overBudget };
}

export async function getEvalRun(db: Db, workspaceId: string, id: string) {
  const run = await db.evalRun.findFirst({ where: { id, workspaceId }, omit: { aggregates: true } });
  if (!run) throw notFound(`Eval run ${id} not found.`);
  const names = await runNames(db, workspaceId, [run]);
  return {
    ...run,
    metrics: metricsSchema.parse(run.metrics),
    perCategory: perCategorySchema.parse(run.perCategory),
    skips: loadSkipsSchema.parse(run.skips),
    judge: judgeRecordSchema.parse(run.judge),
    cost: evalCostSchema.parse(run.cost ?? {}),
    latency: latencySchema.parse(run.latency ?? {}),
    label: evalLabel(run, names),
    version: runVersion(run, names),
  };
}


/**
 * A baseline eval run beside others: metrics with deltas, per category, cost, and the questions
 * side by side — regressions first (the baseline found an evidence session in its top 5, the
 * other did not), then improvements, then the rest.
 */
/**
 * Runs side by side (metrics, deltas to the baseline) and, unless `withQuestions` is false, every
 * question with each run's first hits — the expensive part (every case of every run is read); the
 * compare page asks for the runs only and reads questions through server/eval/compare-questions.ts.
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

/** Hits per question and run a comparison returns (the compare view shows 8). */
const COMPARE_HITS = 10;
/** Cases read per query: a full run's cases (kilobytes each, with their hits) are never read in one result. */
const CASE_PAGE = 200;

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

/** One case with its retrieved records (ids of records in the eval copy: open them with record.lineage). */
export async function getEvalCase(db: Db, workspaceId: string, id: string) {
  const c = await db.evalCase.findFirst({ where: { id, workspaceId } });
  if (!c) throw notFound(`Eval case ${id} not found.`);
  const run = await db.evalRun.findFirstOrThrow({ where: { id: c.evalRunId, workspaceId }, select: { evalPipelineId: true, branch: true } });
  return { ...c, scores: metricsSchema.parse(c.scores), retrieved: storedHitsSchema.parse(c.retrieved), evidence: evidenceSchema.parse(c.evidence), evalPipelineId: run.evalPipelineId, branch: run.branch };
}
