/**
 * The one module that decides which database the app talks to. Nothing else knows.
 *
 * - `DATABASE_URL` set: that Postgres (pgvector required).
 * - unset: the embedded PGlite database in SYNTHEX_DATA_DIR (default `.synthex`), owned by
 *   this process or by another one found through its lock file (see embedded-server.ts).
 *
 * Either way the app connects with `pg` through `@prisma/adapter-pg`. Migrations are not applied
 * here (this module is on every request's path, and the migration runner reads prisma/migrations
 * from disk, which would make `next build` trace the whole project): `npm start`, the CLI and the
 * scripts apply them first through `openMigratedDb` (server/store/runtime-env.ts).
 */
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client";
import { explainConnectionError } from "./database-check";
import { ensureEmbeddedServer, type EmbeddedServer } from "./embedded-server";
import { pgAdapterOptions } from "./prepared-statements";

import type { Db } from "../core/db";

interface DbState {
  prisma: PrismaClient;
  pool: pg.Pool;
  url: string;
  /** Set in embedded mode (owned or found). */
  embedded: EmbeddedServer | null;
  /** The schema check, once it passed. */
  schema?: Promise<void>;
}

const g = globalThis as typeof globalThis & { __synthexDb?: Promise<DbState> };

/** Where the database is: DATABASE_URL, else the embedded server's URL (starting it if nobody serves it). */
export async function resolveDatabaseUrl(): Promise<{ url: string; embedded: EmbeddedServer | null }> {
  const fromEnv = process.env.DATABASE_URL?.trim();
  if (fromEnv) return { url: fromEnv, embedded: null };
  const embedded = await ensureEmbeddedServer();
  return { url: embedded.url, embedded };
}

async function open(): Promise<DbState> {
  const { url, embedded } = await resolveDatabaseUrl();
  const pool = new pg.Pool({ connectionString: url, max: poolSize(Boolean(embedded)) });
  pool.on("error", (err) => console.error("[synthex db] idle connection error:", err.message));
  // Under load a transaction waits for a connection (and the embedded owner for its turn) longer
  // than Prisma's 2 s default: slower, never refused. SYNTHEX_TX_WAIT_MS / SYNTHEX_TX_TIMEOUT_MS.
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, pgAdapterOptions(Boolean(embedded))), transactionOptions: { maxWait: envMs("SYNTHEX_TX_WAIT_MS", 60_000), timeout: envMs("SYNTHEX_TX_TIMEOUT_MS", 60_000) } });
  return { prisma, pool, url, embedded };
}

function envMs(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number of milliseconds (got "${raw}").`);
  return n;
}

/** Connections per process: SYNTHEX_DB_POOL, else 4 on the embedded database (one owner answers them in turn) and 10 on PostgreSQL. */
function poolSize(embedded: boolean): number {
  const raw = process.env.SYNTHEX_DB_POOL?.trim();
  if (!raw) return embedded ? 4 : 10;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 200) throw new Error(`SYNTHEX_DB_POOL must be a whole number of connections from 1 to 200 (got "${raw}").`);
  return n;
}

function state(): Promise<DbState> {
  if (!g.__synthexDb) {
    const opening = open();
    g.__synthexDb = opening;
    // A failed open is not cached: the next call tries again.
    opening.catch(() => {
      if (g.__synthexDb === opening) g.__synthexDb = undefined;
    });
  }
  return g.__synthexDb;
}

/** The process-wide Prisma client (the schema must exist: see `requireSchema`). */
export async function getDb(): Promise<Db> {
  const s = await state();
  if (!s.schema) {
    const checking = requireSchema(s.pool, s.embedded ? undefined : s.url);
    s.schema = checking;
    // Not cached when it fails: migrating and calling again succeeds.
    checking.catch(() => {
      if (s.schema === checking) s.schema = undefined;
    });
  }
  await s.schema;
  return s.prisma;
}

/** The `pg` pool under the Prisma client, for raw SQL Prisma cannot express (vector search, FTS). */
export async function getPool(): Promise<pg.Pool> {
  return (await state()).pool;
}

/** True when the database is the embedded PGlite one (DATABASE_URL unset). */
export async function isEmbeddedDatabase(): Promise<boolean> {
  return (await state()).embedded !== null;
}

/** The URL in use (embedded: the loopback URL of the owner). */
export async function getDatabaseUrl(): Promise<string> {
  return (await state()).url;
}

/**
 * Fails with what to do when the database has no schema yet (the server was started without
 * `npm start`, which migrates first). One query per process.
 */
export async function requireSchema(pool: pg.Pool, url?: string): Promise<void> {
  const { rows } = await pool
    .query<{ table: string | null }>(`SELECT to_regclass('public."_prisma_migrations"')::text AS table`)
    .catch((err: unknown) => {
      throw url ? explainConnectionError(err, url) : err;
    });
  if (!rows[0]?.table) {
    throw new Error("The database has no Synthex schema yet: start the app with `npm start` (it migrates first) or run `npm run db:migrate`.");
  }
}

/** Disconnects and, if this process owns the embedded database, closes it. */
export async function closeDb(): Promise<void> {
  const current = g.__synthexDb;
  if (!current) return;
  g.__synthexDb = undefined;
  let s: DbState;
  try {
    s = await current;
  } catch {
    return;
  }
  await s.prisma.$disconnect().catch(() => {});
  await s.pool.end().catch(() => {});
  if (s.embedded?.owned) await s.embedded.close();
}
