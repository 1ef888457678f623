/**
 * The embedded database: one owner process holds `<dataDir>/pgdata` (PGlite + pgvector) and
 * serves it on loopback over the Postgres wire protocol; everyone else connects to it.
 *
 * Exactly one process may open a PGlite directory (two corrupt it), so ownership is a lock
 * file `<dataDir>/owner.json` created with O_EXCL. Its content moves through
 * `starting` (pid only) → `ready` (pid + port) → `closing`. A lock is stale, and is taken
 * over, when its pid is dead, or when its pid is alive but its port refuses connections for a
 * few seconds (pid reused). A live owner that is starting or closing is waited for, never
 * taken over.
 *
 * Only this OS user may reach the data: the wire port asks for a password (SCRAM-SHA-256),
 * generated on first start into `<dataDir>/db-password`; the directory is 0700 and every file in
 * it 0600 (PGlite creates its files 0666, so they are tightened when the owner opens and closes).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, existsSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { startWireServer, type WireServer } from "./pglite-wire-server";
import { timingMark } from "../core/timing";

export interface EmbeddedServerOptions {
  /** Default: env SYNTHEX_DATA_DIR, else `.synthex`. */
  dataDir?: string;
  /** Port to serve on when this process becomes the owner. Default: env SYNTHEX_DB_PORT, else a free port. */
  port?: number;
  /** How long to wait for another process that is starting or closing the database. Default 60 s. */
  waitMs?: number;
  /** Owner only: see WireServerOptions.idleInTransactionTimeoutMs (default 60 s). */
  idleInTransactionTimeoutMs?: number;
}

export interface EmbeddedServer {
  /** `postgresql://postgres:<password from db-password>@127.0.0.1:PORT/postgres` */
  url: string;
  /** True when this call opened the directory (and `close()` really closes it). */
  owned: boolean;
  /** Owner: stop serving, close PGlite, remove the lock. Non-owner: nothing. */
  close(): Promise<void>;
}

interface LockInfo {
  pid: number;
  state: "starting" | "ready" | "closing";
  port?: number;
  host?: string;
  startedAt: string;
}

const HOST = "127.0.0.1";
const LOCK_FILE = "owner.json";
const TAKEOVER_FILE = "owner.json.takeover";
const PASSWORD_FILE = "db-password";
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

export function embeddedUrl(port: number, password: string, host = HOST): string {
  return `postgresql://postgres:${encodeURIComponent(password)}@${host}:${port}/postgres`;
}

/** The data directory, created (or tightened) to 0700. */
function ensurePrivateDir(dir: string) {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  chmodSync(dir, DIR_MODE);
}

/** Every file under `dir` 0600, every directory 0700 (symlinks left alone). */
export function restrictTree(dir: string) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    try {
      if (entry.isDirectory()) {
        chmodSync(full, DIR_MODE);
        restrictTree(full);
      } else if ((lstatSync(full).mode & 0o777) !== FILE_MODE) {
        chmodSync(full, FILE_MODE);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err; // removed meanwhile
    }
  }
}

/** The wire port's password: read, or generated on first start (written whole, then linked in: concurrent starters agree). */
export function ensureDbPassword(dataDir: string): string {
  const file = path.join(dataDir, PASSWORD_FILE);
  if (!existsSync(file)) {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, randomBytes(32).toString("hex"), { mode: FILE_MODE });
    try {
      linkSync(tmp, file); // fails with EEXIST if another process won the race
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      unlinkSync(tmp);
    }
  }
  chmodSync(file, FILE_MODE);
  const password = readFileSync(file, "utf8").trim();
  if (!password) throw new Error(`${file} is empty: delete it and start again`);
  return password;
}

// Owners started by this process, by resolved data dir (survives module reloads in next dev).
const g = globalThis as typeof globalThis & { __synthexEmbeddedOwners?: Map<string, Promise<EmbeddedServer>> };
const owners = (g.__synthexEmbeddedOwners ??= new Map());

