/**
 * A run whose server died after creating it and before claiming it (a queued row with no lease)
 * is resumed by the recovery sweep once it has waited a lease length, and not before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OfflineModel } from "../llm/offline-model";
import { Pipeline } from "../pipeline/sdk";
import { claimRunLease, renewRunLease } from "../store/run-lease";
import { createTestDb, type TestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { resumeExpiredRuns } from "./run-recovery";
import { createRun } from "./runs";
import { signUp } from "./users";

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(async () => {
  await t?.close();
});

describe("run recovery", () => {
  it("a heartbeat loses its lease only to another owner of the active run, not when the run has just ended", async () => {
    const { workspace } = await signUp(t.db, { email: "heartbeat@example.com", password: "heartbeat-password-1" });
    const spec = new Pipeline("heartbeat", { agent: "t" }).source("notes", { format: "jsonl" }).toSpec();
    const { pipeline } = await createPipeline(t.db, workspace.id, { name: "heartbeat", spec });
    const run = await createRun(t.db, { workspaceId: workspace.id, pipelineId: pipeline.id });
    expect(await claimRunLease(t.db, run.id, "server-1", 60_000)).toBe(true);
    expect(await renewRunLease(t.db, run.id, "server-1", 60_000)).toBe(true);
    // Another server took the active run over after the lease expired: lost.
    await t.db.run.update({ where: { id: run.id }, data: { leaseExpiresAt: new Date(Date.now() - 1000) } });
    expect(await claimRunLease(t.db, run.id, "server-2", 60_000)).toBe(true);
    expect(await renewRunLease(t.db, run.id, "server-1", 60_000)).toBe(false);
    // The run ended (its final write clears the lease) while server-2's heartbeat was in flight: nothing was lost.
    await t.db.run.update({ where: { id: run.id }, data: { status: "completed", leaseOwner: null, leaseExpiresAt: null } });
    expect(await renewRunLease(t.db, run.id, "server-2", 60_000)).toBe(true);
  });

  it("resumes a queued run nobody claimed, once it is older than a lease, exactly once", async () => {
    const { workspace } = await signUp(t.db, { email: "unclaimed@example.com", password: "unclaimed-password-1" });
    const spec = new Pipeline("unclaimed", { agent: "t" })
      .source("notes", { format: "jsonl" })
      .transform("summaries", { from: "notes", prompt: "Summarize: {{ record.content }}" })
      .toSpec();
    const { pipeline } = await createPipeline(t.db, workspace.id, { name: "unclaimed", spec });
    await appendSourceRecords(
      t.db,
      pipeline.id,
      "notes",
      Array.from({ length: 6 }, (_, i) => ({ externalId: `n${i}`, content: `Note ${i}: the budget review moved to Friday ${i}.`, metadata: {} })),
    );
    // The server "died" right after creating the run: queued, no lease.
    const run = await createRun(t.db, { workspaceId: workspace.id, pipelineId: pipeline.id });
    const sweep = () => resumeExpiredRuns(t.db, { model: new OfflineModel(), lease: { owner: "server-2", ttlMs: 60_000 } });

    // Young: its own server may still be about to claim it.
    expect(await sweep()).toEqual([]);

    await t.db.run.update({ where: { id: run.id }, data: { createdAt: new Date(Date.now() - 5 * 60_000) } });
    expect(await sweep()).toEqual([run.id]);
    // Claimed now: a second sweep (another server) leaves it alone.
    expect(await sweep()).toEqual([]);
    await settleBackgroundWork();

    const done = await t.db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(done.status).toBe("completed");
    expect(done.leaseOwner).toBeNull();
    expect(await t.db.record.count({ where: { runId: run.id, step: "summaries" } })).toBe(6);
  });
});
