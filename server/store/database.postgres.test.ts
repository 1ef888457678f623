/**
 * Bad DATABASE_URLs and concurrent migrations on a real PostgreSQL (`TEST_DATABASE_URL`):
 * each fails with what to fix before anything is migrated; two migrators apply once.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { checkDatabase } from "./database-check";
import { applyMigrations, readMigrations, resolveMigrationsDir } from "./migrate";
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from "./test-db";

const adminUrl = testDatabaseUrl();
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
});

async function emptyDatabase(): Promise<TestDatabase> {
  const d = await createTestDatabase(adminUrl!, { empty: true });
  cleanup.push(d.drop);
  return d;
}

/** Connections here end by DROP DATABASE … WITH (FORCE) at the latest: an error event then is expected, not a test failure. */
const quiet = <T extends { on(event: "error", listener: () => void): unknown }>(c: T): T => (c.on("error", () => {}), c);

async function admin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = quiet(new pg.Client({ connectionString: url }));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function withCredentials(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  return u.toString();
}

function dbMigrate(url: string) {
  return spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "scripts/db-migrate.ts"], {
    env: { ...process.env, DATABASE_URL: url },
    encoding: "utf8",
    timeout: 120_000,
  });
}

describe.skipIf(!adminUrl)("a bad DATABASE_URL", () => {
  it("a wrong password says so, naming user, host and database but not the password", async () => {
    const wrong = withCredentials(adminUrl!, "synthex", "not-the-password-123");
    const err = await checkDatabase(wrong).then(
      () => new Error("connected with a wrong password"),
      (e: unknown) => e as Error,
    );
    expect(err.name).toBe("DatabaseSetupError");
    const u = new URL(adminUrl!);
    expect(err.message).toContain(`password authentication failed for synthex@127.0.0.1:${u.port}/`);
    expect(err.message).not.toContain("not-the-password-123");
    expect(err.message).not.toContain(decodeURIComponent(u.password));
  });

  it("an unreachable server says it cannot reach it", async () => {
    const u = new URL(adminUrl!);
    u.port = "1"; // nothing listens on port 1
    await expect(checkDatabase(u.toString())).rejects.toThrow(/cannot reach PostgreSQL at synthex@127\.0\.0\.1:1\/.*ECONNREFUSED/);
  });

  it("without pgvector enabled and no right to enable it: names the extension and how, and migrates nothing", { timeout: 180_000 }, async () => {
    const d = await emptyDatabase();
    const role = `synthex_limited_${d.name.slice(-6)}`;
    await admin(adminUrl!, async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD 'limited-pass-1'`);
      await c.query(`ALTER DATABASE "${d.name}" OWNER TO ${role}`);
    });
    cleanup.push(() => admin(adminUrl!, async (c) => void (await c.query(`DROP ROLE IF EXISTS ${role}`))));
    const url = withCredentials(d.url, role, "limited-pass-1");

    const migrate = dbMigrate(url);
    expect(migrate.status).toBe(1);
    expect(migrate.stderr).toMatch(/pgvector is installed on the server but not enabled in .*: run `CREATE EXTENSION vector;`/);
    expect(migrate.stderr).toMatch(/No migration was applied/);
    const tables = await admin(d.url, (c) => c.query(`SELECT to_regclass('public."_prisma_migrations"')::text AS t`));
    expect(tables.rows[0].t).toBeNull();

    // Enabled by a superuser, the same command migrates.
    await admin(d.url, (c) => c.query(`CREATE EXTENSION vector`));
    const again = dbMigrate(url);
    expect(again.stderr).toBe("");
    expect(again.stdout).toMatch(/DATABASE_URL: applied \d+, 0 were already applied/);
  });

  it("creates the extension itself when the user may (an empty database, a superuser)", async () => {
    const d = await emptyDatabase();
    expect((await checkDatabase(d.url)).pgvector).toMatch(/^0\.\d+\.\d+$/);
  });
});

describe.skipIf(!adminUrl)("migrations run by two servers at once", () => {
  it("one applies, the other waits and then finds everything applied", { timeout: 180_000 }, async () => {
    const d = await emptyDatabase();
    const dir = resolveMigrationsDir();
    const total = readMigrations(dir).length;
    const holder = quiet(new pg.Client({ connectionString: d.url }));
    await holder.connect();
    const pools = [quiet(new pg.Pool({ connectionString: d.url, max: 1 })), quiet(new pg.Pool({ connectionString: d.url, max: 1 }))];
    try {
      // Hold Prisma's migration lock so both migrators are queued behind it before either starts.
      await holder.query(`SELECT pg_advisory_lock(72707369)`);
      let settled = 0;
      const runs = pools.map((p) => applyMigrations(p, dir).finally(() => (settled += 1)));
      await new Promise((r) => setTimeout(r, 500));
      expect(settled).toBe(0);
      await holder.query(`SELECT pg_advisory_unlock(72707369)`);
      const results = await Promise.all(runs);
      const applied = results.map((r) => r.applied.length).sort((a, b) => a - b);
      expect(applied).toEqual([0, total]);
      expect(results.map((r) => r.alreadyApplied.length).sort((a, b) => a - b)).toEqual([0, total]);
      const rows = await holder.query<{ n: number }>(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`);
      expect(rows.rows[0]!.n).toBe(total);
    } finally {
      await holder.end();
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});
