/**
 * The database-backed set of `vitest.postgres.config.ts` is an explicit list: every test file
 * that opens a test database (`createTestDb`) must be in it, or named as PGlite-only.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { databaseTests, pgliteOnlyTests } from "../vitest.postgres.config";

const ROOT = path.resolve(import.meta.dirname, "..");

function testFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (!["node_modules", "generated"].includes(e.name)) testFiles(rel, out);
    } else if (/\.test\.tsx?$/.test(e.name)) out.push(rel);
  }
  return out;
}

describe("the database-backed test set", () => {
  it("lists every file that opens a test database", () => {
    const usesDb = ["server", "inngest", "components", "scripts"]
      .flatMap((d) => testFiles(d))
      .filter((f) => !f.endsWith(".postgres.test.ts") && f !== "scripts/database-tests.test.ts")
      .filter((f) => /\bcreateTestDb\b/.test(readFileSync(path.join(ROOT, f), "utf8")));
    expect(usesDb.length).toBeGreaterThan(10);
    const missing = usesDb.filter((f) => !databaseTests.includes(f) && !pgliteOnlyTests.includes(f));
    expect(missing).toEqual([]);
  });
});
