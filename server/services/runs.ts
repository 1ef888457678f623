/**
 * Runs, and the one run lifecycle every executor drives: start → batches → finish → afterRun.
 *
 * - `beginRun`: load the queued Run row, validate its spec, plan the steps, mark it running;
 * - `runBatch`: one batch of one step with the engine (`runStepBatch`), its failed work items and
 *   the running stats on the Run row, and the failure policy (a permanent error fails the run; a
 *   transient one is retried in process, or fails the batch so Inngest retries it);
 * - `finishRun`: the final status and stats, then `afterRun` (embeddings for search, projection
 *   changes, webhooks).
 *
 * The in-process executor (`executeRunRow`) calls them in a loop; the Inngest run function
 * (inngest/functions/run.ts) calls each inside its own memoized `step.run`. Either way the UI
 * reads the same Run row, and every run is indexed and notifies webhooks the same way.
 *
 * The recovery sweeps that resume a dead server's runs with the same functions live in run-recovery.ts.
 */
import type { Prisma } from "../generated/prisma/client";
import type { ModelProvider } from "../engine/model";
import { EngineError } from "../engine/model";
import {
  planRun,
  retireStep,
  runStepBatch,
  selectSteps,
  startStep,
  type EngineContext,
  type RunOptions,
  type StepProgress,
  type StepStats,
} from "../engine/runner";
import { isRunnableStepType } from "../engine/steps";
import { queuedStats, runOutcome, settleSteps } from "../engine/step-outcomes";
import { parseRunStats } from "../store/runs";

export { queuedStats };
import { OfflineModel } from "../llm/offline-model";
import { workspaceModel } from "../llm/workspace-model";
import { parseSpec, type PipelineSpec } from "../pipeline/spec";
import { afterRun, type AfterRunOptions } from "./after-run";
import { PostgresRecordStore } from "../store/record-store";
import type { Db } from "../core/db";
import { badRequest, conflict, notFound } from "../core/errors";
import { toJsonColumn } from "../core/json";
import { processState } from "../core/process-state";
import { claimRunLease, keepLeaseAlive, processLeaseOwner, releaseRunLease, renewRunLease, runLeaseMs } from "../store/run-lease";
import { isTransientDbError, retryTransient } from "../store/db-errors";
import { executorKind, inngestExecutor, localExecutor, type Env, type RunExecutor } from "./executor";
import { recordAudit } from "./audit";
import { getBranch } from "./pipelines";

export type RunRequest = Pick<RunOptions, "steps" | "from" | "full" | "replay" | "concurrency" | "batchSize">;

const ACTIVE = ["queued", "running"];
const TERMINAL = ["completed", "completed_with_errors", "failed", "cancelled"];

