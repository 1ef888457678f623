/**
 * The hello world through the CLI against a real PostgreSQL with pgvector (`TEST_DATABASE_URL`,
 * run by `vitest.postgres.config.ts`): a new, empty database is migrated by the first command,
 * and the run's post-run indexing finishes before the CLI closes its pool.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from "../store/test-db";
import { chatgptExport } from "./cli-fixtures";

const adminUrl = testDatabaseUrl();
const dir = mkdtempSync(path.join(tmpdir(), "synthex-cli-pg-"));
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase(adminUrl!, { empty: true });
});
afterAll(async () => {
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

function synthex(...args: string[]) {
  const result = spawnSync(process.execPath, [path.resolve("bin/synthex.mjs"), ...args], {
    cwd: process.cwd(),
    // No data directory is touched with DATABASE_URL set: point it somewhere empty to prove it.
    env: { ...process.env, SYNTHEX_DATA_DIR: path.join(dir, "unused-data"), DATABASE_URL: database.url },
    encoding: "utf8",
    timeout: 300_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe.skipIf(!adminUrl)("the CLI on PostgreSQL", () => {
  it("init --from migrates an empty database; run indexes before exiting; search finds it", { timeout: 1_200_000 }, async () => {
    const file = path.join(dir, "conversations.json");
    writeFileSync(file, JSON.stringify(chatgptExport()));

    const init = synthex("init", "personal-memory", "--from", file);
    expect(init.err).toBe("");
    expect(init.code).toBe(0);
    expect(init.out).toMatch(/3 new/);

    const run = synthex("run");
    expect(run.err).not.toMatch(/Cannot use a pool|afterRun/);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/: completed\. /);

    // Indexing finished before the process closed the pool: the embeddings are there.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Embedding"`);
      expect(rows[0]!.n).toBeGreaterThan(0);
      const runs = await client.query<{ status: string }>(`SELECT status FROM "Run"`);
      expect(runs.rows.map((r) => r.status)).toEqual(["completed"]);
    } finally {
      await client.end();
    }

    const semantic = synthex("search", "zebra striped kayak on the lake", "--mode", "semantic", "--json");
    expect(semantic.code).toBe(0);
    const hits = JSON.parse(semantic.out).hits as Array<{ content: string }>;
    expect(hits[0]!.content).toContain("kayak");
  });
});
