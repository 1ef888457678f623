/**
 * The run function: executes one queued Run row durably with the run lifecycle of
 * server/services/runs.ts (the same one the in-process executor runs): `step.run("plan")`
 * starts it, one memoized `step.run` per batch of each step (`step:<name>:<n>`) executes it, and
 * `step.run("finish")` ends it (status, stats, then embeddings, projections and webhooks).
 *
 * Every batch is idempotent: the engine computes only work items that have no record yet, so
 * re-executing a batch whose result Inngest lost makes no model calls. Failures carry a kind:
 * a permanent one ends the run without retries (NonRetriableError), a transient one fails the
 * batch so Inngest retries it with backoff.
 */
import { NonRetriableError } from "inngest";
import type { ModelProvider } from "../../server/engine/model";
import type { StepProgress, StepStats } from "../../server/engine/runner";
import type { Db } from "../../server/core/db";
import { beginRun, finishRun, markRunFailed, queuedStats, retireRunStep, RunError, runBatch, type BatchResult } from "../../server/services/runs";
import { inngest as defaultClient } from "../client";
import { runCancelled, runRequested } from "../events";
import { flowControl, PROVIDER_KEY, RUN_FUNCTION_ID, WORKSPACE_KEY } from "../flow-control";

export interface RunFunctionDeps {
  /** The database holding the Run rows and records (the app's `getDb`, or a test database). */
  getDb: () => Promise<Db> | Db;
  /** The model provider for a run. */
  getModel: (run: { id: string; workspaceId: string; pipelineId: string }, db: Db) => Promise<ModelProvider> | ModelProvider;
  /** Work items per memoized batch (default: the run's request, else SYNTHEX_INNGEST_BATCH_SIZE). */
  batchSize?: number;
}

export interface CreateRunFunctionOptions extends RunFunctionDeps {
  client?: typeof defaultClient;
}

/** Guard against a runaway loop of batches (100k batches of `batchSize` work items). */
const MAX_BATCHES = 100_000;

/** A permanent failure is not retried: Inngest's NonRetriableError. */
async function durably<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof RunError && err.kind === "permanent") throw new NonRetriableError(err.message);
    throw err;
  }
}

export function createRunFunction({ client = defaultClient, ...deps }: CreateRunFunctionOptions) {
  return client.createFunction(
    {
      id: RUN_FUNCTION_ID,
      name: "Synthex: run a pipeline",
      triggers: [{ event: runRequested }],
      // A second run.requested for the same run (double click, retried send) starts nothing.
      idempotency: "event.data.runId",
      concurrency: [
        { key: WORKSPACE_KEY, limit: flowControl.workspaceConcurrency },
        { key: PROVIDER_KEY, limit: flowControl.providerConcurrency, scope: "env" },
      ],
      throttle: { key: PROVIDER_KEY, ...flowControl.providerThrottle },
      retries: flowControl.retries,
      cancelOn: [{ event: runCancelled.name, if: "async.data.runId == event.data.runId" }],
      onFailure: async ({ event, error }) => {
        const original = (event.data as { event?: { data?: { runId?: string } } }).event;
        const runId = original?.data?.runId;
        if (!runId) return { marked: false };
        await markRunFailed(await deps.getDb(), runId, error.message || "The run failed.");
        return { marked: true, runId };
      },
    },
    async ({ event, step, attempt, maxAttempts }) => {
      const { runId } = event.data;
      const finalAttempt = attempt + 1 >= (maxAttempts ?? flowControl.retries + 1);
      const plan = await step.run("plan", () =>
        durably(async () => {
          // Retrying transient errors is Inngest's job (step retries with backoff), not the engine's.
          const begun = await beginRun(await deps.getDb(), runId, { maxAttempts: 1, ...(deps.batchSize ? { batchSize: deps.batchSize } : {}) });
          return begun.state === "ready" ? { ...begun, options: { batchSize: flowControl.batchSize, ...begun.options } } : begun;
        }),
      );
      if (plan.state !== "ready") return { runId, status: plan.state === "finished" ? plan.status : "cancelled" };
      const order = plan.steps.map((s) => s.name);
      let totals: Record<string, StepStats> = queuedStats(plan.steps);
      for (const s of plan.steps) {
        if (plan.full) await step.run(`retire:${s.name}`, async () => retireRunStep(await deps.getDb(), runId, s.name));
        let progress: StepProgress | null = null;
        for (let batch = 0; batch < MAX_BATCHES; batch++) {
          const input = { runId, step: s.name, progress, totals, order, options: plan.options };
          const out = (await step.run(`step:${s.name}:${batch}`, () =>
            durably(async (): Promise<BatchResult> => {
              const db = await deps.getDb();
              return runBatch(db, input, { model: (run) => deps.getModel(run, db), transient: "executor", finalAttempt });
            }),
          )) as BatchResult;
          totals = out.totals;
          if (out.outcome === "cancelled") return { runId, status: "cancelled", stoppedAt: s.name };
          progress = out.progress;
          if (progress.finished) break;
        }
      }
      return step.run("finish", async () => {
        // Awaited here: a serverless worker may stop once the step returns.
        const run = await finishRun(await deps.getDb(), runId, { order, totals }, { deliver: "await" });
        const steps = order.map((name) => totals[name]).filter((x): x is StepStats => Boolean(x));
        return { runId, status: run.status, steps: steps.map((x) => ({ step: x.step, input: x.input, output: x.output, errors: x.errors })) };
      });
    },
  );
}