export async function createRun(
  db: Db,
  input: {
    workspaceId: string;
    pipelineId: string;
    branch?: string;
    options?: RunRequest;
    triggeredBy?: string | null;
    /**
     * A run no procedure started (ingest closing a session, new source records on Inngest): its
     * `run.start` audit entry, written here as `system` (procedures declare theirs in their meta).
     */
    auditTrigger?: string;
  },
) {
  const { branch, version } = await getBranch(db, input.pipelineId, input.branch ?? "main");
  const running = await db.run.findFirst({ where: { branchId: branch.id, status: { in: ACTIVE } } });
  if (running) throw conflict(`A run is already in progress on branch "${branch.name}" (${running.id}). Wait for it or cancel it.`);
  const run = await db.run.create({
    data: {
      workspaceId: input.workspaceId,
      pipelineId: input.pipelineId,
      branchId: branch.id,
      versionId: version.id,
      status: "queued",
      options: (input.options ?? {}) as Prisma.InputJsonValue,
      triggeredBy: input.triggeredBy ?? null,
    },
  });
  if (input.auditTrigger) {
    await recordAudit(db, {
      workspaceId: input.workspaceId,
      actor: "system",
      action: "run.start",
      target: `run:${run.id}`,
      summary: { pipelineId: input.pipelineId, branch: branch.name, options: input.options ?? {}, trigger: input.auditTrigger },
    });
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// The lifecycle

/**
 * A failure that ends a run (`permanent`: retrying cannot help, the Run row is already marked
 * failed) or a batch (`transient`: retry the batch). Executors map the kind, never the message.
 */
export class RunError extends Error {
  constructor(
    message: string,
    readonly kind: "transient" | "permanent",
  ) {
    super(message);
    this.name = "RunError";
  }
}

/** Marks a run failed with a visible reason (unless it already finished). */
export async function markRunFailed(db: Db, runId: string, reason: string) {
  await db.run.updateMany({ where: { id: runId, status: { in: ACTIVE } }, data: { status: "failed", error: reason, finishedAt: new Date() } });
}

export async function markRunCancelled(db: Db, runId: string) {
  await db.run.updateMany({
    where: { id: runId, status: { in: ACTIVE } },
    data: { status: "cancelled", cancelRequested: true, finishedAt: new Date(), error: "The run was cancelled." },
  });
}

async function failPermanently(db: Db, runId: string, reason: string): Promise<never> {
  await markRunFailed(db, runId, reason);
  throw new RunError(reason, "permanent");
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function loadRun(db: Db, runId: string) {
  const run = await db.run.findUnique({ where: { id: runId } });
  if (!run) throw new RunError(`Run ${runId} not found.`, "permanent");
  return run;
}

type RunRow = Awaited<ReturnType<typeof loadRun>>;

async function loadSpec(db: Db, run: RunRow): Promise<PipelineSpec> {
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
  const parsed = parseSpec(version.spec);
  if (parsed.ok) return parsed.spec;
  const lines = parsed.problems.map((p) => `${p.path.join(".") || "spec"}: ${p.message}`);
  return failPermanently(db, run.id, `The pipeline spec is invalid:\n${lines.join("\n")}`);
}

function engineContext(db: Db, run: RunRow, spec: PipelineSpec, model: ModelProvider): EngineContext {
  const { workspaceId, pipelineId, branchId } = run;
  return { store: new PostgresRecordStore(db), model, workspaceId, pipelineId, branchId, runId: run.id, spec };
}

/** Engine options a run's batches share: the run's own request, over the executor's settings. */
export type BatchOptions = Pick<RunOptions, "replay" | "concurrency" | "batchSize" | "maxAttempts" | "retryBaseMs">;

export interface PlannedStep {
  name: string;
  type: string;
}

export type BeginResult =
  | { state: "ready"; steps: PlannedStep[]; full: boolean; options: BatchOptions }
  | { state: "finished"; status: string }
  | { state: "cancelled" };

/** Without its undefined fields (so a spread does not erase a value, and Inngest stores plain JSON). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Start: validate the spec, select and plan the steps, mark the run running. Permanent problems fail it. */
export async function beginRun(db: Db, runId: string, defaults: BatchOptions = {}): Promise<BeginResult> {
  const run = await loadRun(db, runId);
  if (TERMINAL.includes(run.status)) return { state: "finished", status: run.status };
  if (run.cancelRequested) {
    await markRunCancelled(db, runId);
    return { state: "cancelled" };
  }
  const spec = await loadSpec(db, run);
  const request = (run.options ?? {}) as RunRequest;
  let steps: PlannedStep[];
  try {
    // Each step plans itself at its first batch (a plan here would be stale by then).
    steps = selectSteps(spec, request).map((s) => ({ name: s.name, type: s.type }));
    const unsupported = steps.filter((s) => !isRunnableStepType(s.type));
    if (unsupported.length) throw new EngineError(unsupported.map((s) => `${s.name}: step type ${s.type} is not supported yet`).join("\n"), "permanent");
  } catch (err) {
    if (!(err instanceof EngineError && err.kind === "permanent")) throw err;
    return failPermanently(db, runId, message(err));
  }
  // Every selected step is on the Run row from the start (queued), so the run view shows the whole plan.
  const fresh = parseRunStats(run).steps.length === 0;
  const queued = fresh ? { stats: toJsonColumn({ steps: Object.values(queuedStats(steps)) }) } : {};
  await db.run.update({ where: { id: runId }, data: { status: "running", startedAt: run.startedAt ?? new Date(), ...queued } });
  // The executor's settings win over the run's request (a test's batch size, Inngest's attempts).
  const options = defined({ concurrency: request.concurrency, batchSize: request.batchSize, ...defined(defaults) });
  if (request.replay) options.replay = true;
  return { state: "ready", steps, full: Boolean(request.full), options };
}

/** Full runs: retire a step's current records once, before its first batch. */
export async function retireRunStep(db: Db, runId: string, step: string) {
  const run = await loadRun(db, runId);
  await retireStep(engineContext(db, run, await loadSpec(db, run), new OfflineModel()), step);
  return { retired: step };
}

export interface BatchInput {
  runId: string;
  step: string;
  /** Where the step is (null: its first batch plans it). */
  progress: StepProgress | null;
  /** Stats of the run's steps so far, and their order, for the Run row. */
  totals: Record<string, StepStats>;
  order: string[];
  options: BatchOptions;
}

export type BatchResult =
  | { outcome: "ok"; progress: StepProgress; totals: Record<string, StepStats> }
  | { outcome: "cancelled"; totals: Record<string, StepStats> };

export interface BatchDeps {
  model: ModelProvider | ((run: RunRow) => ModelProvider | Promise<ModelProvider>);
  /**
   * Who retries a transient provider error. "in-process": the engine did (backoff, up to
   * `maxAttempts`) and what still fails is a recorded failed item. "executor": the batch fails
   * so the executor retries it, except on its final attempt.
   */
  transient: "in-process" | "executor";
  finalAttempt?: boolean;
  signal?: AbortSignal;
  onEvent?: RunOptions["onEvent"];
  /** In process, batches of one run share one engine context (the kinds' plans are reused). */
  session?: { context?: EngineContext };
}

async function persistStats(db: Db, runId: string, spec: EngineContext["spec"], order: string[], totals: Record<string, StepStats>) {
  const steps = settleSteps(spec, order.map((name) => totals[name]).filter((s): s is StepStats => Boolean(s)), "running");
  await db.run.update({ where: { id: runId }, data: { stats: toJsonColumn({ steps }) } });
}

/** One batch of one step: engine work, failed items, stats on the Run row, and the failure policy. */
export async function runBatch(db: Db, input: BatchInput, deps: BatchDeps): Promise<BatchResult> {
  const run = await loadRun(db, input.runId);
  if (run.cancelRequested || run.status === "cancelled") {
    await markRunCancelled(db, run.id);
    return { outcome: "cancelled", totals: input.totals };
  }
  let ctx = deps.session?.context;
  if (!ctx) {
    const model = typeof deps.model === "function" ? await deps.model(run) : deps.model;
    ctx = engineContext(db, run, await loadSpec(db, run), model);
    if (deps.session) deps.session.context = ctx;
  }
  const options: RunOptions = { ...input.options, signal: deps.signal, onEvent: deps.onEvent };
  let out;
  try {
    let progress = input.progress;
    if (!progress) {
      progress = await startStep(ctx, input.step, options);
      // The step at work shows "running" while its first batch computes, not "queued" until it ends.
      await persistStats(db, run.id, ctx.spec, input.order, { ...input.totals, [input.step]: progress.stats });
    }
    out = await runStepBatch(ctx, progress, options);
  } catch (err) {
    if (err instanceof EngineError && err.kind === "permanent") return failPermanently(db, run.id, `${input.step}: ${err.message}`);
    throw err;
  }
  const transient = out.failures.find((f) => f.kind === "transient");
  if (transient && deps.transient === "executor" && !deps.finalAttempt) {
    // What this batch committed stays; the retry computes only the items that failed.
    throw new RunError(`${input.step}: transient provider error (${transient.error}); Inngest retries this batch.`, "transient");
  }
  for (const failure of out.failures) await ctx.store.recordFailure(run.id, run.workspaceId, failure);
  const totals = { ...input.totals, [input.step]: out.progress.stats };
  await persistStats(db, run.id, ctx.spec, input.order, totals);
  const permanent = out.failures.find((f) => f.kind === "permanent");
  if (permanent) return failPermanently(db, run.id, `${input.step}: the model provider refused the request: ${permanent.error}`);
  if (out.cancelled) {
    await markRunCancelled(db, run.id);
    return { outcome: "cancelled", totals };
  }
  if (out.progress.finished) deps.onEvent?.({ type: "step-finished", step: input.step, stats: { ...out.progress.stats } });
  return { outcome: "ok", progress: out.progress, totals };
}

export interface FinishOptions extends AfterRunOptions {
  /** Index for search and notify webhooks after the run (default true). */
  afterRun?: boolean;
}

/**
 * Finish: the final status (unless the run already ended failed or cancelled) and stats, then
 * afterRun: what the run made is indexed for search and projection webhooks fire (also after a
 * failed or cancelled run: what was committed is real).
 */
export async function finishRun(
  db: Db,
  runId: string,
  outcome: { order: string[]; totals: Record<string, StepStats>; failed?: string },
  options: FinishOptions = {},
) {
  const listed = outcome.order.map((name) => outcome.totals[name]).filter((s): s is StepStats => Boolean(s));
  // A run whose every work item failed (every model call) is failed, not completed with errors (runOutcome).
  const ended = outcome.failed ? { status: "failed", error: outcome.failed } : runOutcome(listed);
  await db.run.updateMany({
    where: { id: runId, status: { in: ACTIVE } },
    data: { status: ended.status, error: ended.error ?? null, finishedAt: new Date() },
  });
  const run = await loadRun(db, runId);
  const end = run.status === "cancelled" ? "cancelled" : run.status === "failed" ? "failed" : "completed";
  const spec = parseSpec((await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } })).spec);
  const steps = spec.ok ? settleSteps(spec.spec, listed, end) : listed;
  const finished = await db.run.update({ where: { id: runId }, data: { stats: toJsonColumn({ steps }) } });
  if (options.afterRun !== false) await afterRun(db, finished, options);
  return finished;
}

