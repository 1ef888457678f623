/**
 * The engine's runner: plans and executes a pipeline run on one branch over a RecordStore and a
 * ModelProvider. It orchestrates and knows no step kind: each step's kind (./steps) says what is
 * missing, computes a work item, and points the branch at its records.
 *
 * A step runs in batches: `startStep` plans it, `runStepBatch` executes the next batch of missing
 * work items (in work-item id order, from a cursor) and commits their records, and the last batch
 * lets the kind commit the branch's pointers. `StepProgress` is plain data, so a durable executor
 * (Inngest) can memoize every batch; `executeRun` is the same loop in one process.
 *
 * Pure TypeScript: the same code runs in tests, the CLI, the Next server and Inngest.
 */
import pLimit from "p-limit";
import { normalizedStepVersionHashes } from "../pipeline/hashing";
import type { PipelineSpec } from "../pipeline/spec";
import { downstreamOf, topologicalOrder, upstreamOf } from "../pipeline/validate";
import { EngineError, failureKind, ModelError, type FailureKind } from "./model";
import { emptyStats, RunCancelled, StepContext, type ExecutionOptions, type StepIdentity, type StepStats } from "./step-context";
import { runOutcome } from "./step-outcomes";
import { inputsOf, stepKindOf, type StepDefinition, type StepKind } from "./steps";
import type { RecordStore, RunFailureInput } from "./types";

export { RunCancelled, type StepStats } from "./step-context";

export type RunEvent =
  | { type: "step-started"; step: string; pending: number }
  | { type: "step-progress"; step: string; done: number; pending: number; stats: StepStats }
  | { type: "step-finished"; step: string; stats: StepStats }
  | { type: "failure"; step: string; inputKey: string; error: string };

export interface RunOptions {
  /** Run only these steps (their upstream steps run first when they have pending work). */
  steps?: string[];
  /** Run this step and everything downstream of it. */
  from?: string;
  /** Recompute even where a materialization key exists. */
  full?: boolean;
  /** Reuse stored responses by rendered-prompt hash: no model calls for prompts seen before. */
  replay?: boolean;
  concurrency?: number;
  batchSize?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  now?: Date;
}

/** The spec as the engine runs it: parsed and normalized; a step's `type` names a registered kind. */
export interface EngineSpec {
  sources: PipelineSpec["sources"];
  steps: StepDefinition[];
}

export interface EngineContext extends StepIdentity {
  spec: EngineSpec;
}

export interface RunResult {
  status: "completed" | "completed_with_errors" | "failed" | "cancelled";
  steps: StepStats[];
  error?: string;
}

/** A failed work item, with what retrying can do about it. */
export interface StepFailure extends RunFailureInput {
  kind: FailureKind;
}

/** Where a step is between batches: plain data (Inngest memoizes it). */
export interface StepProgress {
  step: string;
  /** The last work item handled (the cursor); null before the first batch. */
  after: string | null;
  /** Work items handled so far, and missing when the step started. */
  done: number;
  pending: number;
  /** True once the last batch ran and the branch points at the step's records. */
  finished: boolean;
  stats: StepStats;
}

export interface StepBatchResult {
  progress: StepProgress;
  /** This batch's failed work items; the caller records them (or retries the batch). */
  failures: StepFailure[];
  /** The run was cancelled: this batch's work is committed, nothing more starts. */
  cancelled: boolean;
}

const DEFAULTS = { concurrency: 4, batchSize: 200, maxAttempts: 3, retryBaseMs: 250 };

function executionOptions(options: RunOptions): ExecutionOptions {
  return {
    full: Boolean(options.full),
    replay: Boolean(options.replay),
    concurrency: options.concurrency ?? DEFAULTS.concurrency,
    batchSize: options.batchSize ?? DEFAULTS.batchSize,
    maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts,
    retryBaseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
    signal: options.signal,
    now: options.now,
  };
}

/** Steps to run, in topological order. `steps` pulls in their upstream; `from` pushes downstream. */
export function selectSteps(spec: EngineSpec, options: Pick<RunOptions, "steps" | "from">): StepDefinition[] {
  const byName = new Map(spec.steps.map((s) => [s.name, s] as const));
  let wanted: Set<string>;
  if (options.from) {
    if (!byName.has(options.from)) throw new EngineError(`Unknown step "${options.from}". Steps: ${[...byName.keys()].join(", ")}`, "permanent");
    wanted = new Set([options.from, ...downstreamOf(spec, options.from)]);
  } else if (options.steps?.length) {
    wanted = new Set();
    for (const name of options.steps) {
      if (!byName.has(name)) throw new EngineError(`Unknown step "${name}". Steps: ${[...byName.keys()].join(", ")}`, "permanent");
      wanted.add(name);
      for (const up of upstreamOf(spec, name)) wanted.add(up);
    }
  } else {
    wanted = new Set(byName.keys());
  }
  return topologicalOrder(spec)
    .filter((name) => wanted.has(name) && byName.has(name))
    .map((name) => byName.get(name)!);
}

