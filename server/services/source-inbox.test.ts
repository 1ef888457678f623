/**
 * Inbox folders of the app server (Settings → Sources): the server-side watcher started by
 * `startInboxWatchers`, over a real (PGlite) database and the real importers — files dropped,
 * renamed, rewritten and half-written give exactly one import each; a deleted file's records stay;
 * clearing the folder stops the watch. The path is checked before it is stored.
 */
import { appendFile, mkdir, mkdtemp, rename, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { textPdf } from "../importers/testing/media-fixtures";
import { ragBaselineSpec } from "../pipeline/templates/rag";
import { claimInboxWatches } from "../store/inbox-lease";
import { createTestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import { createPipeline } from "./pipelines";
import { listInboxes, setInbox, startInboxWatchers, validateInboxPath } from "./source-inbox";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let dir: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "inbox@example.com", password: "inbox-password-1" }));
  dir = await mkdtemp(path.join(tmpdir(), "synthex-inbox-"));
}, 60_000);
afterAll(async () => {
  await settleBackgroundWork();
  await close?.();
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("inbox folder path", () => {
  it("is absolute, exists, is a directory, and lies inside an allowed root", async () => {
    await writeFile(path.join(dir, "a-file.txt"), "x");
    await expect(validateInboxPath("relative/inbox")).rejects.toThrow(/"relative\/inbox" is not an absolute path/);
    await expect(validateInboxPath(path.join(dir, "missing"))).rejects.toThrow(/does not exist on the server/);
    await expect(validateInboxPath(path.join(dir, "a-file.txt"))).rejects.toThrow(/is a file, not a directory/);
    await expect(validateInboxPath("/etc", { SYNTHEX_INBOX_ROOTS: dir })).rejects.toThrow(/outside the folders this server allows \(SYNTHEX_INBOX_ROOTS/);
    await mkdir(path.join(dir, ".hidden"), { recursive: true });
    await expect(validateInboxPath(path.join(dir, ".hidden"))).rejects.toThrow(/hidden folder/);
    await expect(validateInboxPath("  ")).rejects.toThrow(/give an absolute folder path/);
    expect(await validateInboxPath(`${dir}/`, { SYNTHEX_INBOX_ROOTS: dir })).toBe(await validateInboxPath(dir));
    await unlink(path.join(dir, "a-file.txt"));
  });

  it("names a source of the pipeline, and nothing is stored for a refused path", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "refused", spec: ragBaselineSpec("folder") });
    await expect(setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "nope", path: dir })).rejects.toThrow(/Source "nope" is not in pipeline "refused"/);
    await expect(setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: "inbox" })).rejects.toThrow(/not an absolute path/);
    await expect(setInbox(db, { workspaceId: "other-workspace", pipelineId: pipeline.id, source: "chats", path: dir })).rejects.toThrow(/not found in this workspace/);
    expect(await db.sourceInbox.count({ where: { pipelineId: pipeline.id } })).toBe(0);
  });
});