export interface ExecuteDeps {
  model?: ModelProvider;
  onEvent?: RunOptions["onEvent"];
  signal?: AbortSignal;
  runOptions?: Partial<RunOptions>;
  /** Index for search and notify webhooks after the run (default true). */
  afterRun?: boolean;
  /** Lease owner (default: this process) and lease length (default `SYNTHEX_RUN_LEASE_MS`). */
  lease?: { owner?: string; ttlMs?: number };
}

/**
 * Executes a queued (or interrupted) run in this process: the lifecycle above, batch after batch,
 * under a lease on the Run row renewed by heartbeats. When another live process holds the lease
 * nothing is executed (several servers share one database: each run executes once); a lease left
 * by a killed server expires and the run is resumed by whoever claims it next (`resumeExpiredRuns`).
 */
export async function executeRunRow(db: Db, runId: string, deps: ExecuteDeps = {}) {
  const owner = deps.lease?.owner ?? processLeaseOwner;
  const ttlMs = deps.lease?.ttlMs ?? runLeaseMs();
  // A run this process executes right now is never started a second time here (a sweep that saw
  // its lease expire while heartbeats were delayed would otherwise "resume" it beside itself).
  if (executingHere.has(runId)) return db.run.findUniqueOrThrow({ where: { id: runId } });
  executingHere.add(runId);
  try {
    if (!(await claimRunLease(db, runId, owner, ttlMs))) return await db.run.findUniqueOrThrow({ where: { id: runId } });
    const stopHeartbeat = keepLeaseAlive(() => renewRunLease(db, runId, owner, ttlMs), ttlMs, `run ${runId}`);
    try {
      return await executeLeasedRun(db, runId, deps);
    } finally {
      stopHeartbeat();
      await releaseRunLease(db, runId, owner).catch(() => {});
    }
  } finally {
    executingHere.delete(runId);
  }
}