// Step contexts are kept per engine context, so the batches of one in-process step share the
// kind's plan; a batch that runs on its own (an Inngest step) plans again.
const contexts = new WeakMap<EngineContext, Map<string, { kind: StepKind; step: StepContext }>>();
const hashesOf = new WeakMap<EngineContext, Record<string, string>>();

function stepContext(ctx: EngineContext, name: string, stats: StepStats, options: ExecutionOptions) {
  let byStep = contexts.get(ctx);
  if (!byStep) contexts.set(ctx, (byStep = new Map()));
  let entry = byStep.get(name);
  if (!entry) {
    const step = ctx.spec.steps.find((s) => s.name === name);
    if (!step) throw new Error(`Unknown step "${name}".`);
    let hashes = hashesOf.get(ctx);
    if (!hashes) hashesOf.set(ctx, (hashes = normalizedStepVersionHashes(ctx.spec)));
    entry = { kind: stepKindOf(step.type), step: new StepContext(ctx, step, hashes[name]!, stats, options) };
    byStep.set(name, entry);
  }
  entry.step.stats = stats;
  entry.step.options = options;
  return entry;
}

/** Full rebuild of a step: move its records off their keys so the next batches recompute them. */
export async function retireStep(ctx: EngineContext, name: string) {
  const { step } = stepContext(ctx, name, emptyStats({ type: "", name }), executionOptions({}));
  await ctx.store.retireStep(ctx.pipelineId, name, step.svh);
}

/** Plan a step: what it has to do, before its first batch. */
export async function startStep(ctx: EngineContext, name: string, options: RunOptions = {}): Promise<StepProgress> {
  const started = Date.now();
  const def = ctx.spec.steps.find((s) => s.name === name);
  if (!def) throw new Error(`Unknown step "${name}".`);
  const stats: StepStats = { ...emptyStats(def), status: "running" };
  const { kind, step } = stepContext(ctx, name, stats, executionOptions(options));
  const counts = await kind.plan(step);
  stats.skipped = counts.total - counts.pending;
  stats.items = counts.pending;
  stats.durationMs = Date.now() - started;
  options.onEvent?.({ type: "step-started", step: name, pending: counts.pending });
  return { step: name, after: null, done: 0, pending: counts.pending, finished: false, stats };
}

function failureOf(step: string, inputKey: string, err: unknown): StepFailure {
  return {
    step,
    inputKey,
    error: err instanceof Error ? err.message : String(err),
    attempts: err instanceof ModelError ? (err.options.attempts ?? 1) : 1,
    rawResponse: err instanceof ModelError ? (err.options.raw ?? null) : null,
    kind: failureKind(err),
  };
}

/**
 * Execute the step's next batch: at most `batchSize` missing work items after the cursor, computed
 * with bounded concurrency and committed together (records, edges, pointers in one statement: all or
 * nothing, with no interactive transaction that a slow database could outlast).
 * A failed item is returned as a failure and the batch goes on. After the last batch the kind
 * commits the branch's pointers. Errors of the step itself (its plan, the store) are thrown.
 */
export async function runStepBatch(ctx: EngineContext, progress: StepProgress, options: RunOptions = {}): Promise<StepBatchResult> {
  const started = Date.now();
  const stats: StepStats = { ...progress.stats, status: "running" };
  const exec = executionOptions(options);
  const { kind, step } = stepContext(ctx, progress.step, stats, exec);
  const failures: StepFailure[] = [];
  const finish = (next: Partial<StepProgress>, cancelled = false): StepBatchResult => {
    stats.durationMs += Date.now() - started;
    if (cancelled) stats.status = "cancelled";
    return { progress: { ...progress, ...next, stats }, failures, cancelled };
  };
  try {
    await step.checkCancelled();
    // One more than a batch: whether another batch follows is known without an empty last batch.
    // Nothing was missing when the step was planned: straight to its pointers (what arrives since
    // is the next run's work).
    const nothingToDo = progress.after === null && progress.pending === 0;
    const page = nothingToDo ? [] : await kind.missing(step, { after: progress.after, limit: exec.batchSize + 1 });
    const batch = page.slice(0, exec.batchSize);
    await kind.prepare?.(step, batch);
    const made: Parameters<RecordStore["commit"]>[1] = [];
    const limit = pLimit(exec.concurrency);
    await Promise.all(
      batch.map((item) =>
        limit(async () => {
          stats.input += item.inputs ?? 1;
          try {
            made.push(...(await kind.execute(step, item)));
          } catch (err) {
            if (err instanceof RunCancelled) throw err;
            stats.errors += 1;
            const failure = failureOf(progress.step, item.id, err);
            failures.push(failure);
            options.onEvent?.({ type: "failure", step: progress.step, inputKey: item.id, error: failure.error });
          }
        }),
      ),
    );
    await ctx.store.commit(ctx.branchId, made);
    stats.output += made.length;
    const done = progress.done + batch.length;
    const after = batch.at(-1)?.id ?? progress.after;
    options.onEvent?.({ type: "step-progress", step: progress.step, done, pending: progress.pending, stats: { ...stats } });
    if (page.length > batch.length) {
      await step.checkCancelled();
      return finish({ after, done });
    }
    await kind.commit(step);
    stats.status = "completed";
    return finish({ after, done, finished: true });
  } catch (err) {
    if (err instanceof RunCancelled) return finish({}, true);
    throw err;
  }
}