export async function ensureEmbeddedServer(options: EmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const dataDir = path.resolve(/*turbopackIgnore: true*/ options.dataDir ?? process.env.SYNTHEX_DATA_DIR ?? ".synthex");
  const mine = owners.get(dataDir);
  if (mine) {
    const server = await mine;
    return { url: server.url, owned: false, close: async () => {} };
  }
  const port = options.port ?? (process.env.SYNTHEX_DB_PORT ? Number(process.env.SYNTHEX_DB_PORT) : undefined);
  const attempt = acquire(dataDir, port, options.waitMs ?? 60_000, options.idleInTransactionTimeoutMs);
  owners.set(dataDir, attempt);
  try {
    const server = await attempt;
    if (!server.owned) owners.delete(dataDir);
    return server;
  } catch (err) {
    owners.delete(dataDir);
    throw err;
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** TCP connect only: the kernel accepts even while the owner's event loop is busy (e.g. an HNSW build). */
function portAnswers(port: number, host = HOST, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

function readLock(file: string): { info: LockInfo | null; raw: string | null; ageMs: number } {
  try {
    const raw = readFileSync(file, "utf8");
    const ageMs = Date.now() - statSync(file).mtimeMs;
    try {
      const info = JSON.parse(raw) as LockInfo;
      return { info: typeof info?.pid === "number" ? info : null, raw, ageMs };
    } catch {
      return { info: null, raw, ageMs };
    }
  } catch {
    return { info: null, raw: null, ageMs: 0 };
  }
}

function writeLock(file: string, info: LockInfo) {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w", FILE_MODE);
  try {
    writeSync(fd, JSON.stringify(info));
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file); // atomic replace: the lock never disappears while we own it
}

function createLockExclusive(file: string, info: LockInfo): boolean {
  let fd: number;
  try {
    fd = openSync(file, "wx", FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify(info));
  } finally {
    closeSync(fd);
  }
  return true;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Removes a stale lock, at most one process at a time (a second lock file guards the
 * check-and-unlink, so two newcomers can never both delete and recreate the lock).
 */
function removeStaleLock(lockFile: string, takeoverFile: string, staleRaw: string | null): void {
  const guard: LockInfo = { pid: process.pid, state: "starting", startedAt: new Date().toISOString() };
  if (!createLockExclusive(takeoverFile, guard)) {
    const other = readLock(takeoverFile);
    const abandoned = other.info ? !pidAlive(other.info.pid) : other.ageMs > 10_000;
    if (abandoned || other.ageMs > 30_000) {
      try {
        unlinkSync(takeoverFile);
      } catch {}
    }
    return; // someone else is taking over (or we cleared their leftovers): retry from the top
  }
  try {
    const now = readLock(lockFile);
    if (now.raw === staleRaw) {
      try {
        unlinkSync(lockFile);
      } catch {}
    }
  } finally {
    try {
      unlinkSync(takeoverFile);
    } catch {}
  }
}

async function acquire(
  dataDir: string,
  port: number | undefined,
  waitMs: number,
  idleInTransactionTimeoutMs: number | undefined,
): Promise<EmbeddedServer> {
  ensurePrivateDir(dataDir);
  const password = ensureDbPassword(dataDir);
  const lockFile = path.join(dataDir, LOCK_FILE);
  const takeoverFile = path.join(dataDir, TAKEOVER_FILE);
  const deadline = Date.now() + waitMs;
  let refusedSince: number | null = null;
  for (;;) {
    const info: LockInfo = { pid: process.pid, state: "starting", startedAt: new Date().toISOString() };
    if (createLockExclusive(lockFile, info)) return becomeOwner(dataDir, lockFile, info, port, password, idleInTransactionTimeoutMs);

    const { info: other, raw, ageMs } = readLock(lockFile);
    let stale = false;
    if (!other) {
      // Created but not written yet (or garbage): give the writer a moment.
      stale = raw !== null && ageMs > 5_000;
      if (raw === null) continue; // vanished meanwhile
    } else if (!pidAlive(other.pid)) {
      stale = true;
    } else if (other.state === "ready" && other.port) {
      if (await portAnswers(other.port, other.host)) {
        const url = embeddedUrl(other.port, password, other.host);
        return { url, owned: false, close: async () => {} };
      }
      refusedSince ??= Date.now();
      stale = Date.now() - refusedSince > 3_000; // alive pid that does not serve: a reused pid
    }
    if (stale) {
      removeStaleLock(lockFile, takeoverFile, raw);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `embedded database ${dataDir} is held by process ${other?.pid ?? "?"} (${other?.state ?? "unknown"}) ` +
          `and did not become available; if that process is gone, delete ${lockFile}`,
      );
    }
    await sleep(100);
  }
}

async function becomeOwner(
  dataDir: string,
  lockFile: string,
  info: LockInfo,
  port: number | undefined,
  password: string,
  idleInTransactionTimeoutMs: number | undefined,
): Promise<EmbeddedServer> {
  let db: PGlite | null = null;
  let wire: WireServer | null = null;
  const removeLock = () => {
    const { info: now } = readLock(lockFile);
    if (now?.pid === process.pid) {
      try {
        unlinkSync(lockFile);
      } catch {}
    }
  };
  const onExit = () => removeLock();
  process.on("exit", onExit);
  try {
    timingMark("embedded: lock taken, opening PGlite");
    db = await PGlite.create(path.join(dataDir, "pgdata"), { extensions: { vector } });
    timingMark("embedded: PGlite open");
    await db.exec("CREATE EXTENSION IF NOT EXISTS vector");
    timingMark("embedded: vector extension");
    restrictTree(dataDir);
    wire = await startWireServer(db, { host: HOST, port, password, idleInTransactionTimeoutMs });
    timingMark("embedded: wire server listening");
  } catch (err) {
    await db?.close().catch(() => {});
    process.off("exit", onExit);
    removeLock();
    throw err;
  }
  writeLock(lockFile, { ...info, state: "ready", port: wire.port, host: HOST });

  const openDb = db;
  const openWire = wire;
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      try {
        writeLock(lockFile, { ...info, state: "closing", port: openWire.port, host: HOST });
        await openWire.close();
        timingMark("embedded: wire server closed");
        await openDb.close();
        timingMark("embedded: PGlite closed");
        restrictTree(dataDir);
      } finally {
        removeLock();
        process.off("exit", onExit);
        owners.delete(dataDir);
      }
    })();
    return closing;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void close().finally(() => {
      // Nobody else handles it: behave like the default (terminate by that signal).
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return { url: embeddedUrl(openWire.port, password), owned: true, close };
}

/** For diagnostics and tests: the current lock content, if any. */
export function readOwnerLock(dataDir: string): LockInfo | null {
  const file = path.join(path.resolve(dataDir), LOCK_FILE);
  return existsSync(file) ? readLock(file).info : null;
}
