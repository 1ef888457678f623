/**
 * Applies `prisma/migrations/<name>/migration.sql` in order and records them in
 * `_prisma_migrations` exactly as `prisma migrate deploy` does (same table, sha256 checksum
 * of migration.sql, one row per applied migration, applied_steps_count = 1), so the Prisma
 * CLI and schema engine see the same history. Each migration runs in its own transaction
 * together with its bookkeeping row; the whole run holds Prisma's migration advisory lock.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Anything with `query(sql, params)`: a pg Client, a pg Pool, a PGlite instance. */
export interface SqlClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

export interface Migration {
  /** Directory name, e.g. `20261122043800_init`. */
  name: string;
  sql: string;
  /** sha256 hex of migration.sql, as Prisma stores it. */
  checksum: string;
}

export interface ApplyResult {
  applied: string[];
  alreadyApplied: string[];
}

export interface ApplyOptions {
  log?: (message: string) => void;
}

/** The key `prisma migrate` locks with (pg_advisory_lock(72707369)). */
const PRISMA_MIGRATE_LOCK = 72707369;

// Prisma's definition of the table (sql-schema-connector, postgres flavour).
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export function migrationChecksum(script: string | Buffer): string {
  return createHash("sha256").update(script).digest("hex");
}

/** Prisma accepts a checksum computed with either line-ending convention. */
function checksumMatches(migration: Migration, stored: string): boolean {
  if (migration.checksum === stored) return true;
  const lf = migration.sql.replace(/\r\n/g, "\n");
  return migrationChecksum(lf) === stored || migrationChecksum(lf.replace(/\n/g, "\r\n")) === stored;
}

/**
 * The committed migrations directory: env SYNTHEX_MIGRATIONS_DIR, else `prisma/migrations`
 * under the working directory, else next to this source file (`../../prisma/migrations`).
 */
export function resolveMigrationsDir(): string {
  if (process.env.SYNTHEX_MIGRATIONS_DIR) return path.resolve(process.env.SYNTHEX_MIGRATIONS_DIR);
  const fromCwd = path.resolve("prisma/migrations");
  if (existsSync(fromCwd)) return fromCwd;
  try {
    const fromSource = fileURLToPath(new URL("../../prisma/migrations", import.meta.url));
    if (existsSync(fromSource)) return fromSource;
  } catch {
    // bundled: import.meta.url may not be a file URL
  }
  return fromCwd;
}

