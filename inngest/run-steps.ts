/**
 * What the Inngest run function does inside its memoized steps. The engine is the same one the
 * in-process runner uses (server/engine/runner.ts); this module only cuts a run into durable
 * pieces and keeps the Run row (status, per-step stats, failures) up to date, so the UI reads
 * the same rows whichever executor ran it.
 *
 * Cutting: one `step.run` per pipeline step, and for transform/split steps one `step.run` per
 * page of `batchSize` input records (keyset-paged by record id, the page start memoized in the
 * function's state). Every piece is idempotent: the engine computes only work items that have no
 * record yet, so re-executing a piece whose result Inngest lost makes no model calls.
 */
import { NonRetriableError } from "inngest";
import type { Prisma } from "../server/generated/prisma/client";
import { ModelError, type ModelProvider, type ModelRequest, type ModelResponse } from "../server/engine/model";
import { executeRun, planRun, selectSteps, type RunOptions, type StepPlan, type StepStats } from "../server/engine/runner";
import type { RecordStore, RunFailureInput } from "../server/engine/types";
import { stepVersionHashes } from "../server/pipeline/hashing";
import { parseSpec, type PipelineSpec, type StepSpec } from "../server/pipeline/spec";
import type { Db } from "../server/core/db";
import type { RunRequest } from "../server/services/runs";
import { PostgresRecordStore } from "../server/store/record-store";

export interface RunFunctionDeps {
  /** The database holding the Run rows and records (the app's `getDb`, or a test database). */
  getDb: () => Promise<Db> | Db;
  /** The model provider for a run (default: the offline model, as the in-process runner). */
  getModel: (run: { id: string; workspaceId: string; pipelineId: string }, db: Db) => Promise<ModelProvider> | ModelProvider;
  /** Work items per memoized batch for transform/split steps. */
  batchSize?: number;
}

const TERMINAL = ["completed", "completed_with_errors", "failed", "cancelled"];
const SUPPORTED: StepSpec["type"][] = ["transform", "split", "aggregate", "fold", "merge"];
const BATCHED: StepSpec["type"][] = ["transform", "split"];

export interface PlannedStep {
  name: string;
  type: StepSpec["type"];
  /** Executed as several `step.run`s of `batchSize` records (transform, split). */
  batched: boolean;
  pending: number;
}

export type PlanResult =
  | { state: "ready"; steps: PlannedStep[]; full: boolean; batchSize: number; runOptions: Pick<RunOptions, "replay" | "concurrency"> }
  | { state: "finished"; status: string }
  | { state: "cancelled" };

export type BatchResult =
  | { outcome: "ok"; stats: StepStats; pageSize: number; lastId: string | null }
  | { outcome: "cancelled"; stats: StepStats | null };

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function loadRun(db: Db, runId: string) {
  const run = await db.run.findUnique({ where: { id: runId } });
  if (!run) throw new NonRetriableError(`Run ${runId} not found.`);
  return run;
}

/** Marks a run failed with a visible reason (unless it already finished). */
export async function markRunFailed(db: Db, runId: string, reason: string) {
  await db.run.updateMany({
    where: { id: runId, status: { in: ["queued", "running"] } },
    data: { status: "failed", error: reason, finishedAt: new Date() },
  });
}

export async function markRunCancelled(db: Db, runId: string) {
  await db.run.updateMany({
    where: { id: runId, status: { in: ["queued", "running"] } },
    data: { status: "cancelled", cancelRequested: true, finishedAt: new Date(), error: "The run was cancelled." },
  });
}

async function failPermanently(db: Db, runId: string, reason: string): Promise<never> {
  await markRunFailed(db, runId, reason);
  throw new NonRetriableError(reason);
}

/** `step.run("plan")`: validate, select the steps, mark the run running. Permanent problems are not retried. */
export async function planStep(deps: RunFunctionDeps, runId: string): Promise<PlanResult> {
  const db = await deps.getDb();
  const run = await loadRun(db, runId);
  if (TERMINAL.includes(run.status)) return { state: "finished", status: run.status };
  if (run.cancelRequested) {
    await markRunCancelled(db, runId);
    return { state: "cancelled" };
  }
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
  const parsed = parseSpec(version.spec);
  if (!parsed.ok) {
    const lines = parsed.problems.map((p) => `${p.path.join(".") || "spec"}: ${p.message}`);
    return failPermanently(db, runId, `The pipeline spec is invalid:\n${lines.join("\n")}`);
  }
  // Execute the stored spec exactly as the in-process runner does (same step version hashes).
  const spec = version.spec as unknown as PipelineSpec;
  const options = (run.options ?? {}) as RunRequest;
  let selected: StepSpec[];
  try {
    selected = selectSteps(spec, options);
  } catch (err) {
    return failPermanently(db, runId, message(err));
  }
  const unsupported = selected.filter((s) => !SUPPORTED.includes(s.type));
  if (unsupported.length) {
    return failPermanently(db, runId, unsupported.map((s) => `${s.name}: step type ${s.type} is not supported yet`).join("\n"));
  }
  let plans: StepPlan[] = [];
  try {
    plans = await planRun(engineContext(run, spec, new PostgresRecordStore(db), { complete: notCalled }), options);
  } catch (err) {
    if (/not supported/.test(message(err))) return failPermanently(db, runId, message(err));
    throw err;
  }
  await db.run.update({ where: { id: runId }, data: { status: "running", startedAt: run.startedAt ?? new Date() } });
  const pendingOf = new Map(plans.map((p) => [p.step, p.pending]));
  return {
    state: "ready",
    full: Boolean(options.full),
    runOptions: { ...(options.replay ? { replay: true } : {}), ...(options.concurrency ? { concurrency: options.concurrency } : {}) },
    batchSize: deps.batchSize ?? options.batchSize ?? 100,
    steps: selected.map((s) => ({ name: s.name, type: s.type, batched: BATCHED.includes(s.type), pending: pendingOf.get(s.name) ?? 0 })),
  };
}

