/**
 * No eval run stays "running" forever and none is shown as finished when it is not: an eval
 * whose process died is ended by the recovery sweep once its lease expires (failed, or cancelled
 * when a cancel was asked for), with the reason; an eval cancelled halfway ends cancelled with
 * nothing stored; a process that lost its eval to the sweep cannot complete it afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import type { ModelProvider, ModelRequest } from "../engine/model";
import { OfflineModel } from "../llm/offline-model";
import { endStalledEvalRuns } from "../services/run-recovery";
import { claimEvalLease, renewRunLease, writeEvalProgress } from "../store/run-lease";
import { listEvalRuns } from "./run-reads";
import { createEvalRun, executeEvalRun } from "./service";
import { evalWorkspace, type EvalWorkspace } from "./testing/eval-workspace";

/** The offline model, slowed down: an eval that is busy for longer than its lease. */
class SlowModel implements ModelProvider {
  private readonly inner = new OfflineModel();
  constructor(private readonly delayMs: number) {}
  async complete(request: ModelRequest) {
    await new Promise((r) => setTimeout(r, this.delayMs));
    return this.inner.complete(request);
  }
}

/** The offline model, holding every call until `open()`: the build lasts as long as the test needs. */
class GatedModel implements ModelProvider {
  private readonly inner = new OfflineModel();
  private opened!: () => void;
  private readonly gate = new Promise<void>((r) => (this.opened = r));
  open() {
    this.opened();
  }
  async complete(request: ModelRequest) {
    await this.gate;
    return this.inner.complete(request);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let w: EvalWorkspace;
let db: Db;
let workspaceId: string;
let datasetId: string;

beforeAll(async () => {
  w = await evalWorkspace("eval-recovery@example.com");
  ({ db, workspaceId, datasetId } = w);
}, 180_000);
afterAll(() => w?.close());

async function statusOf(id: string) {
  return (await db.evalRun.findUniqueOrThrow({ where: { id } })).status;
}

describe("eval recovery", () => {
  it("keeps a live eval's lease alive with heartbeats: a sweep during a long build leaves it running", async () => {
    const run = await createEvalRun(db, { workspaceId, template: "chat-memory", datasetId });
    // The build waits on the model until the checks are done: a fast machine cannot finish it first.
    const model = new GatedModel();
    const done = executeEvalRun(db, run.id, { model, lease: { owner: "live-server", ttlMs: 600 } });
    while ((await statusOf(run.id)) === "queued") await sleep(20);
    await sleep(1500); // well past one lease length: only heartbeats keep it
    expect(await statusOf(run.id)).toBe("running");
    expect(await endStalledEvalRuns(db, 600)).toEqual([]);
    model.open();
    const ended = await done;
    expect(ended.status).toBe("completed");
    expect(ended.leaseOwner).toBeNull();
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(9); // every loaded question, the adversarial one too
  }, 180_000);

  it("ends an eval whose process died, once its lease expired, as failed with the reason shown in the runs list", async () => {
    const run = await createEvalRun(db, { workspaceId, template: "bm25-sessions", datasetId });
    // A server claimed it and died: no heartbeats after this one.
    expect(await claimEvalLease(db, run.id, "dead-server", 500)).toBe(true);
    expect(await statusOf(run.id)).toBe("running");
    expect(await endStalledEvalRuns(db, 60_000)).toEqual([]); // its lease still holds
    await sleep(800);
    expect(await endStalledEvalRuns(db, 60_000)).toEqual([{ id: run.id, status: "failed" }]);
    const listed = (await listEvalRuns(db, workspaceId)).find((r) => r.id === run.id)!;
    expect(listed.status).toBe("failed");
    expect(listed.error).toMatch(/^The process running this eval stopped \(no heartbeat since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC.*no results were stored\. Run it again\.$/);
    expect(listed.finishedAt).not.toBeNull();
    expect(listed.metrics).toEqual({});
    // Ended once: a second sweep (another server) finds nothing.
    expect(await endStalledEvalRuns(db, 60_000)).toEqual([]);
    // The dead server cannot take it back.
    expect(await claimEvalLease(db, run.id, "dead-server", 500)).toBe(false);
  }, 60_000);

  it("a killed eval says 'no heartbeat since' its last heartbeat, not its lease's expiry (issue #48 item 7)", async () => {
    const run = await createEvalRun(db, { workspaceId, template: "bm25-sessions", datasetId });
    expect(await claimEvalLease(db, run.id, "killed-server", 2500)).toBe(true);
    await sleep(1200);
    // One more heartbeat, then the process dies.
    expect(await renewRunLease(db, run.id, "killed-server", 2500, "EvalRun")).toBe(true);
    const beat = await db.evalRun.findUniqueOrThrow({ where: { id: run.id } });
    const heartbeatAt = (beat.progress as { heartbeatAt?: string }).heartbeatAt!;
    expect(heartbeatAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    const expiry = beat.leaseExpiresAt!.toISOString().slice(0, 19).replace("T", " ");
    expect(expiry).not.toBe(heartbeatAt.slice(0, 19)); // 2.5 s apart
    // Progress written by the phase keeps the heartbeat time.
    await writeEvalProgress(db, run.id, "killed-server", { phase: "build", done: 1, total: 9 });
    expect((await db.evalRun.findUniqueOrThrow({ where: { id: run.id } })).progress).toEqual({ phase: "build", done: 1, total: 9, heartbeatAt });
    await sleep(2700);
    expect(await endStalledEvalRuns(db, 60_000)).toEqual([{ id: run.id, status: "failed" }]);
    const ended = await db.evalRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(ended.error).toContain(`(no heartbeat since ${heartbeatAt.slice(0, 19)} UTC,`);
    expect(ended.error).not.toContain(expiry);
  }, 60_000);

  it("ends a dead eval that was asked to cancel as cancelled, and a queued eval nobody started as failed", async () => {
    const cancelled = await createEvalRun(db, { workspaceId, template: "bm25-sessions", datasetId });
    await claimEvalLease(db, cancelled.id, "dead-server", 500);
    const api = await w.caller();
    expect(await api.evals.cancel({ workspaceId, id: cancelled.id })).toEqual({ id: cancelled.id, status: "cancelling" });
    await sleep(800);
    expect(await endStalledEvalRuns(db, 60_000)).toEqual([{ id: cancelled.id, status: "cancelled" }]);
    expect((await db.evalRun.findUniqueOrThrow({ where: { id: cancelled.id } })).error).toBe("Cancelled before it finished: no results were stored.");

    const orphan = await createEvalRun(db, { workspaceId, template: "bm25-windows", datasetId });
    expect(await endStalledEvalRuns(db, 60_000)).toEqual([]); // young: its server may be about to start it
    await db.evalRun.update({ where: { id: orphan.id }, data: { createdAt: new Date(Date.now() - 5 * 60_000) } });
    expect(await endStalledEvalRuns(db, 60_000)).toEqual([{ id: orphan.id, status: "failed" }]);
    expect((await db.evalRun.findUniqueOrThrow({ where: { id: orphan.id } })).error).toMatch(/stopped before starting it: nothing was run/);
  }, 60_000);

  it("cancelled halfway through the questions (over tRPC): ends cancelled, nothing stored, never completed", async () => {
    const api = await w.caller();
    // Answering with a slow model keeps the eval busy on each question while the cancel lands.
    const run = await createEvalRun(db, { workspaceId, template: "bm25-windows", datasetId, answerModel: "offline/answers" });
    let cancel: Promise<unknown> | null = null;
    const ended = await executeEvalRun(db, run.id, {
      model: new SlowModel(100),
      onProgress: (p) => {
        if (p.phase === "search" && p.done === 4 && !cancel) cancel = api.evals.cancel({ workspaceId, id: run.id });
      },
    });
    expect(await cancel).toEqual({ id: run.id, status: "cancelling" });
    expect(ended.status).toBe("cancelled");
    expect(ended.error).toBe("Cancelled before it finished: no results were stored.");
    expect(ended.metrics).toEqual({});
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(0);
    await expect(api.evals.cancel({ workspaceId, id: run.id })).rejects.toThrow(/not in progress: it is cancelled/);
  }, 60_000);

  it("cancelled before it started: ends cancelled at once, and executing it afterwards runs nothing", async () => {
    const api = await w.caller();
    const run = await createEvalRun(db, { workspaceId, template: "bm25-windows", datasetId });
    expect(await api.evals.cancel({ workspaceId, id: run.id })).toEqual({ id: run.id, status: "cancelled" });
    const after = await executeEvalRun(db, run.id);
    expect(after.status).toBe("cancelled");
    expect(after.startedAt).toBeNull();
    expect(after.error).toMatch(/before it started/);
  }, 60_000);

  it("a process that lost its eval to the sweep cannot complete it: no partial run shown as finished", async () => {
    const run = await createEvalRun(db, { workspaceId, template: "bm25-windows", datasetId, answerModel: "offline/answers" });
    let swept: Promise<unknown> | null = null;
    const ended = await executeEvalRun(db, run.id, {
      model: new SlowModel(100),
      onProgress: (p) => {
        // Mid-search the lease is made to look expired (as after a long database stall) and a sweep runs.
        if (p.phase === "search" && p.done === 2 && !swept) {
          swept = db.evalRun.update({ where: { id: run.id }, data: { leaseExpiresAt: new Date(Date.now() - 60_000) } }).then(() => endStalledEvalRuns(db, 60_000));
        }
      },
    });
    expect(await swept).toEqual([{ id: run.id, status: "failed" }]);
    expect(ended.status).toBe("failed");
    expect(ended.error).toMatch(/The process running this eval stopped/);
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(0);
  }, 60_000);
});
