/**
 * The one registry of Synthex's Inngest events: name + zod schema. Senders build events with
 * `runRequested.create({...})` and functions trigger on the same objects, so payloads are typed
 * (and validated) at both ends.
 */
import { eventType } from "inngest";
import { z } from "zod";

const id = z.string().min(1);

export const runRequestedData = z.object({
  runId: id,
  /** Concurrency key: one workspace cannot starve the others. */
  workspaceId: id,
  /**
   * Concurrency and throttle key for the model provider(s) the run calls: "openai",
   * "anthropic+openai", "offline", or "none" for a pipeline without LLM steps.
   */
  provider: id,
});

export const runCancelledData = z.object({ runId: id });

export const sourceAppendedData = z.object({ workspaceId: id, pipelineId: id, branch: id });

export const evalRequestedData = z.object({ evalRunId: id, workspaceId: id });

/** Execute a queued Run row (created by `createRun`). */
export const runRequested = eventType("synthex/run.requested", { schema: runRequestedData });
/** Stop a run between batches (the function's `cancelOn`). */
export const runCancelled = eventType("synthex/run.cancelled", { schema: runCancelledData });
/** Source records were pushed to a pipeline branch: a debounced incremental run follows. */
export const sourceAppended = eventType("synthex/source.appended", { schema: sourceAppendedData });
/** Execute a queued EvalRun row (created by `createEvalRun`): build its memory, then score it. */
export const evalRequested = eventType("synthex/eval.requested", { schema: evalRequestedData });

export const synthexEvents = { runRequested, runCancelled, sourceAppended, evalRequested } as const;

export type RunRequestedData = z.infer<typeof runRequestedData>;
export type RunCancelledData = z.infer<typeof runCancelledData>;
export type SourceAppendedData = z.infer<typeof sourceAppendedData>;
export type EvalRequestedData = z.infer<typeof evalRequestedData>;
