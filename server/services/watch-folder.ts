/**
 * A watched inbox folder (`synthex watch <dir>`): every note, document, image or audio file that
 * appears or changes there is imported once. chokidar reports the file only after its size has
 * stopped changing (a half-written download or copy is waited for); the file's SHA-256 decides
 * whether it is new — a file renamed or touched without a change is not imported again. A file
 * deleted from the folder is NOT deleted from memory: its records stay (say so, and how to remove them).
 * Imports run one at a time; each import that adds records requests the incremental run (importFile).
 */
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { fileSha256, MEDIA_EXTENSIONS } from "../importers/media";

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
  /** Imports one file (the CLI: `importFile` locally or an upload to a server); `sha256` is its content's hash. */
  importOne: (file: string, sha256: string) => Promise<{ added: number; received: number }>;
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
  /** Content already imported (or being imported): hash → the file it came from. */
  const seen = new Map<string, string>();
  let queue: Promise<void> = Promise.resolve();
  const emit = (e: WatchEvent) => opts.onEvent?.(e);
  const rel = (file: string) => path.relative(root, file) || path.basename(file);

  const handle = (file: string) => {
    queue = queue.then(async () => {
      const name = rel(file);
      if (!isWatchedFile(file)) return emit({ kind: "ignored", file: name });
      const sha = await fileSha256(file).catch(() => null);
      if (!sha) return; // gone again before it could be read
      const known = seen.get(sha);
      if (known !== undefined) {
        return emit({ kind: "unchanged", file: name, sameAs: known });
      }
      const before = await opts.importedBefore?.(sha).catch(() => null);
      if (before) {
        seen.set(sha, before);
        return emit({ kind: "unchanged", file: name, sameAs: before });
      }
      seen.set(sha, name);
      try {
        const res = await opts.importOne(file, sha);
        emit({ kind: "imported", file: name, added: res.added, received: res.received });
      } catch (err) {
        // Not remembered: a fixed version of the file (new bytes) is tried again.
        seen.delete(sha);
        emit({ kind: "failed", file: name, message: err instanceof Error ? err.message : String(err) });
      }
    });
  };

  const watcher: FSWatcher = watch(root, {
    ignoreInitial: false,
    persistent: true,
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
