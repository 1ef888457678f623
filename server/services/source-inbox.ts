/**
 * An inbox folder per pipeline source for the app server (Settings → Sources): the server process
 * watches each configured folder with the same code as `synthex watch` (watch-folder.ts) — a new or
 * changed file is imported once (content hash), a half-written one is waited for, a deleted one is
 * NOT deleted from memory, and every import that adds records requests the incremental run (importFile).
 * One process watches each folder (a lease, inbox-lease.ts), and the import rows keep each file's
 * content hash, so a restarted or succeeding watcher does not import the folder's files again.
 *
 * The folder is on the server's disk, so it is confined: inbox folders are off unless the operator
 * sets `SYNTHEX_INBOX_ROOTS` (no default), each workspace has its own folder `<root>/<workspaceId>/`
 * under each root (created by the server, mode 0700; inbox-roots.ts), and a source's inbox is that
 * folder or one below it — given relative to it ("support-exports") or as an absolute path inside
 * it. The path is checked by its spelling before anything is looked up on disk, then component by
 * component below the workspace folder (no symlinks), so an error never tells what exists
 * elsewhere. Folders stored before this rule are not watched (the settings page says to set them again).
 * Hidden files and folders are never read; symlinks are never followed (watch-folder.ts).
 */
import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { processState } from "../core/process-state";
import { claimInboxWatches, releaseInboxWatches } from "../store/inbox-lease";
import { processLeaseOwner } from "../store/run-lease";
import { executorKind } from "./executor";
import { importFile } from "./imports";
import { ensureWorkspaceFolders, inboxRootPairs, inboxRoots, INBOXES_OFF_MESSAGE, isWithin, makeStagingDir, workspaceFoldersIn } from "./inbox-roots";
import { requestIncrementalRun } from "./ingest";
import { getBranch } from "./pipelines";
import { watchFolder, type FolderWatcher, type WatchEvent } from "./watch-folder";

export { inboxRoots } from "./inbox-roots";

export const INBOX_ACTOR = "system";

type Env = Record<string, string | undefined>;

/** Whether inbox folders are on, and this workspace's folder(s) on the server (created when missing). */
export async function inboxSettings(
  workspaceId: string,
  env: Env = process.env,
): Promise<{ enabled: boolean; folder: string | null; folders: string[] }> {
  if ((await inboxRoots(env)).length === 0) return { enabled: false, folder: null, folders: [] };
  const folders = await ensureWorkspaceFolders(workspaceId, env);
  return { enabled: true, folder: folders[0] ?? null, folders };
}

/**
 * The folder's real path, or a clear error about `input` alone. `input` is relative to the
 * workspace's (first) inbox folder, or absolute inside one of its inbox folders.
 */
