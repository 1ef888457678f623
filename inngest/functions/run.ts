/**
 * The run function: executes one queued Run row durably. Thin: the work is in ../run-steps.ts,
 * which calls the same engine as the in-process runner.
 */
import type { StepStats } from "../../server/engine/runner";
import { inngest as defaultClient } from "../client";
import { runCancelled, runRequested } from "../events";
import { flowControl, PROVIDER_KEY, RUN_FUNCTION_ID, WORKSPACE_KEY } from "../flow-control";
import { executeBatch, finishRun, markRunFailed, mergeStats, planStep, retireStep, type BatchInput, type BatchResult, type RunFunctionDeps } from "../run-steps";

export interface CreateRunFunctionOptions extends RunFunctionDeps {
  client?: typeof defaultClient;
}

/** Guard against a runaway loop of batches (100k batches of `batchSize` records). */
const MAX_BATCHES = 100_000;

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
      const plan = await step.run("plan", () => planStep(deps, runId));
      if (plan.state !== "ready") return { runId, status: plan.state === "finished" ? plan.status : "cancelled" };
      const order = plan.steps.map((s) => s.name);
      let totals: Record<string, StepStats> = {};
      for (const s of plan.steps) {
        if (plan.full) await step.run(`retire:${s.name}`, () => retireStep(deps, runId, s.name));
        let afterId: string | null = null;
        for (let batch = 0; batch < MAX_BATCHES; batch++) {
          const input: BatchInput = { runId, step: s.name, afterId, batched: s.batched, batchSize: plan.batchSize, totals, order, finalAttempt, runOptions: plan.runOptions };
          const out = (await step.run(`step:${s.name}:${batch}`, (): Promise<BatchResult> => executeBatch(deps, input))) as BatchResult;
          if (out.outcome === "cancelled") return { runId, status: "cancelled", stoppedAt: s.name };
          totals = mergeStats(totals, out.stats);
          if (!s.batched || out.pageSize < plan.batchSize) break;
          afterId = out.lastId;
        }
      }
      return step.run("finish", () => finishRun(deps, runId, order, totals));
    },
  );
}