/**
 * Execute the selected steps in topological order, each in batches, recording failed work items in
 * the store. (The run service drives the same batches with its run lifecycle: services/runs.ts.)
 */
export async function executeRun(ctx: EngineContext, options: RunOptions = {}): Promise<RunResult> {
  const steps = selectSteps(ctx.spec, options);
  const stats = new Map(steps.map((s) => [s.name, emptyStats(s)]));
  const all = () => steps.map((s) => stats.get(s.name)!);
  for (const def of steps) {
    try {
      if (options.full) await retireStep(ctx, def.name);
      let progress = await startStep(ctx, def.name, options);
      stats.set(def.name, progress.stats);
      while (!progress.finished) {
        const out = await runStepBatch(ctx, progress, options);
        for (const failure of out.failures) await ctx.store.recordFailure(ctx.runId, ctx.workspaceId, failure);
        progress = out.progress;
        stats.set(def.name, progress.stats);
        if (out.cancelled) {
          options.onEvent?.({ type: "step-finished", step: def.name, stats: { ...progress.stats } });
          return { status: "cancelled", steps: all(), error: `${def.name}: The run was cancelled.` };
        }
      }
    } catch (err) {
      const failed = { ...stats.get(def.name)!, status: "failed" as const };
      stats.set(def.name, failed);
      options.onEvent?.({ type: "step-finished", step: def.name, stats: { ...failed } });
      return { status: "failed", steps: all(), error: `${def.name}: ${err instanceof Error ? err.message : String(err)}` };
    }
    options.onEvent?.({ type: "step-finished", step: def.name, stats: { ...stats.get(def.name)! } });
  }
  const outcome = runOutcome(all());
  return { status: outcome.status, steps: all(), ...(outcome.error ? { error: outcome.error } : {}) };
}

export interface StepPlan {
  step: string;
  type: string;
  /** Work items to compute (records for 1:1, groups for aggregate, scopes for fold). */
  pending: number;
  /** Work items the step has on this branch once up to date. */
  total: number;
  /** True when an upstream step has pending work, so this number is an upper estimate. */
  estimated: boolean;
  stepVersionHash: string;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * What a run would do, step by step, without doing it: exact set differences for steps whose
 * inputs are current, and estimates for steps downstream of pending work.
 */
export async function planRun(ctx: EngineContext, options: Pick<RunOptions, "steps" | "from" | "full"> = {}): Promise<StepPlan[]> {
  const exec = executionOptions({ full: options.full, concurrency: 1, maxAttempts: 1, retryBaseMs: 0 });
  const pendingOf = new Map<string, number>();
  const totalOf = new Map<string, number>();
  const plans: StepPlan[] = [];
  for (const def of selectSteps(ctx.spec, options)) {
    const { kind, step } = stepContext(ctx, def.name, emptyStats(def), exec);
    const counts = await kind.plan(step);
    let { pending, total } = counts;
    const upstreamPending = sum(inputsOf(def).map((u) => pendingOf.get(u) ?? 0));
    const upstreamTotal = sum(inputsOf(def).map((u) => totalOf.get(u) ?? 0));
    const estimated = upstreamPending > 0;
    if (estimated) {
      // New upstream records change at most this many downstream work items.
      const bound = kind.estimate ? kind.estimate({ ...counts, upstreamPending, upstreamTotal }) : Math.max(total, 1);
      pending = Math.max(pending, bound);
      total = Math.max(total, pending);
    }
    pendingOf.set(def.name, pending);
    totalOf.set(def.name, total);
    plans.push({ step: def.name, type: def.type, pending, total, estimated, stepVersionHash: step.svh });
  }
  return plans;
}
