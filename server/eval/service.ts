/**
 * Evals: score a pipeline branch (or a template) on a benchmark, with its cost. This file is one
 * eval's lifecycle, read top to bottom like services/runs.ts: start (validate, the judge config,
 * the queued row) → execute its phases under a lease → store every case → completed; or cancel,
 * or dispatch it to the configured executor.
 *
 * How an eval runs: the benchmark's sessions become the source records of a hidden *eval copy*
 * of the pipeline (eval-copy.ts: same spec, same branch names, its own records: the team's memory
 * is never touched), one scope per benchmark sample (`locomo:conv-26`). The copy's branch runs
 * incrementally (build.ts) — records are content-addressed, so a second eval of an unchanged spec
 * computes nothing. Each question is searched within its sample's scope at the configured altitude
 * and mode; the retrieved records are traced to sessions and turns through provenance and scored
 * (score.ts, metrics.ts). The run row is `completed` only when every case is stored (one transaction).
 *
 * Elsewhere: stored datasets in dataset-store.ts, reading runs and cases in run-reads.ts, the
 * compare read in compare.ts, retry in retry.ts, the leaderboard in leaderboard.ts.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { toJsonColumn } from "../core/json";
import type { ModelProvider } from "../engine/model";
import { parseModelId } from "../llm/sdk-model";
import { specHash } from "../pipeline/hashing";
import type { PipelineSpec } from "../pipeline/spec";
import { trackBackground } from "../services/background";
import { executorKind, type Env } from "../services/executor";
import { getBranch, getPipeline } from "../services/pipelines";
import { availableProviders } from "../services/provider-check";
import { retryTransient } from "../store/db-errors";
import { claimEvalLease, keepLeaseAlive, processLeaseOwner, renewRunLease, runLeaseMs, writeEvalProgress } from "../store/run-lease";
import { buildEval } from "./build";
import { getDataset } from "./dataset-store";
import { ensureEvalCopy } from "./eval-copy";
import { ANSWER_PROMPT, DEFAULT_BUDGET_USD, JUDGE_PROMPT, OFFLINE_JUDGE, type JudgeRecord } from "./judge";
import type { EvalBuilt, EvalControl, EvalProgress, EvalRunRow } from "./phase";
import { getQuestionSet, QUESTION_SET_BENCHMARK } from "./question-sets";
import { evaluate, type Evaluated } from "./score";
import { evalTemplate, isEvalTemplate, EVAL_MODES, EVAL_TEMPLATES, type EvalMode, type EvalTemplate } from "./templates";

export const DEFAULT_K = 50;
export const MAX_K = 100;
const EXTRACTIVE = "offline/extractive";

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
      void writeEvalProgress(db, run.id, owner, p).catch(() => {});
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
