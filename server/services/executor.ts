/**
 * Which runner executes a run is configuration, not a code fork:
 *
 * - `SYNTHEX_EXECUTOR=local` (default): the in-process runner, fire-and-forget in this server
 *   process (bounded concurrency, engine retries with backoff).
 * - `SYNTHEX_EXECUTOR=inngest`: send `synthex/run.requested`; the Inngest run function
 *   (inngest/functions/run.ts) executes the same engine in durable, memoized batches.
 *
 * Either way progress, stats, failures and the final status land on the same Run row.
 */
import type { PipelineSpec } from "../pipeline/spec";
import { DEFAULT_MODEL } from "../pipeline/spec";
import type { Db } from "./db-types";
import { trackBackground } from "./background";
import { executeRunRow } from "./runs";

export type ExecutorKind = "local" | "inngest";

/** process.env or a plain object (tests). */
export type Env = Record<string, string | undefined>;

export function executorKind(env: Env = process.env): ExecutorKind {
  const value = (env.SYNTHEX_EXECUTOR ?? "").trim().toLowerCase();
  if (value === "" || value === "local") return "local";
  if (value === "inngest") return "inngest";
  throw new Error(`SYNTHEX_EXECUTOR must be "local" or "inngest" (got "${env.SYNTHEX_EXECUTOR}").`);
}

const MODEL_STEP_TYPES = new Set(["transform", "split", "aggregate", "fold", "consolidate"]);

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

/** Hands a queued Run row to the configured executor. Returns without waiting for the run. */
export async function dispatchRun(db: Db, run: RunRow, env: Env = process.env): Promise<{ executor: ExecutorKind }> {
  const kind = executorKind(env);
  if (kind === "local") {
    void trackBackground(executeRunRow(db, run.id).catch((err: unknown) => markFailed(db, run.id, err instanceof Error ? err.message : String(err))));
    return { executor: kind };
  }
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
  // Loaded lazily: the local path never pulls in the Inngest SDK.
  const { inngest, runRequested } = await import("../../inngest/client");
  try {
    await inngest.send(runRequested.create({ runId: run.id, workspaceId: run.workspaceId, provider: providerKeyOf(version.spec as unknown as PipelineSpec) }));
  } catch (err) {
    const reason = `Could not hand the run to Inngest: ${err instanceof Error ? err.message : String(err)}`;
    await markFailed(db, run.id, reason);
    throw new Error(reason);
  }
  return { executor: kind };
}

/**
 * Inngest executor: stop the run function between batches (its `cancelOn`). The in-process
 * runner needs nothing more than the Run row's `cancelRequested` flag, which it polls.
 */
export async function requestRunCancellation(runId: string, env: Env = process.env) {
  if (executorKind(env) !== "inngest") return { sent: false };
  const { inngest, runCancelled } = await import("../../inngest/client");
  await inngest.send(runCancelled.create({ runId }));
  return { sent: true };
}

/**
 * New source records on a branch. Inngest executor: a debounced incremental run follows
 * (inngest/functions/incremental.ts). Local executor: nothing is scheduled; the next run
 * (UI, CLI, API) picks the records up incrementally.
 */
export async function notifySourceAppended(input: { workspaceId: string; pipelineId: string; branch: string }, env: Env = process.env) {
  if (executorKind(env) !== "inngest") return { sent: false };
  const { inngest, sourceAppended } = await import("../../inngest/client");
  await inngest.send(sourceAppended.create(input));
  return { sent: true };
}
