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

  it("a statement the direct path's copy registers is named for the pool Next's copy made", async () => {
    // In `npm start`, Next's bundle opens the database (its copy makes the adapter's options) and the
    // direct /api/v1 path's search registers its reads through tsx's copy.
    const bundle = await import("../store/prepared-statements");
    const direct = await secondCopy(() => import("../store/prepared-statements"));
    expect(direct).not.toBe(bundle);
    const generator = bundle.pgAdapterOptions(false).statementNameGenerator!;
    const sql = direct.prepared(`SELECT 2 AS two /* process-state test: registered by the other copy */`);
    expect(generator({ sql }), "the adapter sends the other copy's registered read unnamed: parsed and planned on every call").toMatch(/^sx_[0-9a-f]{20}$/);
    expect(generator({ sql: `SELECT 3 /* never registered */` })).toBeUndefined();
  });

  it("an index refresh in one copy ends the BM25 statistics another copy cached", async () => {
    const { signUp } = await import("../services/users");
    const { appendSourceRecords, createPipeline } = await import("../services/pipelines");
    const { runPipeline } = await import("../services/runs");
    const { indexPipeline } = await import("../search/indexing");
    const { resolveBranch } = await import("../search/context");
    const reader = await import("../search/term-stats");
    const { workspace } = await signUp(t.db, { email: "stats-copies@example.com", password: "stats-copies-password-1" });
    const spec = new Pipeline("stats").source("notes", { format: "jsonl" }).transform("clean", { from: "notes", operator: { kind: "identity" } }).output("search", { from: "clean", surface: "search" }).toSpec();
    const { pipeline } = await createPipeline(t.db, workspace.id, { name: "stats", spec });
    await appendSourceRecords(t.db, pipeline.id, "notes", [{ externalId: "a", content: "tomato seedlings" }, { externalId: "b", content: "tomato soup" }]);
    expect((await runPipeline(t.db, { workspaceId: workspace.id, pipelineId: pipeline.id })).status).toBe("completed");
    await indexPipeline(t.db, pipeline.id);
    const { branchId } = await resolveBranch(t.db, workspace.id, pipeline.id);
    const df = async (now: number) => (await reader.loadTermStats(t.db, branchId, ["clean"], ["tomato"], now)).get("clean")?.df.get("tomato");
    // The clock is given, so the entry is well within its lifetime however slow the machine.
    const t0 = performance.now();
    expect(await df(t0)).toBe(2);
    await t.db.$executeRawUnsafe(`UPDATE "SearchTermStat" SET df = 5 WHERE "branchId" = $1 AND step = 'clean' AND term = 'tomato'`, branchId);
    expect(await df(t0 + 1), "cached").toBe(2);
    // The other copy's index pass (a run Next's routes started) forgets the branch's statistics.
    const writer = await secondCopy(() => import("../search/term-stats"));
    expect(writer).not.toBe(reader);
    writer.forgetTermStats(branchId, t0 + 2);
    expect(await df(t0 + 3)).toBe(5);
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
  it("a folder set through the route's copy is watched at once by the watchers the instrumentation's copy started", async () => {
    const { mkdtemp, rm, writeFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const { signUp } = await import("../services/users");
    const { createPipeline } = await import("../services/pipelines");
    const { ragBaselineSpec } = await import("../pipeline/templates/rag");
    const { workspace } = await signUp(t.db, { email: "inbox-copies@example.com", password: "inbox-copies-password-1" });
    const { pipeline } = await createPipeline(t.db, workspace.id, { name: "inbox-copies", spec: ragBaselineSpec("folder") });
    const { mkdir, realpath } = await import("node:fs/promises");
    // Inbox folders lie in the workspace's own folder under a root (SYNTHEX_INBOX_ROOTS): a root for this test.
    const root = await realpath(await mkdtemp(path.join(tmpdir(), "synthex-inbox-copies-")));
    const rootsBefore = process.env.SYNTHEX_INBOX_ROOTS;
    process.env.SYNTHEX_INBOX_ROOTS = root;
    const dir = path.join(root, workspace.id, "chats");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // instrumentation.ts starts the watchers in its copy; resyncing only every minute here.
    const instrumentation = await import("../services/source-inbox");
    const watchers = instrumentation.startInboxWatchers(() => t.db, { stableMs: 300, resyncMs: 60_000, owner: "app-server" });
    try {
      const route = await secondCopy(() => import("../services/source-inbox"));
      expect(route).not.toBe(instrumentation);
      await route.setInbox(t.db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: dir });
      const row = await t.db.sourceInbox.findUniqueOrThrow({ where: { pipelineId_source: { pipelineId: pipeline.id, source: "chats" } } });
      expect(row.watcherId, "the setting waits for the next resync (a minute here, 30 s before)").toBe("app-server");
      await writeFile(path.join(dir, "note.md"), "# Note\nwatched from the moment it was set");
      const deadline = Date.now() + 20_000;
      while ((await t.db.sourceImport.count({ where: { pipelineId: pipeline.id } })) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await watchers.idle();
      expect(await t.db.sourceImport.count({ where: { pipelineId: pipeline.id, fileName: "note.md", status: "completed" } })).toBe(1);
    } finally {
      await watchers.stop();
      if (rootsBefore === undefined) delete process.env.SYNTHEX_INBOX_ROOTS;
      else process.env.SYNTHEX_INBOX_ROOTS = rootsBefore;
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);
});
