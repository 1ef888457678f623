/**
 * The eval function: executes one queued EvalRun row durably when the executor is Inngest, with
 * the eval phases of server/eval/service.ts (the same ones the in-process path runs):
 * `step.run("build")` builds the eval's memory (the eval copy's sources and an incremental
 * pipeline run), `step.run("score")` searches and scores every question and stores the results
 * with the final status, in one transaction.
 *
 * Each step is memoized: a retry after the memory was built goes straight to scoring, and
 * building again computes nothing (records are content-addressed). A failing step is retried by
 * Inngest; when the retries are spent, onFailure ends the run `failed` with the reason. A cancel
 * (the eval's `cancelRequested` flag, checked inside each step) ends it `cancelled`.
 */
import type { ModelProvider } from "../../server/engine/model";
import type { Db } from "../../server/core/db";
import { buildEvalPhase, endEvalRun, scoreEvalPhase } from "../../server/eval/service";
import { inngest as defaultClient } from "../client";
import { evalRequested } from "../events";
import { EVAL_FUNCTION_ID, flowControl, WORKSPACE_KEY } from "../flow-control";

export interface EvalFunctionDeps {
  getDb: () => Promise<Db> | Db;
  /** The model provider an eval builds its memory (and answers and judges) with. */
  getModel: (run: { workspaceId: string }, db: Db) => Promise<ModelProvider> | ModelProvider;
  client?: typeof defaultClient;
}

/** The lease owner of an eval executed by Inngest: the same in every retry of its steps. */
const ownerOf = (evalRunId: string) => `inngest:${evalRunId}`;

/**
 * Inngest's onFailure (its `inngest/function.failed` event, carrying the original event): the
 * retries are spent, so the eval ends `failed` with the last error — never left "running".
 */
export function evalFailureHandler(getDb: EvalFunctionDeps["getDb"]) {
  return async ({ event, error }: { event: { data: unknown }; error: { message?: string } }) => {
    const original = (event.data as { event?: { data?: { evalRunId?: string } } }).event;
    const evalRunId = original?.data?.evalRunId;
    if (!evalRunId) return { marked: false };
    const ended = await endEvalRun(await getDb(), evalRunId, null, "failed", error.message || "The eval failed.");
    return { marked: true, evalRunId, status: ended.status };
  };
}

export function createEvalFunction({ client = defaultClient, ...deps }: EvalFunctionDeps) {
  return client.createFunction(
    {
      id: EVAL_FUNCTION_ID,
      name: "Synthex: run an eval",
      triggers: [{ event: evalRequested }],
      // A second eval.requested for the same eval starts nothing.
      idempotency: "event.data.evalRunId",
      concurrency: [{ key: WORKSPACE_KEY, limit: flowControl.workspaceConcurrency }],
      retries: flowControl.retries,
      onFailure: evalFailureHandler(deps.getDb),
    },
    async ({ event, step }) => {
      const { evalRunId, workspaceId } = event.data;
      const phase = async () => {
        const db = await deps.getDb();
        return { db, deps: { model: await deps.getModel({ workspaceId }, db), lease: { owner: ownerOf(evalRunId) }, rethrow: true } };
      };
      const built = await step.run("build", async () => {
        const { db, deps: d } = await phase();
        const out = await buildEvalPhase(db, evalRunId, d);
        return "ended" in out ? { ended: true as const, status: out.ended.status } : { ended: false as const, built: out.value };
      });
      if (built.ended) return { evalRunId, status: built.status };
      return step.run("score", async () => {
        const { db, deps: d } = await phase();
        const run = await scoreEvalPhase(db, evalRunId, built.built, d);
        return { evalRunId, status: run.status, questions: run.questions };
      });
    },
  );
}