/** Migrations in the order Prisma applies them (directory name order). */
export function readMigrations(migrationsDir = "prisma/migrations"): Migration[] {
  const dir = path.resolve(migrationsDir);
  if (!existsSync(dir)) throw new Error(`migrations directory not found: ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b))
    .flatMap((name) => {
      const file = path.join(dir, name, "migration.sql");
      if (!existsSync(file)) return [];
      const bytes = readFileSync(file);
      return [{ name, sql: bytes.toString("utf8"), checksum: migrationChecksum(bytes) }];
    });
}

interface Session {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  /** Runs a multi-statement script. */
  script(sql: string): Promise<void>;
  release(): Promise<void>;
}

/** One connection for the whole run: a Pool hands out a client, PGlite runs scripts with exec. */
type PoolLike = SqlClient & {
  connect(): Promise<SqlClient & { release(): void }>;
  totalCount: number;
  idleCount: number;
};
type PGliteLike = SqlClient & { exec(sql: string): Promise<unknown>; transaction: unknown };

/** One connection for the whole run: a Pool hands out a client, PGlite runs scripts with exec. */
async function openSession(client: SqlClient): Promise<Session> {
  if ("totalCount" in client && "idleCount" in client && typeof (client as PoolLike).connect === "function") {
    const conn = await (client as PoolLike).connect(); // pg.Pool -> PoolClient
    return {
      query: (sql, params) => conn.query(sql, params),
      script: async (sql) => void (await conn.query(sql)),
      release: async () => conn.release(),
    };
  }
  if ("exec" in client && "transaction" in client && typeof (client as PGliteLike).exec === "function") {
    // PGlite: query() is one statement (extended protocol); exec() runs scripts.
    const db = client as PGliteLike;
    return {
      query: (sql, params) => db.query(sql, params),
      script: async (sql) => void (await db.exec(sql)),
      release: async () => {},
    };
  }
  // pg.Client (a query without parameters uses the simple protocol: multi-statement is fine).
  return {
    query: (sql, params) => client.query(sql, params),
    script: async (sql) => void (await client.query(sql)),
    release: async () => {},
  };
}

async function inTransaction<T>(session: Session, fn: () => Promise<T>): Promise<T> {
  await session.query("BEGIN");
  try {
    await session.query(`SELECT pg_advisory_xact_lock(${PRISMA_MIGRATE_LOCK})`);
    const result = await fn();
    await session.query("COMMIT");
    return result;
  } catch (err) {
    await session.query("ROLLBACK").catch(() => {});
    throw err;
  }
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | string | null;
  rolled_back_at: Date | string | null;
}

async function readApplied(session: Session): Promise<AppliedRow[]> {
  const { rows } = await session.query(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );
  return rows as AppliedRow[];
}

/**
 * Applies pending migrations from `migrationsDir`. Refuses (throws, applying nothing) when an
 * applied migration's file changed, or when the database has a failed migration Prisma would
 * also refuse to go past. A migration that fails is rolled back entirely and not recorded.
 */
export async function applyMigrations(
  client: SqlClient,
  migrationsDir = "prisma/migrations",
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const migrations = readMigrations(migrationsDir);
  const session = await openSession(client);
  // Every start of the CLI, a script or the server comes here: when the history already records
  // each migration (finished, same checksum) and nothing failed, two reads answer it, without the
  // lock and a transaction per migration (~90 round trips for 21 migrations).
  const upToDate = await allApplied(session, migrations).catch(async (err: unknown) => {
    await session.release();
    throw err;
  });
  if (upToDate) {
    await session.release();
    return { applied: [], alreadyApplied: migrations.map((m) => m.name) };
  }
  // The whole run holds Prisma's migration lock: a second server starting at the same time waits
  // here, then finds everything applied (one applies, the other waits).
  let locked = false;
  try {
    await session.query(`SELECT pg_advisory_lock(${PRISMA_MIGRATE_LOCK})`);
    locked = true;
    const existing = await inTransaction(session, async () => {
      await session.query(CREATE_MIGRATIONS_TABLE);
      return readApplied(session);
    });
    checkHistory(migrations, existing);
    const appliedNow: string[] = [];
    const alreadyApplied: string[] = [];
    for (const migration of migrations) {
      const done = await inTransaction(session, async () => {
        // Re-check under the lock: another process may have applied it meanwhile.
        const rows = (await readApplied(session)).filter((r) => r.migration_name === migration.name);
        checkHistory([migration], rows);
        if (rows.some((r) => r.finished_at !== null && r.rolled_back_at === null)) return false;
        const id = randomUUID();
        await session.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), 0)`,
          [id, migration.checksum, migration.name],
        );
        try {
          await session.script(migration.sql);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          throw new Error(`migration ${migration.name} failed (rolled back, nothing recorded): ${message}`, {
            cause: err,
          });
        }
        await session.query(
          `UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1`,
          [id],
        );
        return true;
      });
      if (done) {
        appliedNow.push(migration.name);
        options.log?.(`applied ${migration.name}`);
      } else alreadyApplied.push(migration.name);
    }
    return { applied: appliedNow, alreadyApplied };
  } finally {
    if (locked) await session.query(`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_LOCK})`).catch(() => {});
    await session.release();
  }
}

/** True when `_prisma_migrations` has every migration finished with its checksum and no failed row. */
async function allApplied(session: Session, migrations: Migration[]): Promise<boolean> {
  const { rows } = await session.query(`SELECT to_regclass('public."_prisma_migrations"') IS NOT NULL AS present`);
  if (!(rows[0] as { present: boolean } | undefined)?.present) return false;
  const applied = await readApplied(session);
  if (applied.some((r) => r.finished_at === null && r.rolled_back_at === null)) return false;
  const done = new Map(applied.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r]));
  return migrations.every((m) => {
    const row = done.get(m.name);
    return row !== undefined && checksumMatches(m, row.checksum);
  });
}

function checkHistory(migrations: Migration[], rows: AppliedRow[]) {
  const failed = rows.filter((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed.length > 0) {
    const names = [...new Set(failed.map((r) => r.migration_name))].join(", ");
    throw new Error(
      `the database has failed migrations (${names}) in _prisma_migrations: resolve them ` +
        `(fix the database, then mark them rolled back) before applying more`,
    );
  }
  const byName = new Map(migrations.map((m) => [m.name, m]));
  const edited = rows
    .filter((r) => r.finished_at !== null && r.rolled_back_at === null)
    .filter((r) => {
      const m = byName.get(r.migration_name);
      return m !== undefined && !checksumMatches(m, r.checksum);
    })
    .map((r) => r.migration_name);
  if (edited.length > 0) {
    throw new Error(
      `refusing to migrate: migration ${[...new Set(edited)].join(", ")} was modified after it was applied ` +
        `(checksum of migration.sql differs from _prisma_migrations). Restore the file and put the change in a new ` +
        `migration (npm run db:diff -- <name>).`,
    );
  }
}
