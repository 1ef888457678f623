/**
 * Which runner executes a run is configuration, not a code fork:
 *
 * - `SYNTHEX_EXECUTOR=local` (default): the in-process runner, fire-and-forget in this server
 *   process (bounded concurrency, engine retries with backoff).
 * - `SYNTHEX_EXECUTOR=inngest`: send `synthex/run.requested`; the Inngest run function
 *   (inngest/functions/run.ts) drives the same run lifecycle in durable, memoized batches.
 *
 * Either way the run lifecycle of services/runs.ts runs (which hands this module the local
 * runner, so the two do not import each other), and progress, stats, failures, the final status
 * and afterRun (search index, webhooks) are the same.
 */
import type { PipelineSpec } from "../pipeline/spec";
import { DEFAULT_MODEL, LLM_STEP_TYPES } from "../pipeline/spec";
import { trackBackground } from "./background";
import type { Db } from "../core/db";
import { storedSpec } from "../store/pipelines";

export type ExecutorKind = "local" | "inngest";

/** process.env or a plain object (tests). */
export type Env = Record<string, string | undefined>;

export function executorKind(env: Env = process.env): ExecutorKind {
  const value = (env.SYNTHEX_EXECUTOR ?? "").trim().toLowerCase();
  if (value === "" || value === "local") return "local";
  if (value === "inngest") return "inngest";
  throw new Error(`SYNTHEX_EXECUTOR must be "local" or "inngest" (got "${env.SYNTHEX_EXECUTOR}").`);
}

const MODEL_STEP_TYPES = new Set<string>(LLM_STEP_TYPES);

/**
 * The model providers a pipeline's LLM steps call, as one concurrency/throttle key: "offline",
 * "openai", "anthropic+openai"; "none" when every step is mechanical (operators, merge).
 */
export function providerKeyOf(spec: Pick<PipelineSpec, "steps">): string {
  const providers = new Set<string>();
  for (const step of spec.steps) {
    const s = step as { type: string; operator?: unknown; model?: string };
    if (!MODEL_STEP_TYPES.has(s.type) || s.operator) continue;
    const model = s.model ?? DEFAULT_MODEL;
    providers.add(model.includes("/") ? model.slice(0, model.indexOf("/")) : model);
  }
  return providers.size ? [...providers].sort().join("+") : "none";
}

interface RunRow {
  id: string;
  workspaceId: string;
  versionId: string;
}

async function markFailed(db: Db, runId: string, message: string) {
  await db.run
    .update({ where: { id: runId }, data: { status: "failed", error: message, finishedAt: new Date() } })
    .catch(() => {});
}

export interface SourceAppended {
  workspaceId: string;
  pipelineId: string;
  branch: string;
}

/** Where runs execute. Both run the same lifecycle (services/runs.ts); only who drives it differs. */
export interface RunExecutor {
  readonly kind: ExecutorKind;
  /** Hands a queued Run row over. Returns without waiting for the run. */
  dispatch(db: Db, run: RunRow): Promise<void>;
  /** Stop a run between batches. */
  cancel(runId: string): Promise<{ sent: boolean }>;
  /** New source records on a branch. */
  sourceAppended(input: SourceAppended): Promise<{ sent: boolean }>;
}

/**
 * This process, fire-and-forget. `execute` is the run lifecycle (services/runs.ts hands in
 * `executeRunRow`, so this module does not import it). Cancelling needs nothing more than the Run
 * row's `cancelRequested` flag, which the lifecycle checks between batches. New source records
 * schedule nothing: the next run (UI, CLI, API) picks them up incrementally.
 */
export function localExecutor(execute: (db: Db, runId: string) => Promise<unknown>): RunExecutor {
  return {
    kind: "local",
    async dispatch(db, run) {
      void trackBackground(execute(db, run.id).catch((err: unknown) => markFailed(db, run.id, err instanceof Error ? err.message : String(err))));
    },
    cancel: async () => ({ sent: false }),
    sourceAppended: async () => ({ sent: false }),
  };
}

/**
 * Inngest: events. `synthex/run.requested` starts the run function (inngest/functions/run.ts),
 * `synthex/run.cancelled` stops it between steps (its `cancelOn`), `synthex/source.appended`
 * starts a debounced incremental run (inngest/functions/incremental.ts). The SDK is loaded lazily:
 * the local path never pulls it in.
 */
export const inngestExecutor: RunExecutor = {
  kind: "inngest",
  async dispatch(db, run) {
    const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
    const { inngest, runRequested } = await import("../../inngest/client");
    try {
      await inngest.send(runRequested.create({ runId: run.id, workspaceId: run.workspaceId, provider: providerKeyOf(storedSpec(version)) }));
    } catch (err) {
      const reason = `Could not hand the run to Inngest: ${err instanceof Error ? err.message : String(err)}`;
      await markFailed(db, run.id, reason);
      throw new Error(reason);
    }
  },
  async cancel(runId) {
    const { inngest, runCancelled } = await import("../../inngest/client");
    await inngest.send(runCancelled.create({ runId }));
    return { sent: true };
  },
  async sourceAppended(input) {
    const { inngest, sourceAppended } = await import("../../inngest/client");
    await inngest.send(sourceAppended.create(input));
    return { sent: true };
  },
};

/**
 * New source records on a branch (an upload, a CLI import, an API push). Inngest executor: a
 * debounced incremental run follows. Local executor: nothing is scheduled.
 */
export async function notifySourceAppended(input: SourceAppended, env: Env = process.env) {
  if (executorKind(env) !== "inngest") return { sent: false };
  return inngestExecutor.sourceAppended(input);
}