export async function validateInboxPath(input: string, workspaceId: string, env: Env = process.env): Promise<string> {
  const given = input.trim();
  const shown = JSON.stringify(given.slice(0, 300));
  const pairs = await inboxRootPairs(env);
  if (pairs.length === 0) throw badRequest(INBOXES_OFF_MESSAGE);
  if (!given) throw badRequest("Inbox folder: give a folder inside this workspace's inbox folder, or clear the inbox.");
  if (given.includes("\0")) throw badRequest(`Inbox folder ${shown} contains a NUL character.`);
  const folders = workspaceFoldersIn(pairs.map((p) => p.real), workspaceId);
  const home = folders[0]!;
  const outside = () => badRequest(`Inbox folder ${shown} is not inside this workspace's inbox folder ${home}. Give a folder name inside it (e.g. "support-exports") or an absolute path below it.`);
  // By spelling first: nothing outside the workspace's folders is ever looked up.
  const candidate = path.isAbsolute(given) ? path.resolve(given) : path.resolve(home, given);
  let base: string | null = null;
  let rest = "";
  for (const [i, pair] of pairs.entries()) {
    for (const spelling of new Set([folders[i]!, path.join(pair.listed, workspaceId)])) {
      if (base === null && isWithin(spelling, candidate)) {
        base = folders[i]!;
        rest = path.relative(spelling, candidate);
      }
    }
  }
  if (base === null) throw outside();
  const parts = rest ? rest.split(path.sep) : [];
  if (parts.some((part) => part.startsWith("."))) throw badRequest(`Inbox folder ${shown} is a hidden folder (or inside one); hidden files are never imported.`);
  const [workspaceFolder] = (await ensureWorkspaceFolders(workspaceId, env)).filter((f) => f === base);
  if (!workspaceFolder) throw outside();
  // Component by component below the workspace folder: a symlink anywhere is refused, never followed.
  const missing = () => badRequest(`Inbox folder ${shown} does not exist or is not a folder (create it inside ${home} first).`);
  let at = workspaceFolder;
  for (const part of parts) {
    at = path.join(at, part);
    const info = await lstat(at).catch(() => null);
    if (!info) throw missing();
    if (info.isSymbolicLink()) throw badRequest(`Inbox folder ${shown} is a symbolic link or passes through one; symbolic links are never followed.`);
    if (!info.isDirectory()) throw missing();
  }
  if ((await realpath(at).catch(() => null)) !== at) throw outside();
  return at;
}

/** What keeps a stored inbox folder from being watched now, or null (fine to watch). */
export async function inboxPathProblem(row: { workspaceId: string; path: string }, env: Env = process.env): Promise<string | null> {
  const roots = await inboxRoots(env);
  if (roots.length === 0) return "inbox folders are off on this server (SYNTHEX_INBOX_ROOTS is not set); nothing is watched";
  const folders = workspaceFoldersIn(roots, row.workspaceId);
  const resetIt = "set the inbox again in Settings → Sources; nothing is watched until then";
  if (!folders.some((f) => isWithin(f, row.path))) return `this folder is not inside this workspace's inbox folder (it was set before inbox folders were confined to one workspace): ${resetIt}`;
  const info = await lstat(row.path).catch(() => null);
  if (!info || !info.isDirectory()) return "the folder is missing; nothing is watched until it is back";
  if ((await realpath(row.path).catch(() => null)) !== row.path) return `the folder is a symbolic link or passes through one: ${resetIt}`;
  return null;
}

export interface InboxRow {
  pipelineId: string;
  pipelineName: string;
  source: string;
  path: string | null;
  lastEvent: string | null;
  lastEventAt: Date | null;
  /** Why this folder is not watched (off, outside the workspace's folder, a symlink, missing), or null. */
  problem: string | null;
}

/** Every source of the workspace's pipelines with its inbox folder (or none). */
export async function listInboxes(db: Db, workspaceId: string, env: Env = process.env): Promise<InboxRow[]> {
  const [pipelines, inboxes] = await Promise.all([
    db.pipeline.findMany({ where: { workspaceId, evalOfId: null }, orderBy: { name: "asc" }, select: { id: true, name: true } }),
    db.sourceInbox.findMany({ where: { workspaceId } }),
  ]);
  const rows: InboxRow[] = [];
  for (const p of pipelines) {
    const { spec } = await getBranch(db, p.id, "main");
    for (const s of spec.sources) {
      const inbox = inboxes.find((i) => i.pipelineId === p.id && i.source === s.name);
      const problem = inbox ? await inboxPathProblem(inbox, env) : null;
      rows.push({ pipelineId: p.id, pipelineName: p.name, source: s.name, path: inbox?.path ?? null, lastEvent: inbox?.lastEvent ?? null, lastEventAt: inbox?.lastEventAt ?? null, problem });
    }
  }
  return rows;
}

/**
 * Set (a folder inside the workspace's inbox folder; validateInboxPath) or clear (`null`) a
 * source's inbox folder; the server's watchers follow at once. The procedure audits it (source.setInbox).
 */
