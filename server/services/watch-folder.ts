/**
 * A watched inbox folder (`synthex watch <dir>`): every note, document, image or audio file that
 * appears or changes there is imported once. chokidar reports the file only after its size has
 * stopped changing (a half-written download or copy is waited for); the file's SHA-256 decides
 * whether it is new — a file renamed or touched without a change is not imported again. A file
 * deleted from the folder is NOT deleted from memory: its records stay (say so, and how to remove them).
 * Imports run one at a time; each import that adds records requests the incremental run (importFile).
 *
 * Symlinks are never followed, neither a file's nor a folder's: chokidar does not follow them, and
 * every file is checked again when it is read (a file can be swapped between the event and the
 * read) — `lstat` says it is a regular file, its `realpath` lies inside the watched folder's, it is
 * opened with O_NOFOLLOW and the opened file is that same file (device and inode). Its bytes are
 * read from that open file into a private staging copy (inbox-roots.ts), which is what gets imported.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { lstat, open, realpath, rm, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { watch, type FSWatcher } from "chokidar";
import { MEDIA_EXTENSIONS } from "../importers/media";
import { isWithin, makeStagingDir, OPEN_NOFOLLOW } from "./inbox-roots";

const NOTE_EXT = new Set([".md", ".markdown", ".txt", ".jsonl", ".ndjson", ".json", ".zip"]);

/** Whether the watcher imports a file with this name (hidden files and partial downloads never). */
export function isWatchedFile(name: string): boolean {
  const base = path.basename(name);
  if (base.startsWith(".") || /\.(part|crdownload|download|tmp|swp)$/i.test(base) || base.endsWith("~")) return false;
  const ext = path.extname(base).toLowerCase();
  return NOTE_EXT.has(ext) || ext in MEDIA_EXTENSIONS;
}

export type WatchEvent =
  | { kind: "imported"; file: string; added: number; received: number }
  | { kind: "unchanged"; file: string; sameAs: string }
  | { kind: "failed"; file: string; message: string }
  | { kind: "deleted"; file: string }
  | { kind: "ignored"; file: string };

export interface WatchFolderOptions {
  /**
   * Imports one file (the CLI: `importFile` locally or an upload to a server): `file` is a private
   * copy with the original's base name, `sha256` its content's hash, `name` its path in the folder.
   */
  importOne: (file: string, sha256: string, name: string) => Promise<{ added: number; received: number }>;
  /**
   * The name under which this content was imported before this watcher started, or null (the app
   * server's inbox asks its import rows, so a restart or a takeover does not read the folder again).
   */
  importedBefore?: (sha256: string) => Promise<string | null>;
  /** Told of everything the watcher does. */
  onEvent?: (event: WatchEvent) => void;
  /** How long a file's size must stay still before it is read (ms). Default 2000. */
  stableMs?: number;
  /** Poll instead of inotify (network folders). */
  usePolling?: boolean;
  /** A fresh private folder for one file's copy (default: one in the private staging folder). */
  stagingDir?: () => Promise<string>;
}

/**
 * Opens `file` for reading when it is a regular file inside `rootReal` reached without any symlink;
 * otherwise says why not (`null`: it is gone). The caller closes the handle.
 */
export async function openInsideFolder(root: { listed: string; real: string }, file: string): Promise<{ handle: FileHandle } | { refused: string } | null> {
  const link = { refused: "is a symbolic link or inside one; symbolic links are never followed" };
  const info = await lstat(file).catch(() => null);
  if (!info) return null;
  if (info.isSymbolicLink()) return link;
  if (!info.isFile()) return { refused: "is not a regular file" };
  const real = await realpath(file).catch(() => null);
  if (real === null) return null;
  // Reached through no symlink at all: its real path is its path in the folder's real path.
  const expected = path.join(root.real, path.relative(root.listed, path.resolve(file)));
  if (real !== expected || !isWithin(root.real, real) || real === root.real) return link;
  const handle = await open(real, OPEN_NOFOLLOW).catch((err: NodeJS.ErrnoException) => (err.code === "ELOOP" ? "link" : null));
  if (handle === "link") return link;
  if (handle === null) return null;
  // The file opened is the one checked, and it is still reached by the same path: not swapped meanwhile.
  const opened = await handle.stat().catch(() => null);
  const now = await lstat(real).catch(() => null);
  const realNow = await realpath(real).catch(() => null);
  const same = (a: { dev: number; ino: number } | null) => !!a && !!opened && a.dev === opened.dev && a.ino === opened.ino;
  if (!opened?.isFile() || !same(info) || !same(now) || realNow !== real) {
    await handle.close().catch(() => {});
    return link;
  }
  return { handle };
}

