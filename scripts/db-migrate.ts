/**
 * `npm run db:migrate`: applies committed migrations to DATABASE_URL, or to the embedded
 * database (through its owner process if one is running, else by owning it for the duration).
 */
import pg from "pg";
import { checkDatabase } from "../server/store/database-check";
import { resolveDatabaseUrl } from "../server/store/db";
import { applyMigrations, resolveMigrationsDir } from "../server/store/migrate";

async function main() {
  const { url, embedded } = await resolveDatabaseUrl();
  const where = embedded ? `embedded database (${embedded.owned ? "opened here" : "served by another process"})` : "DATABASE_URL";
  if (!embedded) await checkDatabase(url);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { applied, alreadyApplied } = await applyMigrations(pool, resolveMigrationsDir(), {
      log: (line) => console.log(line),
    });
    console.log(
      applied.length === 0
        ? `${where}: up to date (${alreadyApplied.length} migrations)`
        : `${where}: applied ${applied.length}, ${alreadyApplied.length} were already applied`,
    );
  } finally {
    await pool.end();
    await embedded?.close();
  }
}

main().catch((err) => {
  console.error("db:migrate failed:", err instanceof Error ? err.message : err);
  process.exit(1);
});
