/**
 * `synthex eval … --template a,b,c` under a slow database and with one template failing (issue 48
 * item 5): no result is lost. The database is made slow (or made to refuse one template's records)
 * by a trigger in the embedded Postgres the spawned commands use, not by replacing any of our code.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { locomoFixture } from "../eval/testing/locomo-fixture";
import { closeDb } from "../store/db";
import { openMigratedDb } from "../store/runtime-env";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-eval-scale-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, "tiny-locomo.json");
writeFileSync(file, JSON.stringify(locomoFixture()));

function synthex(data: string, env: Record<string, string>, ...args: string[]) {
  const result = spawnSync(process.execPath, [path.resolve("bin/synthex.mjs"), ...args], {
    cwd: process.cwd(),
    env: { ...process.env, SYNTHEX_DATA_DIR: data, DATABASE_URL: "", ...env },
    encoding: "utf8",
    timeout: 400_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** Runs SQL on the embedded database of `data` (created and migrated first), from this process. */
async function onDatabase(data: string, sql: string[]) {
  const saved = { dir: process.env.SYNTHEX_DATA_DIR, url: process.env.DATABASE_URL };
  process.env.SYNTHEX_DATA_DIR = data;
  process.env.DATABASE_URL = "";
  try {
    const db = await openMigratedDb();
    for (const statement of sql) await db.$executeRawUnsafe(statement);
  } finally {
    await closeDb();
    for (const [key, value] of [["SYNTHEX_DATA_DIR", saved.dir], ["DATABASE_URL", saved.url]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

type Result = { pipeline: string; status: string; id: string | null; questions?: number; metrics?: Record<string, number>; error?: string };

const TEMPLATES = ["bm25-sessions", "memex", "mem0"];

describe("synthex eval: several templates in one command", () => {
  it("loses none with the database made slow: every computed record's insert waits, transactions may last 1 s", async () => {
    const data = path.join(dir, "slow");
    // 15 ms per computed record: a facts batch's records take seconds to write, longer than the
    // 1 s any interactive transaction may last here (SYNTHEX_TX_TIMEOUT_MS).
    await onDatabase(data, [
      `CREATE FUNCTION slow_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.audit IS NOT NULL THEN PERFORM pg_sleep(0.015); END IF; RETURN NEW; END $$`,
      `CREATE TRIGGER slow_record BEFORE INSERT ON "Record" FOR EACH ROW EXECUTE FUNCTION slow_record()`,
    ]);
    const json = synthex(data, { SYNTHEX_TX_TIMEOUT_MS: "1000" }, "eval", "locomo", "--data", file, "--template", TEMPLATES.join(","), "--json");
    expect(json.err).not.toMatch(/expired transaction/);
    expect(json.code).toBe(0);
    const results = JSON.parse(json.out) as Result[];
    expect(results.map((r) => [r.pipeline, r.status, r.questions])).toEqual(TEMPLATES.map((t) => [t, "completed", 8]));
    for (const r of results) expect(r.metrics!["session_hit@5"]).toBeGreaterThan(0);
  }, 600_000);

  it("one failed template leaves the others' results intact, named in --json and in the table, and the command fails", async () => {
    const data = path.join(dir, "refusing");
    // The database refuses the computed records of mem0's eval copy only.
    await onDatabase(data, [
      `CREATE FUNCTION refuse_mem0() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.audit IS NOT NULL AND (SELECT description FROM "Pipeline" WHERE id = NEW."pipelineId") LIKE 'Eval copy of template mem0 %' THEN
           RAISE EXCEPTION 'the test database refuses mem0''s records';
         END IF;
         RETURN NEW;
       END $$`,
      `CREATE TRIGGER refuse_mem0 BEFORE INSERT ON "Record" FOR EACH ROW EXECUTE FUNCTION refuse_mem0()`,
    ]);
    const json = synthex(data, {}, "eval", "locomo", "--data", file, "--template", TEMPLATES.join(","), "--json");
    expect(json.code).toBe(1);
    const results = JSON.parse(json.out) as Result[];
    expect(results.map((r) => [r.pipeline, r.status])).toEqual([
      ["bm25-sessions", "completed"],
      ["memex", "completed"],
      ["mem0", "failed"],
    ]);
    for (const r of results.slice(0, 2)) expect(r.metrics!["session_hit@5"]).toBeGreaterThan(0);
    expect(results[2]!.error).toMatch(/refuses mem0's records/);
    expect(results[2]!.id).toEqual(expect.any(String));
    expect(json.err).toMatch(/The eval of mem0 \(\S+\) failed: The pipeline run of the eval copy failed: [\s\S]*refuses mem0's records/);

    const human = synthex(data, {}, "eval", "locomo", "--data", file, "--template", TEMPLATES.join(","));
    expect(human.code).toBe(1);
    expect(human.out).toMatch(/metric\s+bm25-sessions\s+memex\s*\n/);
    expect(human.out).toMatch(/session_hit@5\s+\d\.\d{3}\s+\d\.\d{3}/);
    expect(human.out).toMatch(/Failed \(1 of 3\):\n\s+mem0 \(\S+\) failed: [\s\S]*refuses mem0's records/);
  }, 600_000);
});
