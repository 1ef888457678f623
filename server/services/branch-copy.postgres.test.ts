/**
 * A new branch's search index is copied from one snapshot of its origin (PostgreSQL, where other
 * transactions commit while the copy runs). Here an index pass of main commits a record's document
 * and postings in the middle of the copy: the copy blocks on the postings table (another session
 * holds it), the "pass" commits, the copy goes on. Read from one snapshot, the branch gets neither
 * the document nor its postings, and its first index pass adds both once; statement by statement,
 * it got the postings without their document, and its first pass inserted them again (duplicate key).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { Pipeline } from "../pipeline/sdk";
import { indexPipeline } from "../search/indexing";
import { createTestDb, testDatabaseUrl, type TestDb } from "../store/test-db";
import { createBranch } from "./branches";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

describe.skipIf(!testDatabaseUrl())("a branch's search index copied while its origin is indexed", () => {
  let t: TestDb;
  let pool: pg.Pool;
  let workspaceId: string;
  let pipelineId: string;
  const chats = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ externalId: `c${from + i}`, content: `User: the kayak trip number ${from + i} is planned. Assistant: noted.` }));

  beforeAll(async () => {
    t = await createTestDb();
    pool = t.sql as pg.Pool;
    ({ workspace: { id: workspaceId } } = await signUp(t.db, { email: "copy@example.com", password: "copy-password-1" }));
    const spec = new Pipeline("copy").source("chats", { format: "jsonl" }).output("search", { from: ["chats"], surface: "search" }).toSpec();
    ({ pipeline: { id: pipelineId } } = await createPipeline(t.db, workspaceId, { name: "copy", spec }));
    await appendSourceRecords(t.db, pipelineId, "chats", chats(0, 4));
    expect((await runPipeline(t.db, { workspaceId, pipelineId }, { afterRun: false })).status).toBe("completed");
    await indexPipeline(t.db, pipelineId);
    // One more record on main that its index does not hold yet.
    await appendSourceRecords(t.db, pipelineId, "chats", chats(4, 1));
    expect((await runPipeline(t.db, { workspaceId, pipelineId }, { afterRun: false })).status).toBe("completed");
  }, 120_000);
  afterAll(async () => t?.close());

  it("gives the branch documents and postings of the same moment, and its first pass indexes the record once", async () => {
    const { rows: [main] } = await pool.query<{ id: string }>(`SELECT id FROM "Branch" WHERE "pipelineId" = $1 AND name = 'main'`, [pipelineId]);
    const { rows: [late] } = await pool.query<{ id: string }>(
      `SELECT p."recordId" AS id FROM "BranchPointer" p WHERE p."branchId" = $1
       AND NOT EXISTS (SELECT 1 FROM "SearchDoc" d WHERE d."branchId" = p."branchId" AND d."recordId" = p."recordId")`,
      [main!.id],
    );
    expect(late).toBeDefined();

    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "SearchPosting" IN EXCLUSIVE MODE`);
      const copying = createBranch(t.db, pipelineId, { name: "copy" });
      // Wait until the copy waits for the postings table (its documents are copied by then).
      for (let i = 0; ; i++) {
        const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '"SearchPosting"'::regclass`);
        if (rows[0]!.n > 0) break;
        if (i > 200) throw new Error("the branch copy never reached the postings table");
        await new Promise((r) => setTimeout(r, 25));
      }
      // main's index pass commits the late record's document and postings.
      await holder.query(
        `INSERT INTO "SearchDoc" ("workspaceId", "branchId", step, "recordId", len) SELECT r."workspaceId", $1, 'chats', r.id, length(r."searchVector") FROM "Record" r WHERE r.id = $2`,
        [main!.id, late!.id],
      );
      await holder.query(
        `INSERT INTO "SearchPosting" ("workspaceId", "branchId", step, term, "recordId", tf, len, scope, impact)
         SELECT r."workspaceId", $1, 'chats', u.lexeme, r.id, 1, length(r."searchVector"), r.scope, 1 FROM "Record" r, unnest(r."searchVector") u WHERE r.id = $2`,
        [main!.id, late!.id],
      );
      await holder.query("COMMIT");
      await copying;
    } finally {
      holder.release();
    }

    const { rows: [branch] } = await pool.query<{ id: string }>(`SELECT id FROM "Branch" WHERE "pipelineId" = $1 AND name = 'copy'`, [pipelineId]);
    const { rows: [orphans] } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "SearchPosting" s WHERE s."branchId" = $1
       AND NOT EXISTS (SELECT 1 FROM "SearchDoc" d WHERE d."branchId" = s."branchId" AND d.step = s.step AND d."recordId" = s."recordId")`,
      [branch!.id],
    );
    expect(orphans!.n).toBe(0);
    await indexPipeline(t.db, pipelineId, "copy");
    const { rows: [docs] } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "SearchDoc" WHERE "branchId" = $1 AND "recordId" = $2`, [branch!.id, late!.id]);
    expect(docs!.n).toBe(1);
  });
});
