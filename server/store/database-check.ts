/**
 * What can be wrong with a `DATABASE_URL`, said before anything is migrated: the server cannot be
 * reached, the password is wrong, the database does not exist, pgvector is missing. Messages name
 * the user, host, port and database, never the password.
 */
import pg from "pg";

/** `user@host:port/database` of a URL, without the password. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    const user = decodeURIComponent(u.username) || "(default user)";
    return `${user}@${u.hostname}:${u.port || "5432"}${u.pathname || "/"}`;
  } catch {
    return "(an unparseable URL)";
  }
}

export class DatabaseSetupError extends Error {
  override name = "DatabaseSetupError";
}

/** A driver or server error on connecting, as a sentence saying what to fix. */
export function explainConnectionError(err: unknown, url: string, variable = "DATABASE_URL"): Error {
  const where = describeDatabaseUrl(url);
  const e = err as { code?: string; message?: string };
  const detail = e?.message ?? String(err);
  switch (e?.code) {
    case "28P01":
      return new DatabaseSetupError(`${variable}: password authentication failed for ${where}: check the user and password in ${variable}.`);
    case "28000":
      return new DatabaseSetupError(`${variable}: the server refused ${where} (${detail}): check pg_hba.conf or the user in ${variable}.`);
    case "3D000":
      return new DatabaseSetupError(`${variable}: the database in ${where} does not exist: create it (CREATE DATABASE …) or fix the name in ${variable}.`);
    case "ECONNREFUSED":
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
      return new DatabaseSetupError(`${variable}: cannot reach PostgreSQL at ${where} (${e.code}): is the server running and the host and port right?`);
    default:
      return new DatabaseSetupError(`${variable}: cannot use ${where}: ${detail}`);
  }
}

/**
 * Connects once and makes sure the `vector` extension is there (creating it when the server has
 * it and the user may). Throws a `DatabaseSetupError` otherwise. Run before any migration.
 */
export async function checkDatabase(url: string, variable = "DATABASE_URL"): Promise<{ pgvector: string }> {
  const where = describeDatabaseUrl(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15_000 });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw explainConnectionError(err, url, variable);
  }
  try {
    const installed = await client.query<{ v: string }>(`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`);
    if (installed.rows[0]) return { pgvector: installed.rows[0].v };
    const available = await client.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
    if (available.rows.length === 0) {
      throw new DatabaseSetupError(
        `${variable}: the PostgreSQL server of ${where} has no pgvector (the \`vector\` extension is not installed). ` +
          `Synthex stores embeddings in pgvector: install it on the server (https://github.com/pgvector/pgvector#installation, ` +
          `e.g. \`apt install postgresql-<version>-pgvector\`) or use a managed Postgres that ships it (Neon, Supabase, RDS). ` +
          `No migration was applied.`,
      );
    }
    try {
      await client.query(`CREATE EXTENSION IF NOT EXISTS vector`);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "42501") {
        throw new DatabaseSetupError(
          `${variable}: pgvector is installed on the server but not enabled in ${where}, and this user may not enable it: ` +
            `run \`CREATE EXTENSION vector;\` in that database as a superuser (on Neon, Supabase or RDS, as the database owner), then start again. ` +
            `No migration was applied.`,
        );
      }
      throw err;
    }
    const created = await client.query<{ v: string }>(`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`);
    return { pgvector: created.rows[0]?.v ?? "unknown" };
  } finally {
    await client.end().catch(() => {});
  }
}