/** A transient database error, not one the run already recorded as its failure (RunError). */
const retryableInRun = (err: unknown) => !(err instanceof RunError) && isTransientDbError(err);

/** Runs executing in this process now (see executeRunRow), whichever copy of this module runs them. */
const executingHere = processState("runs.executingHere", () => new Set<string>());

/** Whether this process is executing the run now: a late heartbeat, not a dead server (run-recovery.ts). */
export const isExecutingHere = (runId: string) => executingHere.has(runId);

async function executeLeasedRun(db: Db, runId: string, deps: ExecuteDeps) {
  const finishOptions: FinishOptions = { afterRun: deps.afterRun };
  const run = await loadRun(db, runId);
  const { replay, concurrency, batchSize, maxAttempts, retryBaseMs } = deps.runOptions ?? {};
  const overrides: BatchOptions = { replay, concurrency, batchSize, maxAttempts, retryBaseMs };
  let begun: BeginResult;
  try {
    begun = await retryTransient(() => beginRun(db, runId, overrides), `run ${runId} start`, 5, 250, retryableInRun);
  } catch (err) {
    if (!(err instanceof RunError)) await markRunFailed(db, runId, message(err));
    return finishRun(db, runId, { order: [], totals: {} }, finishOptions);
  }
  if (begun.state !== "ready") return db.run.findUniqueOrThrow({ where: { id: runId } });
  const order = begun.steps.map((s) => s.name);
  let totals: Record<string, StepStats> = queuedStats(begun.steps);
  const batchDeps: BatchDeps = {
    model: deps.model ?? workspaceModel(db, run.workspaceId),
    transient: "in-process",
    signal: deps.signal,
    onEvent: deps.onEvent,
    session: {},
  };
  let current = "";
  try {
    for (const step of begun.steps) {
      current = step.name;
      if (begun.full) await retireRunStep(db, runId, step.name);
      let progress: StepProgress | null = null;
      do {
        // A batch computes only work items without a record: after a transient database error it is run again.
        const input: BatchInput = { runId, step: step.name, progress, totals, order, options: begun.options };
        const out: BatchResult = await retryTransient(() => runBatch(db, input, batchDeps), `run ${runId} step ${step.name}`, 5, 250, retryableInRun);
        totals = out.totals;
        if (out.outcome === "cancelled") return finishRun(db, runId, { order, totals }, finishOptions);
        progress = out.progress;
      } while (!progress.finished);
    }
  } catch (err) {
    if (totals[current]) totals = { ...totals, [current]: { ...totals[current]!, status: "failed" } };
    // A RunError already marked the run failed with its reason.
    return finishRun(db, runId, { order, totals, failed: err instanceof RunError ? undefined : `${current}: ${message(err)}` }, finishOptions);
  }
  return finishRun(db, runId, { order, totals }, finishOptions);
}

