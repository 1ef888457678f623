/**
 * The environment of a compat test, set before it imports anything that reads it: a data directory
 * of its own, the Mem0 client's telemetry off (and its home inside that directory), and PostgreSQL
 * when TEST_DATABASE_URL is set (vitest.postgres.config.ts: a database of its own), else embedded.
 * `cleanup` drops that database and removes the directory.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createTestDatabase } from "@/server/store/test-db";

export async function compatTestEnv(name: string) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `synthex-${name}-`));
  process.env.SYNTHEX_DATA_DIR = dataDir;
  process.env.MEM0_TELEMETRY = "false";
  process.env.MEM0_DIR = path.join(dataDir, "mem0-home");
  const adminUrl = process.env.TEST_DATABASE_URL?.trim();
  const pgDatabase = adminUrl ? await createTestDatabase(adminUrl) : null;
  if (pgDatabase) process.env.DATABASE_URL = pgDatabase.url;
  else delete process.env.DATABASE_URL;
  return {
    dataDir,
    async cleanup() {
      await pgDatabase?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
