/**
 * Per-process state across module copies (server/core/process-state.ts). `npm start` loads the
 * server's modules twice in one process (Next's bundle, and tsx's for the direct /api/v1 path);
 * here `vi.resetModules()` gives a second, freshly evaluated copy of the same files, as there.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OfflineModel } from "../llm/offline-model";
import type { ModelRequest, ModelResponse } from "../engine/model";
import { Pipeline } from "../pipeline/sdk";
import { createTestDb, type TestDb } from "../store/test-db";

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(async () => {
  await t?.close();
});

/** A fresh copy of a module (and of every module of ours it imports), beside the ones already loaded. */
async function secondCopy<M>(load: () => Promise<M>): Promise<M> {
  vi.resetModules();
  return load();
}

describe("process state across module copies", () => {
  it("gives every copy of a module the same value, made once", async () => {
    const a = await import("./process-state");
    const b = await secondCopy(() => import("./process-state"));
    expect(b).not.toBe(a);
    let made = 0;
    const one = a.processState("test.shared", () => ({ n: ++made }));
    const two = b.processState("test.shared", () => ({ n: ++made }));
    expect(two).toBe(one);
    expect(made).toBe(1);
  });

  it("a change one copy clears the request caches for ends what another copy cached", async () => {
    const { signUp } = await import("../services/users");
    const { workspace } = await signUp(t.db, { email: "copies@example.com", password: "copies-password-1" });
    const a = await import("../services/request-context");
    const b = await secondCopy(() => import("../services/request-context"));
    expect((await a.workspaceAndRole(t.db, workspace.id, null)).workspace?.name).toBe(workspace.name);
    await t.db.workspace.update({ where: { id: workspace.id }, data: { name: "Renamed through the other copy" } });
    // Still the cached row (the lifetime is 1 s) until a change made in this process clears it…
    expect((await a.workspaceAndRole(t.db, workspace.id, null)).workspace?.name, "cached for 1 s (a machine too slow to read twice within it)").toBe(workspace.name);
    // …here by the other copy (Next's routes made the change, the direct path reads).
    b.clearRequestCaches();
    expect((await a.workspaceAndRole(t.db, workspace.id, null)).workspace?.name).toBe("Renamed through the other copy");
  });

  it("run recovery in one copy does not resume a run another copy is executing, its heartbeat late", async () => {
    const { signUp } = await import("../services/users");
    const { appendSourceRecords, createPipeline } = await import("../services/pipelines");
    const runsA = await import("../services/runs");
    const recoveryB = await secondCopy(() => import("../services/run-recovery"));
    const { workspace } = await signUp(t.db, { email: "run-copies@example.com", password: "run-copies-password-1" });
    const spec = new Pipeline("copies", { agent: "t" })
      .source("notes", { format: "jsonl" })
      .transform("summaries", { from: "notes", prompt: "Summarize: {{ record.content }}" })
      .toSpec();
    const { pipeline } = await createPipeline(t.db, workspace.id, { name: "copies", spec });
    await appendSourceRecords(t.db, pipeline.id, "notes", [{ externalId: "n1", content: "The budget review moved to Friday.", metadata: {} }]);

    // The model holds the run mid-step until released (a fake LLM).
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inStep = new Promise<void>((resolve) => (entered = resolve));
    class HeldModel extends OfflineModel {
      override async complete(request: ModelRequest): Promise<ModelResponse> {
        entered();
        await held;
        return super.complete(request);
      }
    }
    const run = await runsA.createRun(t.db, { workspaceId: workspace.id, pipelineId: pipeline.id });
    const executing = runsA.executeRunRow(t.db, run.id, { model: new HeldModel(), lease: { owner: "copy-a", ttlMs: 60_000 } });
    await inStep;
    // Its heartbeat is late: the lease looks expired to a sweep.
    await t.db.run.update({ where: { id: run.id }, data: { leaseExpiresAt: new Date(Date.now() - 1000) } });
    const resumed = await recoveryB.resumeExpiredRuns(t.db, { model: new OfflineModel(), lease: { owner: "copy-b", ttlMs: 60_000 } });
    release();
    await executing;
    expect(resumed, "the sweep of the other module copy resumed a run this process is executing").toEqual([]);
    const done = await t.db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(done.status).toBe("completed");
    expect(await t.db.record.count({ where: { runId: run.id, step: "summaries" } })).toBe(1);
  });
});
