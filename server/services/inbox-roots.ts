/**
 * Where inbox folders may be, and where uploads and inbox files are staged.
 *
 * Inbox folders are off unless the operator lists roots in `SYNTHEX_INBOX_ROOTS` (absolute paths,
 * path-delimiter separated; there is no default). Each workspace gets its own folder under each
 * root, `<root>/<workspaceId>/`, created by the server with mode 0700; a source's inbox may only be
 * that folder or one below it, never the root, another workspace's folder or anything beside them.
 *
 * Uploads and the files an inbox watcher reads are copied into a private staging folder (mode
 * 0700, owned by the server user) that lies outside every root, so no inbox can see them.
 */
import { constants } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { badRequest } from "../core/errors";

type Env = Record<string, string | undefined>;

/** Whether `child` is `parent` or lies below it (both absolute and normalised). */
export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  return child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
}

/** The roots as listed in `SYNTHEX_INBOX_ROOTS` (absolute paths only, normalised), or none. */
export function listedInboxRoots(env: Env = process.env): string[] {
  const listed = (env.SYNTHEX_INBOX_ROOTS ?? "").split(path.delimiter).map((p) => p.trim()).filter(Boolean);
  return [...new Set(listed.filter((p) => path.isAbsolute(p)).map((p) => path.resolve(p)))];
}

export interface InboxRoot {
  /** As the operator wrote it (normalised). */
  listed: string;
  /** Its real path (symlinks resolved). */
  real: string;
}

/** The existing roots, with their real paths. Empty: inbox folders are off. */
export async function inboxRootPairs(env: Env = process.env): Promise<InboxRoot[]> {
  const pairs = await Promise.all(
    listedInboxRoots(env).map(async (listed) => {
      const real = await realpath(listed).catch(() => null);
      const info = real ? await lstat(real).catch(() => null) : null;
      return real && info?.isDirectory() ? { listed, real } : null;
    }),
  );
  const seen = new Set<string>();
  return pairs.filter((p): p is InboxRoot => p !== null && !seen.has(p.real) && !!seen.add(p.real));
}

/** The real paths of the roots an inbox may lie in (never a default: empty when SYNTHEX_INBOX_ROOTS is unset). */
export async function inboxRoots(env: Env = process.env): Promise<string[]> {
  return (await inboxRootPairs(env)).map((r) => r.real);
}

export const INBOXES_OFF_MESSAGE =
  "Inbox folders are off on this server. The operator turns them on by setting SYNTHEX_INBOX_ROOTS to one or more absolute folders (separated by \"" +
  path.delimiter +
  '") and restarting; each workspace then gets its own folder inside each of them.';

function assertWorkspaceId(workspaceId: string) {
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(workspaceId)) throw badRequest("This workspace's id cannot name a folder.");
}

/** `<root>/<workspaceId>` for each root (real root paths), without touching the disk. */
export function workspaceFoldersIn(roots: string[], workspaceId: string): string[] {
  assertWorkspaceId(workspaceId);
  return roots.map((root) => path.join(root, workspaceId));
}

/**
 * This workspace's folder under each root, created (mode 0700) when missing. A workspace folder
 * that is not a plain directory of its own (a symlink, a file) is refused.
 */
export async function ensureWorkspaceFolders(workspaceId: string, env: Env = process.env): Promise<string[]> {
  const roots = await inboxRoots(env);
  const folders = workspaceFoldersIn(roots, workspaceId);
  for (const folder of folders) {
    await mkdir(folder, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
    });
    const info = await lstat(folder);
    const real = await realpath(folder);
    if (!info.isDirectory() || info.isSymbolicLink() || real !== folder) {
      throw badRequest("This workspace's inbox folder on the server is not a plain folder; ask the server's operator to fix it.");
    }
  }
  return folders;
}

// ---------------------------------------------------------------------------------------------
// Private staging

const stagingCache = new Map<string, Promise<string>>();

/** Candidates for the private staging folder, in order of preference. */
function stagingCandidates(env: Env): string[] {
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  const dataDir = path.resolve(/*turbopackIgnore: true*/ env.SYNTHEX_DATA_DIR ?? ".synthex");
  return [
    ...(env.SYNTHEX_STAGING_DIR ? [path.resolve(env.SYNTHEX_STAGING_DIR)] : []),
    path.join(os.tmpdir(), `synthex-private-${uid}`),
    path.join(dataDir, "staging"),
    path.join(os.homedir(), ".synthex-staging"),
  ];
}

async function tryStaging(candidate: string, roots: string[]): Promise<string | null> {
  const parentReal = await realpath(path.dirname(candidate)).catch(() => null);
  if (!parentReal) {
    await mkdir(path.dirname(candidate), { recursive: true, mode: 0o700 }).catch(() => {});
  }
  const parent = parentReal ?? (await realpath(path.dirname(candidate)).catch(() => null));
  if (!parent) return null;
  const dir = path.join(parent, path.basename(candidate));
  // Disjoint from every root: not inside one, and no root inside it.
  if (roots.some((root) => isWithin(root, dir) || isWithin(dir, root))) return null;
  await mkdir(dir, { mode: 0o700 }).catch(() => {});
  const info = await lstat(dir).catch(() => null);
  if (!info || !info.isDirectory() || info.isSymbolicLink()) return null;
  // Someone else's folder of that name (a shared /tmp): not ours to use.
  if (typeof process.getuid === "function" && info.uid !== process.getuid()) return null;
  if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
  return dir;
}

/**
 * The server's private staging folder: mode 0700, owned by this user, outside every inbox root
 * (and containing none). `SYNTHEX_STAGING_DIR` if set and usable, else `<tmp>/synthex-private-<uid>`,
 * else `<SYNTHEX_DATA_DIR>/staging`, else `~/.synthex-staging`. Throws when none qualifies.
 */
export function privateStagingDir(env: Env = process.env): Promise<string> {
  const key = JSON.stringify([env.SYNTHEX_INBOX_ROOTS ?? "", env.SYNTHEX_STAGING_DIR ?? "", env.SYNTHEX_DATA_DIR ?? "", os.tmpdir()]);
  let found = stagingCache.get(key);
  if (!found) {
    found = (async () => {
      const roots = await inboxRoots(env);
      for (const candidate of stagingCandidates(env)) {
        const dir = await tryStaging(candidate, roots).catch(() => null);
        if (dir) return dir;
      }
      throw new Error("No private staging folder outside SYNTHEX_INBOX_ROOTS is usable: set SYNTHEX_STAGING_DIR to a folder outside every inbox root.");
    })();
    found.catch(() => stagingCache.delete(key));
    stagingCache.set(key, found);
  }
  return found;
}

/** A fresh private folder (mode 0700) in the staging folder, for one upload or one inbox file; the caller removes it. */
export async function makeStagingDir(prefix: string, env: Env = process.env): Promise<string> {
  const base = await privateStagingDir(env);
  // The staging folder may have been removed (a tmp cleaner): made again once.
  const dir = await mkdtemp(path.join(base, prefix)).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
    stagingCache.clear();
    return mkdtemp(path.join(await privateStagingDir(env), prefix));
  });
  await chmod(dir, 0o700);
  return dir;
}

/** Open flags that never follow a symlink at the last component (where the platform has O_NOFOLLOW). */
export const OPEN_NOFOLLOW = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
