/**
 * Evals on the Inngest executor: the eval function executed by @inngest/test against a test
 * database — the same scores as the in-process path, two memoized steps (a retry after the build
 * does not build again), a database that fails mid-eval leaves the run to Inngest's retry (then
 * onFailure ends it failed), a cancel between the steps ends it cancelled; and `evals.start` sends
 * `synthex/eval.requested` when SYNTHEX_EXECUTOR=inngest.
 */
import { InngestTestEngine } from "@inngest/test";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Db } from "../server/core/db";
import type { ModelProvider, ModelRequest } from "../server/engine/model";
import { OfflineModel } from "../server/llm/offline-model";
import { cancelEvalRun, createEvalRun, runEval } from "../server/eval/service";
import { evalWorkspace, type EvalWorkspace } from "../server/eval/testing/eval-workspace";
import { inngest } from "./client";
import { createEvalFunction, evalFailureHandler } from "./functions/eval";

class CountingModel implements ModelProvider {
  calls = 0;
  private readonly inner = new OfflineModel();
  complete(request: ModelRequest) {
    this.calls++;
    return this.inner.complete(request);
  }
}

let w: EvalWorkspace;
let db: Db;
let workspaceId: string;
let datasetId: string;

beforeAll(async () => {
  w = await evalWorkspace("inngest-evals@example.com");
  ({ db, workspaceId, datasetId } = w);
}, 180_000);
afterAll(() => w?.close());
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const requested = (evalRunId: string) => ({ name: "synthex/eval.requested", data: { evalRunId, workspaceId } }) as const;
const stepIds = (ctx: unknown) => (ctx as { step: { run: { mock: { calls: unknown[][] } } } }).step.run.mock.calls.map((c) => c[0] as string);

/** Inngest's memoized state after an execution, as mocked steps for the next one (what a retry sees). */
async function memoized(state: Record<string, Promise<unknown>>) {
  const steps = [];
  for (const [id, promise] of Object.entries(state)) {
    try {
      const data = await promise;
      steps.push({ id, idIsHashed: true, handler: () => data });
    } catch {
      // a failed step is not memoized: the retry executes it again
    }
  }
  return steps;
}

