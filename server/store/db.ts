/**
 * The one module that decides which database the app talks to. Nothing else knows.
 *
 * - `DATABASE_URL` set: that Postgres (pgvector required).
 * - unset: the embedded PGlite database in SYNTHEX_DATA_DIR (default `.synthex`), owned by
 *   this process or by another one found through its lock file (see embedded-server.ts).
 *
 * Either way the app connects with `pg` through `@prisma/adapter-pg`, and committed
 * migrations are applied once per process before the first client is handed out.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client";
import { ensureEmbeddedServer, type EmbeddedServer } from "./embedded-server";
import { applyMigrations, resolveMigrationsDir } from "./migrate";

export type Db = PrismaClient;

interface DbState {
  prisma: PrismaClient;
  pool: pg.Pool;
  url: string;
  /** Set in embedded mode (owned or found). */
  embedded: EmbeddedServer | null;
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
  const pool = new pg.Pool({ connectionString: url, max: embedded ? 4 : 10 });
  pool.on("error", (err) => console.error("[synthex db] idle connection error:", err.message));
  try {
    await applyMigrations(pool, resolveMigrationsDir());
  } catch (err) {
    await pool.end().catch(() => {});
    if (embedded?.owned) await embedded.close().catch(() => {});
    throw err;
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return { prisma, pool, url, embedded };
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

/** The process-wide Prisma client (migrations applied). */
export async function getDb(): Promise<Db> {
  return (await state()).prisma;
}

/** The `pg` pool under the Prisma client, for raw SQL Prisma cannot express (vector search, FTS). */
export async function getPool(): Promise<pg.Pool> {
  return (await state()).pool;
}

/** The URL in use (embedded: the loopback URL of the owner). */
export async function getDatabaseUrl(): Promise<string> {
  return (await state()).url;
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
