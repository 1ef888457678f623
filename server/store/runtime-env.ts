/**
 * Process setup shared by `npm start`, the CLI and scripts: .env, the local auth secret, the database
 * (owning the embedded one if nobody does), migrations. Leaves DATABASE_URL set for child processes
 * (and, on the embedded database, named statements off for them).
 */
import { existsSync } from "node:fs";
import { ensureAuthSecret, requireEnvironmentSecrets } from "../auth/local-secret";
import type { Pool } from "pg";
import type { Db } from "../core/db";
import { checkDatabase } from "./database-check";
import { closeDb, getDatabaseUrl, getDb, getPool, isEmbeddedDatabase } from "./db";
import { applyMigrations, resolveMigrationsDir } from "./migrate";
import { timingMark } from "../core/timing";

export function dataDir(): string {
  return process.env.SYNTHEX_DATA_DIR ?? ".synthex";
}

export async function prepareRuntimeEnv(): Promise<{ url: string; close(): Promise<void> }> {
  if (existsSync(".env")) process.loadEnvFile(".env");
  // A shared database (DATABASE_URL): secrets from the environment, nothing in a data directory.
  requireEnvironmentSecrets();
  process.env.NEXTAUTH_SECRET = ensureAuthSecret(dataDir());
  await openMigratedDb(); // opens (or finds) the database and applies migrations
  const url = await getDatabaseUrl();
  process.env.DATABASE_URL = url;
  // Child processes (the app servers) reach the embedded database through DATABASE_URL as if it
  // were a PostgreSQL server; its connections share one PGlite session, where two connections
  // preparing the same statement name collide (server/store/prepared-statements.ts).
  if (await isEmbeddedDatabase()) process.env.SYNTHEX_DB_PREPARED = "off";
  return { url, close: closeDb };
}

/**
 * The process-wide client after applying committed migrations (once per process). For `npm start`,
 * the CLI, scripts and benches; the Next server itself only checks that the schema exists.
 */
export async function openMigratedDb(): Promise<Db> {
  const pool = await getPool();
  timingMark("pool and Prisma client constructed");
  let migrating = migrated.get(pool);
  if (!migrating) {
    // A DATABASE_URL is checked first (reachable, password, pgvector), so a bad one fails with
    // what to fix before any migration runs.
    const check = (await isEmbeddedDatabase()) ? Promise.resolve() : checkDatabase(await getDatabaseUrl()).then(() => undefined);
    migrating = check.then(() => applyMigrations(pool, resolveMigrationsDir())).then(() => undefined);
    migrated.set(pool, migrating);
    migrating.catch(() => migrated.delete(pool));
  }
  await migrating;
  timingMark("migrations checked");
  const db = await getDb();
  timingMark("schema checked");
  return db;
}

/** Per pool: a reopened database (a new pool) is migrated again. */
const migrated = new WeakMap<Pool, Promise<void>>();