export async function runPipeline(db: Db, input: Parameters<typeof createRun>[1], deps: ExecuteDeps = {}) {
  const run = await createRun(db, input);
  return executeRunRow(db, run.id, deps);
}

// ---------------------------------------------------------------------------------------------
// Executors

/**
 * The configured executor (`SYNTHEX_EXECUTOR`, see executor.ts): this process runs the lifecycle
 * above (the default), or Inngest does.
 */
export function runExecutor(env: Env = process.env): RunExecutor {
  return executorKind(env) === "inngest" ? inngestExecutor : localExecutor((db, runId) => executeRunRow(db, runId));
}

/** Starts a run without waiting for it, on the configured executor. */
export async function startRun(db: Db, input: Parameters<typeof createRun>[1]) {
  const run = await createRun(db, input);
  await runExecutor().dispatch(db, run);
  return run;
}

/** The answer for a run that is not there (or that the caller may not know is there). */
export const runNotFound = (runId: string) => notFound(`Run ${runId.slice(0, 100)} not found.`);

export async function cancelRun(db: Db, workspaceId: string, runId: string) {
  if (!(await db.run.findFirst({ where: { id: runId, workspaceId }, select: { id: true } }))) throw runNotFound(runId);
  const result = await db.run.updateMany({
    where: { id: runId, workspaceId, status: { in: ACTIVE } },
    data: { cancelRequested: true },
  });
  if (result.count === 0) throw badRequest("That run is not in progress.");
  // The in-process runner polls the flag; Inngest also gets the event so cancelOn stops it between steps.
  await runExecutor().cancel(runId);
  return { cancelling: runId };
}

export async function planPipeline(db: Db, pipelineId: string, branchName = "main", options: RunRequest = {}) {
  const { branch, spec } = await getBranch(db, pipelineId, branchName);
  return planRun(
    { store: new PostgresRecordStore(db), model: new OfflineModel(), workspaceId: branch.workspaceId, pipelineId, branchId: branch.id, runId: "plan", spec },
    options,
  );
}

export async function listRuns(db: Db, workspaceId: string, pipelineId: string, take = 50) {
  return db.run.findMany({ where: { workspaceId, pipelineId }, orderBy: { createdAt: "desc" }, take });
}

export async function getRun(db: Db, workspaceId: string, runId: string) {
  const run = await db.run.findFirst({
    where: { id: runId, workspaceId },
    include: { failures: { orderBy: { createdAt: "asc" }, take: 200 } },
  });
  if (!run) throw runNotFound(runId);
  const branch = await db.branch.findUnique({ where: { id: run.branchId }, select: { name: true } });
  return { ...run, branchName: branch?.name ?? "?" };
}