export async function setInbox(
  db: Db,
  input: { workspaceId: string; pipelineId: string; source: string; path: string | null; userId?: string | null },
  env: Env = process.env,
): Promise<{ pipelineId: string; source: string; path: string | null; previous: string | null; changed: boolean }> {
  const pipeline = await db.pipeline.findFirst({ where: { id: input.pipelineId, workspaceId: input.workspaceId, evalOfId: null } });
  if (!pipeline) throw notFound(`Pipeline ${input.pipelineId} not found in this workspace.`);
  const { spec } = await getBranch(db, pipeline.id, "main");
  if (!spec.sources.some((s) => s.name === input.source)) {
    throw notFound(`Source "${input.source.slice(0, 100)}" is not in pipeline "${pipeline.name}". Sources: ${spec.sources.map((s) => s.name).join(", ") || "none"}.`);
  }
  const before = await db.sourceInbox.findUnique({ where: { pipelineId_source: { pipelineId: pipeline.id, source: input.source } } });
  const folder = input.path === null ? null : await validateInboxPath(input.path, input.workspaceId, env);
  const previous = before?.path ?? null;
  if (previous === folder) return { pipelineId: pipeline.id, source: input.source, path: folder, previous, changed: false };
  if (folder === null) await db.sourceInbox.delete({ where: { id: before!.id } });
  else
    await db.sourceInbox.upsert({
      where: { pipelineId_source: { pipelineId: pipeline.id, source: input.source } },
      create: { workspaceId: input.workspaceId, pipelineId: pipeline.id, source: input.source, path: folder, createdById: input.userId ?? null },
      update: { path: folder, lastEvent: null, lastEventAt: null },
    });
  await activeWatchers().current?.sync();
  return { pipelineId: pipeline.id, source: input.source, path: folder, previous, changed: true };
}

/** One line for the settings page about what the watcher did. */
export function describeInboxEvent(e: WatchEvent): string | null {
  switch (e.kind) {
    case "imported":
      return `imported ${e.file}: ${e.received} read, ${e.added} new${e.added ? " (incremental run requested)" : ""}`;
    case "unchanged":
      return `${e.file}: same content as ${e.sameAs}, already imported`;
    case "failed":
      return `${e.file} failed: ${e.message}`;
    case "deleted":
      return `${e.file} was deleted from the folder; its records stay in memory (forget them in the explorer)`;
    default:
      return null;
  }
}