describe("eval function", () => {
  it("scores an eval in two memoized steps (build, score) to the same results as the in-process path", async () => {
    const local = await runEval(db, { workspaceId, template: "bm25-windows", datasetId });
    expect(local.status).toBe("completed");
    const run = await createEvalRun(db, { workspaceId, template: "bm25-windows", datasetId });
    const fn = createEvalFunction({ getDb: () => db, getModel: () => new OfflineModel() });
    const { result, error, ctx } = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(error).toBeUndefined();
    expect(result).toEqual({ evalRunId: run.id, status: "completed", questions: 8 });
    expect(stepIds(ctx)).toEqual(["build", "score"]);
    const row = await db.evalRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(row).toMatchObject({ status: "completed", leaseOwner: null, leaseExpiresAt: null });
    expect(row.metrics).toEqual(local.metrics);
    expect(row.perCategory).toEqual(local.perCategory);
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(await db.evalCase.count({ where: { evalRunId: local.id } }));
  }, 120_000);

  it("a database failure while scoring leaves the run to Inngest's retry, which scores without building again; onFailure ends a run whose retries are spent", async () => {
    const model = new CountingModel();
    const run = await createEvalRun(db, { workspaceId, template: "chat-memory", datasetId });
    let dbCalls = 0;
    const flaky = () => {
      dbCalls++;
      if (dbCalls === 2) throw new Error("Connection terminated due to connection timeout");
      return db;
    };
    const fn = createEvalFunction({ getDb: flaky, getModel: () => model });
    const first = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(String((first.error as Error | undefined)?.message ?? first.error)).toMatch(/connection timeout/);
    expect(model.calls).toBeGreaterThan(0); // the build step built the eval copy
    // Not failed, not completed: still running, for the retry.
    expect(await db.evalRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({ status: "running", leaseOwner: `inngest:${run.id}` });
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(0);

    const calls = model.calls;
    const retry = await new InngestTestEngine({ function: fn, events: [requested(run.id)], steps: await memoized(first.state) }).execute();
    expect(retry.error).toBeUndefined();
    expect(retry.result).toMatchObject({ evalRunId: run.id, status: "completed" });
    expect(model.calls).toBe(calls); // the memoized build is not executed again
    expect(await db.run.count({ where: { triggeredBy: `eval:${run.id}` } })).toBe(1);
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(9);

    // Retries spent on another eval: onFailure ends it failed with the reason.
    const doomed = await createEvalRun(db, { workspaceId, template: "bm25-sessions", datasetId });
    await db.evalRun.update({ where: { id: doomed.id }, data: { status: "running", leaseOwner: `inngest:${doomed.id}` } });
    // (@inngest/test cannot reach an onFailure handler: it is called as Inngest calls it.)
    const error = new Error("Connection terminated due to connection timeout");
    const failure = { name: "inngest/function.failed", data: { event: requested(doomed.id), error: { name: "Error", message: error.message }, function_id: "synthex-eval", run_id: "r1" } };
    expect(await evalFailureHandler(() => db)({ event: failure, error })).toEqual({ marked: true, evalRunId: doomed.id, status: "failed" });
    expect(await db.evalRun.findUniqueOrThrow({ where: { id: doomed.id } })).toMatchObject({ status: "failed", error: "Connection terminated due to connection timeout", leaseOwner: null });
  }, 180_000);

  it("a cancel between the steps ends the eval cancelled at the score step, with nothing stored", async () => {
    const run = await createEvalRun(db, { workspaceId, template: "rag-baseline", datasetId });
    let dbCalls = 0;
    // The UI's cancel lands after the build step, as the score step starts.
    const getDb = async () => {
      if (++dbCalls === 2) expect(await cancelEvalRun(db, workspaceId, run.id)).toEqual({ id: run.id, status: "cancelling" });
      return db;
    };
    const fn = createEvalFunction({ getDb, getModel: () => new OfflineModel() });
    const { result, error } = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ evalRunId: run.id, status: "cancelled" });
    expect(await db.evalRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({ status: "cancelled", error: "Cancelled before it finished: no results were stored." });
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(0);
    // A second eval.requested for it (a retried send) starts nothing.
    const again = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(again.result).toEqual({ evalRunId: run.id, status: "cancelled" });
  }, 180_000);

  it("evals.start hands the eval to Inngest when SYNTHEX_EXECUTOR=inngest (the in-process path stays the default)", async () => {
    vi.stubEnv("SYNTHEX_EXECUTOR", "inngest");
    const send = vi.spyOn(inngest, "send").mockResolvedValue({ ids: ["evt-eval"] } as never);
    const api = await w.caller();
    const run = await api.evals.start({ workspaceId, template: "bm25-sessions", datasetId, branch: "main" });
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0]).toMatchObject({ name: "synthex/eval.requested", data: { evalRunId: run.id, workspaceId } });
    expect((await db.evalRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");
    await cancelEvalRun(db, workspaceId, run.id);

    send.mockRejectedValue(new Error("connect ECONNREFUSED 127.0.0.1:8288"));
    await expect(api.evals.start({ workspaceId, template: "bm25-sessions", datasetId, branch: "main" })).rejects.toThrow(/Could not hand the eval to Inngest: connect ECONNREFUSED/);
    const failed = await db.evalRun.findFirstOrThrow({ where: { workspaceId, template: "bm25-sessions" }, orderBy: { createdAt: "desc" } });
    expect(failed).toMatchObject({ status: "failed", error: "Could not hand the eval to Inngest: connect ECONNREFUSED 127.0.0.1:8288" });
  }, 60_000);
});