/** The open file's bytes (from the start) and their SHA-256; with `to`, also copied there (mode 0600). */
async function readOpened(handle: FileHandle, to?: string): Promise<string> {
  const hash = createHash("sha256");
  const stream = handle.createReadStream({ start: 0, autoClose: false, highWaterMark: 1 << 16 });
  async function* hashing(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      hash.update(chunk);
      yield chunk;
    }
  }
  if (to) await pipeline(stream, hashing, createWriteStream(to, { flags: "wx", mode: 0o600 }));
  else for await (const chunk of hashing(stream)) void chunk;
  return hash.digest("hex");
}

export interface FolderWatcher {
  /** Resolves when the first scan is done and its imports have finished. */
  ready: Promise<void>;
  /** Resolves when every import queued so far has finished. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export function watchFolder(dir: string, opts: WatchFolderOptions): FolderWatcher {
  const stableMs = opts.stableMs ?? 2000;
  const root = path.resolve(dir);
  const rootReal = realpath(root).catch(() => root);
  const stagingDir = opts.stagingDir ?? (() => makeStagingDir("inbox-"));
  /** Content already imported (or being imported): hash → the file it came from. */
  const seen = new Map<string, string>();
  let queue: Promise<void> = Promise.resolve();
  const emit = (e: WatchEvent) => opts.onEvent?.(e);
  const rel = (file: string) => path.relative(root, file) || path.basename(file);

  const handle = (file: string) => {
    queue = queue.then(async () => {
      const name = rel(file);
      if (!isWatchedFile(file)) return emit({ kind: "ignored", file: name });
      const opened = await openInsideFolder({ listed: root, real: await rootReal }, file).catch(() => null);
      if (!opened) return; // gone again before it could be read
      if ("refused" in opened) return emit({ kind: "failed", file: name, message: `not imported: it ${opened.refused}` });
      const { handle } = opened;
      let staged: string | null = null;
      try {
        const sha = await readOpened(handle).catch(() => null);
        if (!sha) return;
        const known = seen.get(sha);
        if (known !== undefined) return emit({ kind: "unchanged", file: name, sameAs: known });
        const before = await opts.importedBefore?.(sha).catch(() => null);
        if (before) {
          seen.set(sha, before);
          return emit({ kind: "unchanged", file: name, sameAs: before });
        }
        // Read from the checked, open file into a private copy: what is imported is what was checked.
        staged = await stagingDir();
        const copy = path.join(/*turbopackIgnore: true*/ staged, path.basename(file));
        const copied = await readOpened(handle, copy);
        // Rewritten while it was read: its change event comes once it is still again.
        if (copied !== sha) return;
        seen.set(sha, name);
        try {
          const res = await opts.importOne(copy, sha, name);
          emit({ kind: "imported", file: name, added: res.added, received: res.received });
        } catch (err) {
          // Not remembered: a fixed version of the file (new bytes) is tried again.
          seen.delete(sha);
          emit({ kind: "failed", file: name, message: err instanceof Error ? err.message : String(err) });
        }
      } finally {
        await handle.close().catch(() => {});
        if (staged) await rm(staged, { recursive: true, force: true }).catch(() => {});
      }
    });
  };
  const watcher: FSWatcher = watch(root, {
    ignoreInitial: false,
    persistent: true,
    // Never into a linked folder, never a linked file's target (each read checks again: openInsideFolder).
    followSymlinks: false,
    usePolling: opts.usePolling ?? false,
    interval: 200,
    awaitWriteFinish: { stabilityThreshold: stableMs, pollInterval: Math.min(100, stableMs / 4) },
    ignored: (p: string) => path.basename(p).startsWith(".") && p !== root,
  });
  watcher.on("add", handle);
  watcher.on("change", handle);
  watcher.on("unlink", (file) => emit({ kind: "deleted", file: rel(file) }));
  watcher.on("error", (err) => emit({ kind: "failed", file: rel(root), message: err instanceof Error ? err.message : String(err) }));
  const ready = new Promise<void>((resolve) => watcher.once("ready", () => resolve()));
  return {
    ready: ready.then(() => queue),
    idle: async () => {
      let seenQueue: Promise<void>;
      do {
        seenQueue = queue;
        await seenQueue;
      } while (seenQueue !== queue);
    },
    close: async () => {
      await watcher.close();
      await queue;
    },
  };
}