describe("startInboxWatchers", () => {
  it("imports each new content exactly once: drop, rename, rewrite, half-write, delete; clearing stops the watch", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "inbox", spec: ragBaselineSpec("folder") });
    await writeFile(path.join(dir, "before.md"), "# Before\nwritten before the inbox was set");
    const imports = async () => (await db.sourceImport.findMany({ where: { pipelineId: pipeline.id }, orderBy: { createdAt: "asc" } })).map((i) => i.fileName);
    const watchers = startInboxWatchers(() => db, { stableMs: 400, resyncMs: 60_000 });
    // Nothing should happen: give the watcher time to notice, then let it finish what it started.
    const settle = async () => {
      await sleep(1200);
      await watchers.idle();
    };
    // Something should happen: wait until it has (a loaded machine delays the watcher's events
    // past any fixed sleep), then for the import's own work to end; the assertion says what differs.
    const importsBecome = async (expected: string[]) => {
      const deadline = Date.now() + 30_000;
      while (JSON.stringify(await imports()) !== JSON.stringify(expected) && Date.now() < deadline) await sleep(200);
      await watchers.idle();
      expect(await imports()).toEqual(expected);
    };
    try {
      const set = await setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: dir });
      expect(set).toMatchObject({ changed: true, previous: null });
      await importsBecome(["before.md"]);
      // The import left an audit entry by the system and requested the incremental run (it added records).
      expect(await db.auditEvent.count({ where: { workspaceId, action: "source.import", actor: "system" } })).toBe(1);
      expect(await db.run.count({ where: { pipelineId: pipeline.id, triggeredBy: "ingest" } })).toBe(1);

      await writeFile(path.join(dir, "plan.md"), "# Plan\nrepaint the fence in May");
      await importsBecome(["before.md", "plan.md"]);

      await rename(path.join(dir, "plan.md"), path.join(dir, "plan-2025.md"));
      await settle();
      expect(await imports()).toEqual(["before.md", "plan.md"]);

      await writeFile(path.join(dir, "plan-2025.md"), "# Plan\nrepaint the fence in June");
      await importsBecome(["before.md", "plan.md", "plan-2025.md"]);

      const pdf = Buffer.from(await textPdf(["Minutes", "The committee chose the orange logo."]));
      const half = Math.floor(pdf.length / 2);
      await writeFile(path.join(dir, "minutes.pdf"), pdf.subarray(0, half));
      await sleep(150);
      await appendFile(path.join(dir, "minutes.pdf"), pdf.subarray(half));
      await importsBecome(["before.md", "plan.md", "plan-2025.md", "minutes.pdf"]);
      expect(await db.sourceImport.count({ where: { pipelineId: pipeline.id, status: { not: "completed" } } })).toBe(0);
      expect(await db.record.count({ where: { pipelineId: pipeline.id, step: "chats", content: { contains: "orange logo" } } })).toBe(1);

      // The imports' incremental runs end first: they add derived records on their own time.
      await settleBackgroundWork();
      const before = await db.record.count({ where: { pipelineId: pipeline.id } });
      await unlink(path.join(dir, "minutes.pdf"));
      await settle();
      expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(before);
      const inboxRow = async () => (await listInboxes(db, workspaceId)).find((r) => r.pipelineId === pipeline.id)!;
      for (const deadline = Date.now() + 30_000; !(await inboxRow()).lastEvent?.startsWith("minutes.pdf was deleted") && Date.now() < deadline; ) await sleep(200);
      const row = await inboxRow();
      expect(row).toMatchObject({ source: "chats", path: await validateInboxPath(dir) });
      expect(row.lastEvent).toBe("minutes.pdf was deleted from the folder; its records stay in memory (forget them in the explorer)");

      // Cleared: a file dropped afterwards is not imported.
      expect(await setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: null })).toMatchObject({ changed: true, path: null });
      await writeFile(path.join(dir, "after.md"), "# After\nwritten after the inbox was cleared");
      await settle();
      expect(await imports()).toHaveLength(4);
    } finally {
      await watchers.stop();
    }
  }, 90_000);

  it("two servers on one database: each folder is watched by one of them; a stopped one's folder is taken over without reading it again", async () => {
    const shared = await mkdtemp(path.join(dir, "shared-"));
    const { pipeline } = await createPipeline(db, workspaceId, { name: "inbox-two-servers", spec: ragBaselineSpec("folder") });
    const importsOf = async (fileName: string) => db.sourceImport.findMany({ where: { pipelineId: pipeline.id, fileName } });
    const fast = { stableMs: 300, resyncMs: 250, leaseMs: 2_000 };
    const a = startInboxWatchers(() => db, { ...fast, owner: "server-a" });
    const b = startInboxWatchers(() => db, { ...fast, owner: "server-b" });
    const watcherOf = async () => (await db.sourceInbox.findUniqueOrThrow({ where: { pipelineId_source: { pipelineId: pipeline.id, source: "chats" } } })).watcherId;
    const until = async (what: () => Promise<boolean>, label: string) => {
      const deadline = Date.now() + 30_000;
      while (!(await what()) && Date.now() < deadline) await sleep(100);
      expect(await what(), label).toBe(true);
    };
    try {
      await setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: shared });
      // The last server started set it: its own watchers claimed the folder at once.
      expect(await watcherOf()).toBe("server-b");
      await writeFile(path.join(shared, "one.md"), "# One\nthe first file, dropped while both servers run");
      await until(async () => (await importsOf("one.md")).length > 0, "one.md imported");
      // Both servers resync several times meanwhile; neither imports the file a second time.
      await sleep(1_500);
      await Promise.all([a.idle(), b.idle()]);
      expect((await importsOf("one.md")).map((i) => i.status)).toEqual(["completed"]);

      // The watching server stops: it hands the folder over, and the other one watches it from then on.
      await b.stop();
      await until(async () => (await watcherOf()) === "server-a", "server-a took the folder over");
      await writeFile(path.join(shared, "two.md"), "# Two\nthe second file, dropped after server b stopped");
      await until(async () => (await importsOf("two.md")).length > 0, "two.md imported by server-a");
      await sleep(1_000);
      await a.idle();
      expect(await importsOf("two.md")).toHaveLength(1);
      // Its first scan found one.md, which server b had imported: known by its content, not read again.
      expect(await importsOf("one.md")).toHaveLength(1);
      expect(await db.record.count({ where: { pipelineId: pipeline.id, step: "chats", content: { contains: "the first file" } } })).toBe(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 90_000);

  it("a server that died keeps its folders only until its lease expires; then another server watches them", async () => {
    const orphaned = await mkdtemp(path.join(dir, "orphaned-"));
    const { pipeline } = await createPipeline(db, workspaceId, { name: "inbox-dead-server", spec: ragBaselineSpec("folder") });
    await setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: orphaned });
    const row = await db.sourceInbox.findUniqueOrThrow({ where: { pipelineId_source: { pipelineId: pipeline.id, source: "chats" } } });
    // A server claimed the folder for 5 s, then died: it never renews nor releases the claim.
    expect(await claimInboxWatches(db, [row.id], "dead-server", 5_000)).toEqual(new Set([row.id]));
    const live = startInboxWatchers(() => db, { stableMs: 300, resyncMs: 250, leaseMs: 2_000, owner: "live-server" });
    const watcherOf = async () => (await db.sourceInbox.findUniqueOrThrow({ where: { id: row.id } })).watcherId;
    try {
      await writeFile(path.join(orphaned, "late.md"), "# Late\nwritten while the folder's server was dead");
      await sleep(1_000);
      expect(await watcherOf(), "taken over before the dead server's lease expired").toBe("dead-server");
      const deadline = Date.now() + 30_000;
      while ((await db.sourceImport.count({ where: { pipelineId: pipeline.id, fileName: "late.md" } })) === 0 && Date.now() < deadline) await sleep(200);
      await live.idle();
      expect(await watcherOf()).toBe("live-server");
      expect((await db.sourceImport.findMany({ where: { pipelineId: pipeline.id } })).map((i) => [i.fileName, i.status])).toEqual([["late.md", "completed"]]);
    } finally {
      await live.stop();
    }
  }, 60_000);
});