const notCalled = async (): Promise<ModelResponse> => {
  throw new Error("planning does not call the model");
};

function engineContext(
  run: { id: string; workspaceId: string; pipelineId: string; branchId: string },
  spec: PipelineSpec,
  store: RecordStore,
  model: ModelProvider,
) {
  return { store, model, workspaceId: run.workspaceId, pipelineId: run.pipelineId, branchId: run.branchId, runId: run.id, spec };
}

/** `step.run("retire:<step>")` for `full` runs: retire the step's current records once, before its batches. */
export async function retireStep(deps: RunFunctionDeps, runId: string, stepName: string) {
  const db = await deps.getDb();
  const run = await loadRun(db, runId);
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
  const hashes = stepVersionHashes(version.spec as unknown as PipelineSpec);
  await new PostgresRecordStore(db).retireStep(run.pipelineId, stepName, hashes[stepName]!);
  return { retired: stepName };
}

type ErrorClass = "transient" | "permanent" | "other";

/** Provider errors: 429/5xx/timeouts are transient (Inngest retries), auth errors are permanent. */
export function classifyProviderError(err: unknown): ErrorClass {
  if (err instanceof ModelError) {
    if (err.options.permanent) return "permanent";
    if (err.options.transient) return "transient";
    // server/llm/sdk-model.ts: auth failures carry the response body (so no `permanent` flag),
    // and transient errors past the provider's own retries are reported as "gave up after N attempts".
    if (/authentication failed \(HTTP 40[13]\)/.test(err.message)) return "permanent";
    if (/\(gave up after \d+ attempts?\)/.test(err.message)) return "transient";
  }
  const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown } | null)?.statusCode;
  if (status === 401 || status === 403) return "permanent";
  if (status === 408 || status === 429 || (typeof status === "number" && status >= 500)) return "transient";
  return "other";
}

/** Watches what the provider throws during one batch, without changing it. */
class WatchedModel implements ModelProvider {
  transient: string | null = null;
  permanent: string | null = null;
  constructor(private readonly inner: ModelProvider) {}
  async complete(request: ModelRequest): Promise<ModelResponse> {
    try {
      return await this.inner.complete(request);
    } catch (err) {
      const kind = classifyProviderError(err);
      if (kind === "transient") this.transient ??= message(err);
      if (kind === "permanent") this.permanent ??= message(err);
      throw err;
    }
  }
}

function addStats(a: StepStats | undefined, b: StepStats): StepStats {
  if (!a) return { ...b };
  const input = a.input + b.input;
  return {
    ...b,
    input,
    output: a.output + b.output,
    // The engine's `skipped` is "upstream records minus inputs of this call": re-base it on the total.
    skipped: Math.max(0, b.skipped + b.input - input),
    errors: a.errors + b.errors,
    modelCalls: a.modelCalls + b.modelCalls,
    retries: a.retries + b.retries,
    tokensIn: a.tokensIn + b.tokensIn,
    tokensOut: a.tokensOut + b.tokensOut,
    costUsd: a.costUsd + b.costUsd,
    durationMs: a.durationMs + b.durationMs,
  };
}

export function mergeStats(totals: Record<string, StepStats>, stats: StepStats): Record<string, StepStats> {
  return { ...totals, [stats.step]: addStats(totals[stats.step], stats) };
}

async function persistStats(db: Db, runId: string, order: string[], totals: Record<string, StepStats>) {
  const steps = order.map((name) => totals[name]).filter((s): s is StepStats => Boolean(s));
  await db.run.update({ where: { id: runId }, data: { stats: { steps } as unknown as Prisma.InputJsonValue } });
}