export interface InboxWatchers {
  /** Start watchers for new or changed inbox rows this process holds (or now claims), stop those of cleared ones and lost claims. */
  sync(): Promise<void>;
  /** Resolves when every watcher's queued imports have finished (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * This process's watchers, whichever module copy started them: the instrumentation's copy starts
 * them and the tRPC route's copy sets a folder (Next bundles the two apart; process-state.ts), and
 * the setting must reach the watchers at once, not at the next resync.
 */
const activeWatchers = () => processState("source-inbox.active", () => ({ current: null as InboxWatchers | null }));

/**
 * Watch the configured inbox folders from this process (the app server). Each folder is watched by
 * one process of those sharing the database: a process claims the folders nobody holds on every
 * resync (`resyncMs`, default 5 s) and keeps them while it renews the lease (`leaseMs`, default
 * three resyncs; inbox-lease.ts). So a folder set through another app server is watched within a
 * resync, and one whose server died is taken over when its lease expires.
 */
export function startInboxWatchers(
  getDb: () => Db | Promise<Db>,
  opts: { stableMs?: number; resyncMs?: number; leaseMs?: number; owner?: string; onEvent?: (inboxId: string, e: WatchEvent) => void; env?: Env } = {},
): InboxWatchers {
  const resyncMs = opts.resyncMs ?? 5_000;
  const leaseMs = opts.leaseMs ?? 3 * resyncMs;
  const owner = opts.owner ?? processLeaseOwner;
  const watching = new Map<string, { path: string; watcher: FolderWatcher }>();
  let syncing: Promise<void> = Promise.resolve();
  let stopped = false;

  const start = (db: Db, row: { id: string; workspaceId: string; pipelineId: string; source: string; path: string }) => {
    const watcher = watchFolder(row.path, {
      stableMs: opts.stableMs ?? 2000,
      stagingDir: () => makeStagingDir("inbox-", opts.env),
      // `file` is a private copy of the inbox file (checked: no symlink, inside the folder); `name` its path in the folder.
      importOne: async (file, sha256, name) => {
        const res = await importFile(db, { workspaceId: row.workspaceId, pipelineId: row.pipelineId, source: row.source, path: file, displayName: name, actor: INBOX_ACTOR, contentSha256: sha256 });
        // importFile announces new records to Inngest; with the local executor the run starts here.
        if (res.added > 0 && executorKind() === "local") await requestIncrementalRun(db, row, "inbox: a file was imported", `${name} was imported into ${row.source}`);
        return res;
      },
      // Imported by an earlier watcher of this source (before a restart, or a server that died).
      importedBefore: async (sha256) =>
        (await db.sourceImport.findFirst({ where: { pipelineId: row.pipelineId, source: row.source, contentSha256: sha256, status: "completed" }, orderBy: { createdAt: "desc" }, select: { fileName: true } }))?.fileName ?? null,
      onEvent: (e) => {
        opts.onEvent?.(row.id, e);
        const line = describeInboxEvent(e);
        if (e.kind === "failed") console.warn(`[synthex inbox] ${row.source}: ${line}`);
        if (line) void db.sourceInbox.updateMany({ where: { id: row.id }, data: { lastEvent: line.slice(0, 1000), lastEventAt: new Date() } }).catch(() => {});
      },
    });
    watching.set(row.id, { path: row.path, watcher });
  };

  const syncOnce = async () => {
    if (stopped) return;
    const db = await getDb();
    const rows = await db.sourceInbox.findMany();
    // A folder removed since it was set, one outside its workspace's inbox folder (set before they
    // were confined), a symlink, or inbox folders turned off: not claimed (said on the settings page).
    const problems = await Promise.all(rows.map((row) => inboxPathProblem(row, opts.env)));
    const present = problems.map((p) => p === null);
    const held = await claimInboxWatches(db, rows.filter((_, i) => present[i]).map((row) => row.id), owner, leaseMs);
    for (const [id, w] of watching) {
      const row = rows.find((r) => r.id === id);
      if (!row || row.path !== w.path || !held.has(id)) {
        watching.delete(id);
        await w.watcher.close();
      }
    }
    for (const [i, row] of rows.entries()) {
      const problem = problems[i];
      if (problem) {
        await db.sourceInbox.updateMany({ where: { id: row.id, OR: [{ lastEvent: null }, { NOT: { lastEvent: problem } }] }, data: { lastEvent: problem, lastEventAt: new Date() } }).catch(() => {});
        continue;
      }
      if (held.has(row.id) && !watching.has(row.id) && !stopped) start(db, row);
    }
  };
  const sync = () => (syncing = syncing.then(syncOnce, syncOnce).catch((err: unknown) => console.warn(`[synthex inbox] ${(err as Error).message}`)));
  const timer = setInterval(() => void sync(), resyncMs);
  timer.unref();
  const self: InboxWatchers = {
    sync,
    idle: async () => {
      await syncing;
      await Promise.all([...watching.values()].map((w) => w.watcher.idle()));
    },
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await syncing;
      await Promise.all([...watching.values()].map((w) => w.watcher.close()));
      watching.clear();
      // Handed over at once: another server claims the folders at its next resync, not after the lease.
      await releaseInboxWatches(await getDb(), owner).catch(() => {});
      if (activeWatchers().current === self) activeWatchers().current = null;
    },
  };
  activeWatchers().current = self;
  void sync();
  return self;
}
