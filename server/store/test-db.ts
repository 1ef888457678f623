/**
 * A private database for a Vitest file, migrated with the committed migrations. Nothing is shared
 * between test files (nor between two calls in one file).
 *
 * - Default: in-memory PGlite with pgvector, Prisma through pglite-prisma-adapter. PGlite's initdb
 *   dominates (~1.5-2 s on 2 cores): the first call in a file keeps a snapshot of the migrated
 *   data directory in memory and later calls start from it (~0.5 s).
 * - `TEST_DATABASE_URL` set (a Postgres with pgvector, e.g. from `shared/tools/postgres-pgvector`):
 *   every call gets its own database, created from a migrated template database
 *   (`CREATE DATABASE … TEMPLATE`, ~0.1 s), Prisma through `@prisma/adapter-pg` exactly as the
 *   app connects; it is dropped on close. The template is built once per set of migrations,
 *   under an advisory lock, so parallel Vitest workers wait for one another instead of racing.
 *
 * The tests never branch on which one they got: the differences live here and in `db.ts`.
 */
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PrismaPg } from "@prisma/adapter-pg";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client";
import { pgAdapterOptions } from "./prepared-statements";
import { applyMigrations, readMigrations, resolveMigrationsDir, migrationChecksum, type SqlClient } from "./migrate";

export type TestDialect = "pglite" | "postgres";

export interface TestDb {
  db: PrismaClient;
  /** Which database the tests got (for messages; tests must not branch on it). */
  dialect: TestDialect;
  /** Raw SQL on the same database, outside Prisma. */
  sql: SqlClient;
  /** Its connection URL, for other processes (Postgres only: an in-memory PGlite has none). */
  url: string | null;
  /** A second private database with the same contents, byte for byte (same ids). */
  clone(): Promise<TestDb>;
  close(): Promise<void>;
}

/** The Postgres the DB-backed tests run against, when set (`TEST_DATABASE_URL`). */
export function testDatabaseUrl(): string | null {
  return process.env.TEST_DATABASE_URL?.trim() || null;
}

export async function createTestDb(): Promise<TestDb> {
  const url = testDatabaseUrl();
  return url ? createPostgresTestDb(url) : createPGliteTestDb();
}

// ---------------------------------------------------------------- PGlite

let snapshot: Promise<Blob> | null = null;

async function freshMigrated(): Promise<PGlite> {
  const pglite = await PGlite.create({ extensions: { vector } });
  await applyMigrations(pglite, resolveMigrationsDir());
  return pglite;
}

async function createPGliteTestDb(from?: Blob): Promise<TestDb> {
  let pglite: PGlite;
  if (from) {
    pglite = await PGlite.create({ extensions: { vector }, loadDataDir: from });
  } else if (!snapshot) {
    pglite = await freshMigrated();
    const dump = pglite.dumpDataDir("none");
    snapshot = dump;
    dump.catch(() => {
      if (snapshot === dump) snapshot = null;
    });
    await dump;
  } else {
    pglite = await PGlite.create({ extensions: { vector }, loadDataDir: await snapshot });
  }
  const db = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  let closed = false;
  return {
    db,
    dialect: "pglite",
    sql: pglite,
    url: null,
    clone: async () => createPGliteTestDb((await pglite.dumpDataDir("none")) as Blob),
    async close() {
      if (closed) return;
      closed = true;
      await db.$disconnect();
      await pglite.close();
    },
  };
}

// ---------------------------------------------------------------- Postgres

/** `url` with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Key of the advisory lock under which the template is built. */
const TEMPLATE_LOCK = 72707370;

/** The migrated template for the current migrations (built once, reused by every test file). */
async function ensureTemplate(adminUrl: string): Promise<string> {
  const dir = resolveMigrationsDir();
  const fingerprint = migrationChecksum(readMigrations(dir).map((m) => `${m.name}:${m.checksum}`).join("\n")).slice(0, 16);
  const name = `synthex_test_tpl_${fingerprint}`;
  return withAdmin(adminUrl, async (admin) => {
    await admin.query(`SELECT pg_advisory_lock(${TEMPLATE_LOCK})`);
    try {
      const { rows } = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name]);
      if (rows.length > 0) return name;
      // Built under another name and renamed when complete: a half-built template is never used.
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(building)} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${quoteIdent(building)}`);
      const pool = new pg.Pool({ connectionString: withDatabase(adminUrl, building), max: 1 });
      // An idle connection ended by the server must not become an uncaught error of the test run.
      pool.on("error", () => {});
      try {
        await applyMigrations(pool, dir);
      } finally {
        await pool.end();
      }
      await admin.query(`ALTER DATABASE ${quoteIdent(building)} RENAME TO ${quoteIdent(name)}`);
      return name;
    } finally {
      await admin.query(`SELECT pg_advisory_unlock(${TEMPLATE_LOCK})`).catch(() => {});
    }
  });
}

export interface TestDatabase {
  /** Connection URL of the new database. */
  url: string;
  name: string;
  /** Drops it (closing whatever is still connected). */
  drop(): Promise<void>;
}

/**
 * A new migrated database on the Postgres at `adminUrl` (`TEST_DATABASE_URL`), for tests that
 * need a URL rather than a client (the CLI, `next start`). `from` copies an existing database;
 * `empty` gives one with no schema and no extension (what a new managed database looks like).
 */
export async function createTestDatabase(adminUrl: string, options: { from?: string; empty?: boolean } = {}): Promise<TestDatabase> {
  const { from } = options;
  const template = from ?? (options.empty ? "template0" : await ensureTemplate(adminUrl));
  const name = `synthex_test_${randomBytes(6).toString("hex")}`;
  await withAdmin(adminUrl, async (admin) => {
    if (from) {
      // CREATE DATABASE … TEMPLATE needs the source without other sessions: the source's pool
      // reconnects on its next query.
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [from]);
    }
    await admin.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`);
  });
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: () => withAdmin(adminUrl, async (admin) => void (await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`))),
  };
}

async function createPostgresTestDb(adminUrl: string, from?: string): Promise<TestDb> {
  const database = await createTestDatabase(adminUrl, { from });
  const pool = new pg.Pool({ connectionString: database.url, max: 10 });
  // A connection ended by the server (a clone terminates them) is dropped; the pool opens another.
  pool.on("error", () => {});
  const db = new PrismaClient({ adapter: new PrismaPg(pool, pgAdapterOptions(false)) });
  let closed = false;
  return {
    db,
    dialect: "postgres",
    sql: pool,
    url: database.url,
    clone: () => createPostgresTestDb(adminUrl, database.name),
    async close() {
      if (closed) return;
      closed = true;
      await db.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      await database.drop();
    },
  };
}