export interface BatchInput {
  runId: string;
  step: string;
  /** Transform/split: this batch starts after this input record id (null: from the start). */
  afterId: string | null;
  batched: boolean;
  batchSize: number;
  /** Stats of the earlier batches (memoized), so the Run row shows running totals. */
  totals: Record<string, StepStats>;
  order: string[];
  /** The last attempt Inngest will make: transient failures stay as visible failed work items. */
  finalAttempt: boolean;
  runOptions?: Pick<RunOptions, "replay" | "concurrency">;
}

/**
 * `step.run("step:<name>:<batch>")`: execute one step (or one page of a transform/split step)
 * with the engine. Transient provider errors fail the piece so Inngest retries it (its failure
 * rows are discarded, since the retry recomputes those items); a permanent provider error fails
 * the run with the reason and is not retried.
 */
export async function executeBatch(deps: RunFunctionDeps, input: BatchInput): Promise<BatchResult> {
  const db = await deps.getDb();
  const run = await loadRun(db, input.runId);
  if (run.cancelRequested || run.status === "cancelled") {
    await markRunCancelled(db, run.id);
    return { outcome: "cancelled", stats: null };
  }
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
  const spec = version.spec as unknown as PipelineSpec;
  const base = new PostgresRecordStore(db);
  const failures: RunFailureInput[] = [];
  let page: { size: number; lastId: string | null } = { size: 0, lastId: input.afterId };
  let pageCalls = 0;
  const store = new Proxy<RecordStore>(base, {
    get(target, prop) {
      if (prop === "missingOneToOne" && input.batched) {
        const fn: RecordStore["missingOneToOne"] = async (scope, upstream, p) => {
          if (scope.step !== input.step) return target.missingOneToOne(scope, upstream, p);
          // One page per piece: the first call starts where the previous piece stopped, the next ends the step.
          pageCalls += 1;
          if (pageCalls > 1) return [];
          const rows = await target.missingOneToOne(scope, upstream, { afterId: input.afterId ?? undefined, limit: input.batchSize });
          page = { size: rows.length, lastId: rows.at(-1)?.id ?? input.afterId };
          return rows;
        };
        return fn;
      }
      if (prop === "recordFailure") {
        const fn: RecordStore["recordFailure"] = async (_runId, _workspaceId, failure) => {
          failures.push(failure);
        };
        return fn;
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const model = new WatchedModel(await deps.getModel(run, db));
  // `from: step` runs this step and would go on downstream: stop as soon as this step finishes.
  const stop = new AbortController();
  const result = await executeRun(engineContext(run, spec, store, model), {
    ...input.runOptions,
    from: input.step,
    batchSize: input.batchSize,
    // Retries of transient errors are Inngest's (step retries with backoff), not the engine's.
    maxAttempts: 1,
    signal: stop.signal,
    onEvent: (event) => {
      if (event.type === "step-finished" && event.step === input.step) stop.abort();
    },
  });
  const stats = result.steps.find((s) => s.step === input.step);
  const flushFailures = async () => {
    for (const f of failures) await base.recordFailure(run.id, run.workspaceId, f);
  };
  if (!stats) throw new Error(`Step "${input.step}" did not run.`);
  if (stats.status === "cancelled") {
    await flushFailures();
    await persistStats(db, run.id, input.order, mergeStats(input.totals, stats));
    await markRunCancelled(db, run.id);
    return { outcome: "cancelled", stats };
  }
  if (model.permanent) {
    await flushFailures();
    await persistStats(db, run.id, input.order, mergeStats(input.totals, stats));
    return failPermanently(db, run.id, `${input.step}: the model provider refused the request: ${model.permanent}`);
  }
  if (model.transient && !input.finalAttempt) {
    throw new Error(`${input.step}: transient provider error (${model.transient}); Inngest retries this batch.`);
  }
  if (stats.status === "failed") {
    await flushFailures();
    // Not classified: retried by Inngest; when retries run out, onFailure marks the run failed.
    throw new Error(result.error ?? `${input.step} failed`);
  }
  await flushFailures();
  await persistStats(db, run.id, input.order, mergeStats(input.totals, stats));
  return { outcome: "ok", stats, pageSize: page.size, lastId: page.lastId };
}

/** `step.run("finish")`: final status and stats on the Run row. */
export async function finishRun(deps: RunFunctionDeps, runId: string, order: string[], totals: Record<string, StepStats>) {
  const db = await deps.getDb();
  const steps = order.map((name) => totals[name]).filter((s): s is StepStats => Boolean(s));
  const errors = steps.reduce((n, s) => n + s.errors, 0);
  const status = errors > 0 ? "completed_with_errors" : "completed";
  await db.run.updateMany({
    where: { id: runId, status: { in: ["queued", "running"] } },
    data: { status, error: null, finishedAt: new Date(), stats: { steps } as unknown as Prisma.InputJsonValue },
  });
  return { runId, status, steps: steps.map((s) => ({ step: s.step, input: s.input, output: s.output, errors: s.errors })) };
}
