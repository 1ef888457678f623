/**
 * Inbox folders of the app server (Settings → Sources): the server-side watcher started by
 * `startInboxWatchers`, over a real (PGlite) database and the real importers — files dropped,
 * renamed, rewritten and half-written give exactly one import each; a deleted file's records stay;
 * clearing the folder stops the watch. The path is checked before it is stored: inbox folders are
 * off without SYNTHEX_INBOX_ROOTS, and an inbox lies inside its own workspace's folder under a root;
 * symlinks are never followed; errors say nothing about the disk beyond the path given.
 *
 * The security tests use only what the code before the fix also had (setInbox, listInboxes,
 * startInboxWatchers, process.env), so each of them fails there.
 */
import { appendFile, mkdir, mkdtemp, realpath, rename, rm, stat, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { textPdf } from "../importers/testing/media-fixtures";
import { ragBaselineSpec } from "../pipeline/templates/rag";
import { claimInboxWatches } from "../store/inbox-lease";
import { createTestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import * as inbox from "./source-inbox";
import { createPipeline } from "./pipelines";
import { listInboxes, setInbox, startInboxWatchers } from "./source-inbox";
import { signUp } from "./users";
import * as watching from "./watch-folder";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let otherWorkspaceId: string;
/** The inbox root (SYNTHEX_INBOX_ROOTS of this test), its real path. */
let root: string;
/** Workspace A's folder under the root (where its inboxes lie), and workspace B's. */
let dir: string;
let otherDir: string;
/** A folder outside every root, with a secret file. */
let outside: string;
const rootsBefore = process.env.SYNTHEX_INBOX_ROOTS;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "inbox@example.com", password: "inbox-password-1" }));
  ({ workspace: { id: otherWorkspaceId } } = await signUp(db, { email: "inbox-other@example.com", password: "inbox-password-2" }));
  root = await realpath(await mkdtemp(path.join(tmpdir(), "synthex-inbox-root-")));
  outside = await realpath(await mkdtemp(path.join(tmpdir(), "synthex-inbox-outside-")));
  await writeFile(path.join(outside, "secret.md"), "# Secret\nthe outside vault code is 4417\n");
  process.env.SYNTHEX_INBOX_ROOTS = root;
  // The server makes these (inboxSettings); made here too so the tests also run on the code before it.
  dir = path.join(root, workspaceId);
  otherDir = path.join(root, otherWorkspaceId);
  await mkdir(dir, { recursive: true });
  await mkdir(otherDir, { recursive: true });
}, 60_000);
afterAll(async () => {
  await settleBackgroundWork();
  await close?.();
  if (rootsBefore === undefined) delete process.env.SYNTHEX_INBOX_ROOTS;
  else process.env.SYNTHEX_INBOX_ROOTS = rootsBefore;
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The error setInbox answers for `given` (as in workspace A), or "accepted". */
async function refusal(given: string, ws = workspaceId): Promise<string> {
  const { pipeline } = await createPipeline(db, ws, { name: `p-${Math.random().toString(36).slice(2, 10)}`, spec: ragBaselineSpec("folder") });
  try {
    const r = await setInbox(db, { workspaceId: ws, pipelineId: pipeline.id, source: "chats", path: given });
    return `accepted ${r.path}`;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await db.sourceInbox.deleteMany({ where: { pipelineId: pipeline.id } });
  }
}

describe("inbox folder path", () => {
  it("names a source of the pipeline, and nothing is stored for a refused path", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "refused", spec: ragBaselineSpec("folder") });
    await expect(setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "nope", path: dir })).rejects.toThrow(/Source "nope" is not in pipeline "refused"/);
    await expect(setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: "/" })).rejects.toThrow(/is not inside this workspace's inbox folder/);
    await expect(setInbox(db, { workspaceId: "other-workspace", pipelineId: pipeline.id, source: "chats", path: dir })).rejects.toThrow(/not found in this workspace/);
    expect(await db.sourceInbox.count({ where: { pipelineId: pipeline.id } })).toBe(0);
  });

  it("without SYNTHEX_INBOX_ROOTS inbox folders are off: no default roots, so the temp folder (where uploads once landed) and home are refused", async () => {
    delete process.env.SYNTHEX_INBOX_ROOTS;
    try {
      for (const given of [tmpdir(), await realpath(tmpdir()), dir, process.env.HOME ?? "/root"]) {
        expect(await refusal(given)).toMatch(/^Inbox folders are off on this server\. The operator turns them on by setting SYNTHEX_INBOX_ROOTS/);
      }
      // The settings page is told so (and shows how to turn them on).
      expect(await inbox.inboxSettings(workspaceId)).toEqual({ enabled: false, folder: null, folders: [] });
    } finally {
      process.env.SYNTHEX_INBOX_ROOTS = root;
    }
  });

  it("lies in the workspace's own folder (made by the server, 0700): relative or absolute; the root, another workspace's folder and anything beside or above are refused", async () => {
    await mkdir(path.join(dir, "support-exports", "2025"), { recursive: true });
    await mkdir(path.join(otherDir, "their-exports"), { recursive: true });
    // Refused: the root, another workspace's folder (or inside it), beside, above, a name sharing the
    // folder's prefix, escapes with "..", the temp folder.
    const notInside = (given: string) => `Inbox folder ${JSON.stringify(given)} is not inside this workspace's inbox folder ${dir}. Give a folder name inside it (e.g. "support-exports") or an absolute path below it.`;
    for (const given of [
      root,
      `${root}/`,
      otherDir,
      path.join(otherDir, "their-exports"),
      path.join(root, "beside"),
      `${dir}-evil`,
      path.join(dir, "..", otherWorkspaceId),
      `../${otherWorkspaceId}/their-exports`,
      "..",
      path.dirname(root),
      tmpdir(),
      "/",
    ]) {
      expect.soft(await refusal(given), given).toBe(notInside(given));
    }
    expect(await db.sourceInbox.count({ where: { path: { startsWith: otherDir } } })).toBe(0);
    // Accepted: the folder itself, or below it, given relative to it or absolute.
    expect(await refusal("support-exports")).toBe(`accepted ${path.join(dir, "support-exports")}`);
    expect(await refusal("support-exports/2025/")).toBe(`accepted ${path.join(dir, "support-exports", "2025")}`);
    expect(await refusal(path.join(dir, "support-exports"))).toBe(`accepted ${path.join(dir, "support-exports")}`);
    expect(await refusal(`${dir}/`)).toBe(`accepted ${dir}`);
    expect(await refusal(".")).toBe(`accepted ${dir}`);
    // The server makes each workspace's folder, mode 0700 (the settings page shows it).
    const made = await inbox.inboxSettings(otherWorkspaceId);
    expect(made).toEqual({ enabled: true, folder: otherDir, folders: [otherDir] });
    const fresh = await signUp(db, { email: "inbox-fresh@example.com", password: "inbox-password-3" });
    const settings = await inbox.inboxSettings(fresh.workspace.id);
    expect(settings.folder).toBe(path.join(root, fresh.workspace.id));
    expect((await stat(settings.folder!)).mode & 0o777).toBe(0o700);
  });

  it("errors tell nothing about the disk beyond the path given, and never list the roots", async () => {
    const secondRoot = await realpath(await mkdtemp(path.join(tmpdir(), "synthex-inbox-root2-")));
    process.env.SYNTHEX_INBOX_ROOTS = [root, secondRoot].join(path.delimiter);
    try {
      await mkdir(path.join(secondRoot, workspaceId), { recursive: true });
      await writeFile(path.join(dir, "a-file.txt"), "x");
      // Outside: the same answer whether the path is a file, a folder, or nothing at all.
      const answers = await Promise.all(["/etc/shadow", "/etc", "/no/such/place", path.join(outside, "secret.md"), outside].map(async (given) => [given, await refusal(given)] as const));
      for (const [given, message] of answers) {
        expect(message.replace(JSON.stringify(given), "X")).toBe(`Inbox folder X is not inside this workspace's inbox folder ${dir}. Give a folder name inside it (e.g. "support-exports") or an absolute path below it.`);
        expect(message).not.toContain(secondRoot);
        expect(message).not.toMatch(/SYNTHEX_INBOX_ROOTS|is a file|does not exist|directory/);
      }
      // Inside the workspace's folder: missing and not-a-folder answer alike.
      const missing = (given: string) => `Inbox folder ${JSON.stringify(given)} does not exist or is not a folder (create it inside ${dir} first).`;
      expect(await refusal("no-such-folder")).toBe(missing("no-such-folder"));
      expect(await refusal("a-file.txt")).toBe(missing("a-file.txt"));
      expect(await refusal(path.join(dir, "a-file.txt"))).toBe(missing(path.join(dir, "a-file.txt")));
      // The second root's folder of this workspace is accepted too (absolute), and named in no error.
      expect(await refusal(path.join(secondRoot, workspaceId))).toBe(`accepted ${path.join(secondRoot, workspaceId)}`);
      expect(await refusal(path.join(dir, ".hidden"))).toMatch(/is a hidden folder/);
    } finally {
      process.env.SYNTHEX_INBOX_ROOTS = root;
      await unlink(path.join(dir, "a-file.txt"));
      await rm(secondRoot, { recursive: true, force: true });
    }
  });

  it("a symlinked folder inside the workspace's folder is refused, wherever it points", async () => {
    await symlink(otherDir, path.join(dir, "to-other-workspace"));
    await symlink(outside, path.join(dir, "to-outside"));
    await mkdir(path.join(dir, "plain"), { recursive: true });
    await symlink(path.join(dir, "plain"), path.join(dir, "to-plain"));
    try {
      for (const given of ["to-other-workspace", path.join(dir, "to-outside"), path.join(dir, "to-plain"), "to-outside/nested"]) {
        const message = await refusal(given.startsWith("/") ? given : path.join(dir, given));
        expect(message, given).toMatch(/is a symbolic link or passes through one; symbolic links are never followed\.$|does not exist or is not a folder/);
        expect(message).not.toContain(outside);
        expect(message).not.toContain(otherWorkspaceId);
      }
    } finally {
      for (const link of ["to-other-workspace", "to-outside", "to-plain"]) await unlink(path.join(dir, link));
    }
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
      expect(row).toMatchObject({ source: "chats", path: dir });
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

describe("what an inbox watcher reads", () => {
  it("a file symlink and a folder symlink inside an inbox are never followed: only the real file is imported", async () => {
    const folder = path.join(dir, "links");
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(otherDir, "their-notes.md"), "# Theirs\nworkspace b's payroll password is orchid-58\n");
    await symlink(path.join(outside, "secret.md"), path.join(folder, "leak.md"));
    await symlink(otherDir, path.join(folder, "their-folder"));
    await symlink(outside, path.join(folder, "outside-folder"));
    const { pipeline } = await createPipeline(db, workspaceId, { name: "inbox-links", spec: ragBaselineSpec("folder") });
    const events: string[] = [];
    const watchers = startInboxWatchers(() => db, { stableMs: 300, resyncMs: 60_000, onEvent: (_id, e) => events.push(`${e.kind} ${e.file}`) });
    const imports = async () => (await db.sourceImport.findMany({ where: { pipelineId: pipeline.id } })).map((i) => i.fileName).sort();
    try {
      await setInbox(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: folder });
      await writeFile(path.join(folder, "real.md"), "# Real\nthe greenhouse opens at nine\n");
      const deadline = Date.now() + 30_000;
      while (!(await imports()).includes("real.md") && Date.now() < deadline) await sleep(200);
      // Time for any link to be (wrongly) read, then for the watcher to finish what it started.
      await sleep(1_500);
      await watchers.idle();
      expect(await imports()).toEqual(["real.md"]);
      const leaked = await db.record.count({ where: { pipelineId: pipeline.id, OR: [{ content: { contains: "4417" } }, { content: { contains: "orchid-58" } }] } });
      expect(leaked).toBe(0);
      expect(events).toContain("failed leak.md");
      // Nothing inside a linked folder was even looked at.
      expect(events.filter((e) => e.includes(`their-folder${path.sep}`) || e.includes(`outside-folder${path.sep}`))).toEqual([]);
    } finally {
      await watchers.stop();
      await rm(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it("a file swapped for a symlink, or reached through a swapped folder, after the event is not read", async () => {
    const folder = path.join(dir, "swaps");
    await mkdir(path.join(folder, "sub"), { recursive: true });
    await writeFile(path.join(folder, "plain.md"), "# Plain\n");
    await writeFile(path.join(folder, "sub", "inner.md"), "# Inner\n");
    const at = { listed: folder, real: folder };
    const ok = await watching.openInsideFolder(at, path.join(folder, "plain.md"));
    expect(ok && "handle" in ok).toBe(true);
    if (ok && "handle" in ok) await ok.handle.close();
    // The event named a file; by the time it is read it is a link to a secret elsewhere.
    await unlink(path.join(folder, "plain.md"));
    await symlink(path.join(outside, "secret.md"), path.join(folder, "plain.md"));
    expect(await watching.openInsideFolder(at, path.join(folder, "plain.md"))).toEqual({ refused: "is a symbolic link or inside one; symbolic links are never followed" });
    // The folder on its path became a link to a folder elsewhere holding a file of that name.
    await mkdir(path.join(outside, "sub"), { recursive: true });
    await writeFile(path.join(outside, "sub", "inner.md"), "# Outside inner\n");
    await rm(path.join(folder, "sub"), { recursive: true });
    await symlink(path.join(outside, "sub"), path.join(folder, "sub"));
    expect(await watching.openInsideFolder(at, path.join(folder, "sub", "inner.md"))).toEqual({ refused: "is a symbolic link or inside one; symbolic links are never followed" });
    await rm(folder, { recursive: true, force: true });
  });

  it("an inbox stored outside its workspace's folder (set before the fix) is not watched, and its row says to set it again", async () => {
    const stale = await mkdtemp(path.join(root, "stale-"));
    await writeFile(path.join(stale, "old.md"), "# Old\nwritten into a folder outside the workspace's inbox folder\n");
    const { pipeline } = await createPipeline(db, workspaceId, { name: "inbox-stale", spec: ragBaselineSpec("folder") });
    const other = await createPipeline(db, workspaceId, { name: "inbox-stale-root", spec: ragBaselineSpec("folder") });
    await db.sourceInbox.create({ data: { workspaceId, pipelineId: pipeline.id, source: "chats", path: stale } });
    await db.sourceInbox.create({ data: { workspaceId, pipelineId: other.pipeline.id, source: "chats", path: otherDir } });
    const watchers = startInboxWatchers(() => db, { stableMs: 300, resyncMs: 60_000 });
    try {
      await watchers.sync();
      await sleep(1_500);
      await watchers.idle();
      expect(await db.sourceImport.count({ where: { pipelineId: { in: [pipeline.id, other.pipeline.id] } } })).toBe(0);
      const rows = (await listInboxes(db, workspaceId)).filter((r) => r.pipelineId === pipeline.id || r.pipelineId === other.pipeline.id);
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row.problem).toMatch(/not inside this workspace's inbox folder .*set the inbox again in Settings → Sources/);
        expect(row.lastEvent).toBe(row.problem);
        expect(await db.sourceInbox.findUniqueOrThrow({ where: { pipelineId_source: { pipelineId: row.pipelineId, source: "chats" } } })).toMatchObject({ watcherId: null });
      }
    } finally {
      await watchers.stop();
    }
  }, 60_000);
});
