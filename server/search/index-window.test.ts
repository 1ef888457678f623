/**
 * The index pass after a run reads what the run changed (issue 32): pointers changed since the
 * branch's last complete pass. Nothing is missed (every record the branch shows of an indexed step
 * has its embedding, its relative dates and its place in the BM25 index), and the BM25 statistics
 * after incremental passes equal a full recompute. Real database, real engine and indexing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import { createBranch } from "../services/branches";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { syncLexicalIndex } from "../store/lexical-index";
import { createTestDb } from "../store/test-db";
import { resolveBranch } from "./context";
import { indexPipeline } from "./indexing";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
let branchId: string;

const topics = ["kayak", "sourdough", "garden", "piano", "invoice", "marathon"];
let next = 0;
/** `n` new conversations, timed, some with a relative date to resolve. */
function chats(n: number) {
  return Array.from({ length: n }, () => {
    const i = next++;
    const a = topics[i % topics.length]!;
    return {
      externalId: `c${i}`,
      scope: `team${i % 3}`,
      content: `User: ${i % 2 ? "last night" : "today"} I worked on the ${a} plan ${i}. Assistant: the ${a} ${"note ".repeat(1 + (i % 4))}is saved.`,
      metadata: { time: { created_at: new Date(Date.UTC(2024, 0, 1 + i)).toISOString() } },
    };
  });
}

const STEPS = ["chats", "clean"];

async function run() {
  expect((await runPipeline(db, { workspaceId, pipelineId }, { afterRun: false })).status).toBe("completed");
}

/** Records of the indexed steps on the branch lacking an embedding, a date scan (timed ones) or a BM25 document; and SearchDoc rows no pointer backs. */
async function unindexed(branch = branchId) {
  const [row] = await db.$queryRawUnsafe<Array<{ pointers: number; noEmbedding: number; unscanned: number; noDoc: number; strayDoc: number }>>(
    `SELECT (SELECT count(*)::int FROM "BranchPointer" WHERE "branchId" = $1 AND step = ANY($2::text[])) AS pointers,
       (SELECT count(*)::int FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = ANY($2::text[])
          AND NOT EXISTS (SELECT 1 FROM "Embedding" e WHERE e."recordId" = p."recordId")) AS "noEmbedding",
       (SELECT count(*)::int FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId" WHERE p."branchId" = $1 AND p.step = ANY($2::text[])
          AND r.metadata #>> '{time,created_at}' IS NOT NULL AND r.metadata #>> '{time,mentions_of}' IS DISTINCT FROM r."contentFingerprint") AS unscanned,
       (SELECT count(*)::int FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = ANY($2::text[])
          AND NOT EXISTS (SELECT 1 FROM "SearchDoc" d WHERE d."branchId" = $1 AND d.step = p.step AND d."recordId" = p."recordId")) AS "noDoc",
       (SELECT count(*)::int FROM "SearchDoc" d WHERE d."branchId" = $1
          AND NOT EXISTS (SELECT 1 FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = d.step AND p."recordId" = d."recordId")) AS "strayDoc"`,
    branch,
    STEPS,
  );
  return row!;
}

/** Everything the BM25 statistics are (and each posting but its impact, which is weighted to the mean length when its record joined). */
async function lexicalState(branch = branchId) {
  const q = <T>(sql: string) => db.$queryRawUnsafe<T[]>(sql, branch);
  return {
    steps: await q<{ step: string; docs: number; avgLength: number }>(`SELECT step, docs, "avgLength" FROM "SearchStepStat" WHERE "branchId" = $1 ORDER BY step`),
    terms: await q<{ step: string; term: string; df: number }>(`SELECT step, term, df FROM "SearchTermStat" WHERE "branchId" = $1 ORDER BY step, term`),
    docs: await q<{ step: string; recordId: string; len: number }>(`SELECT step, "recordId", len FROM "SearchDoc" WHERE "branchId" = $1 ORDER BY step, "recordId"`),
    postings: await q<{ step: string; term: string; recordId: string; tf: number; len: number; scope: string }>(
      `SELECT step, term, "recordId", tf, len, scope FROM "SearchPosting" WHERE "branchId" = $1 ORDER BY step, term, "recordId"`,
    ),
  };
}

/** The branch's BM25 index dropped and rebuilt by a full pass from its pointers. */
async function recomputed() {
  for (const table of ["SearchPosting", "SearchTermStat", "SearchDoc", "SearchStepStat", "SearchIndexState"]) {
    await db.$executeRawUnsafe(`DELETE FROM "${table}" WHERE "branchId" = $1`, branchId);
  }
  expect((await indexPipeline(db, pipelineId)).window).toBeNull();
  return lexicalState();
}

/** Steps whose statistics the last pass moved by the window alone (it leaves the signature of a whole-step comparison empty). */
async function windowedSteps() {
  const rows = await db.$queryRawUnsafe<Array<{ step: string }>>(`SELECT step FROM "SearchStepStat" WHERE "branchId" = $1 AND signature = '' ORDER BY step`, branchId);
  return rows.map((r) => r.step);
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "window@example.com", password: "window-password-1" }));
  const spec = new Pipeline("window")
    .source("chats", { format: "jsonl" })
    .transform("clean", { from: "chats", operator: { kind: "identity" } })
    .output("search", { from: STEPS, surface: "search" })
    .toSpec();
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "window", spec }));
  await appendSourceRecords(db, pipelineId, "chats", chats(12));
  await run();
  branchId = (await resolveBranch(db, workspaceId, pipelineId)).branchId;
  // The branch's first pass is a full one: it has no mark yet.
  const first = await indexPipeline(db, pipelineId);
  expect(first.window).toBeNull();
  expect(first.embedded).toBe(24);
  expect(await unindexed()).toMatchObject({ pointers: 24, noEmbedding: 0, unscanned: 0, noDoc: 0, strayDoc: 0 });
}, 120_000);
afterAll(async () => close());

describe("the index pass after a run", () => {
  it("reads only the pointers the run changed, and leaves every record embedded, date-scanned and in the BM25 index", async () => {
    await appendSourceRecords(db, pipelineId, "chats", chats(3));
    await run();
    const pass = await indexPipeline(db, pipelineId);
    // 3 sources and the 3 records made from them: nothing else of the branch was read.
    expect(pass.window).toBe(6);
    expect(pass.embedded).toBe(6);
    expect(pass.dateScanned).toBe(6);
    expect(pass.lexicalStats).toEqual(STEPS);
    expect(await windowedSteps()).toEqual(STEPS);
    expect(await unindexed()).toMatchObject({ pointers: 30, noEmbedding: 0, unscanned: 0, noDoc: 0, strayDoc: 0 });
    // Nothing changed since: an empty window, nothing refreshed.
    const again = await indexPipeline(db, pipelineId);
    expect(again).toMatchObject({ window: 0, embedded: 0, dateScanned: 0, lexicalStats: [] });
  });

  it("moves the statistics to exactly what a full recompute gives, after records join and leave", async () => {
    // Records join, over two incremental passes.
    await appendSourceRecords(db, pipelineId, "chats", chats(4));
    await run();
    expect((await indexPipeline(db, pipelineId)).window).toBe(8);
    await appendSourceRecords(db, pipelineId, "chats", chats(2));
    await run();
    expect((await indexPipeline(db, pipelineId)).window).toBe(4);
    expect(await windowedSteps()).toEqual(STEPS);
    const incremental = await lexicalState();
    expect(incremental.steps.map((s) => s.docs)).toEqual([21, 21]);
    expect(incremental).toEqual(await recomputed());

    // One record joins each step and two leave "clean" (their pointers removed, as a reset or a
    // purge does): the pointer count says the window is not the step's whole change, and the step
    // is compared whole.
    await appendSourceRecords(db, pipelineId, "chats", chats(1));
    await run();
    await db.$executeRawUnsafe(
      `DELETE FROM "BranchPointer" WHERE ctid IN (SELECT ctid FROM "BranchPointer" WHERE "branchId" = $1 AND step = 'clean' ORDER BY "recordId" LIMIT 2)`,
      branchId,
    );
    const pass = await indexPipeline(db, pipelineId);
    expect(pass.lexicalStats).toEqual(STEPS);
    expect(await windowedSteps()).toEqual(["chats"]);
    expect(await unindexed()).toMatchObject({ noEmbedding: 0, unscanned: 0, noDoc: 0, strayDoc: 0 });
    const mixed = await lexicalState();
    expect(mixed.steps.map((s) => s.docs)).toEqual([22, 20]);
    expect(mixed).toEqual(await recomputed());

    // The next run points "clean" at its two records again; they join the index again.
    await run();
    expect((await indexPipeline(db, pipelineId)).window).toBe(2);
    expect((await lexicalState()).steps.map((s) => s.docs)).toEqual([22, 22]);
    expect(await unindexed()).toMatchObject({ noEmbedding: 0, unscanned: 0, noDoc: 0, strayDoc: 0 });
  });

  it("catches records of runs whose index pass never ran (a crash before it): they are in the next window", async () => {
    await appendSourceRecords(db, pipelineId, "chats", chats(2));
    await run(); // its pass never runs
    await appendSourceRecords(db, pipelineId, "chats", chats(1));
    await run();
    const pass = await indexPipeline(db, pipelineId);
    expect(pass.window).toBe(6);
    expect(pass.embedded).toBe(6);
    expect(await unindexed()).toMatchObject({ noEmbedding: 0, unscanned: 0, noDoc: 0, strayDoc: 0 });
  });

  it("two passes at once (two runs of the branch ending together) index each record once", async () => {
    await appendSourceRecords(db, pipelineId, "chats", chats(5));
    await run();
    // The steps' BM25 syncs themselves at once (as the passes' last phase can be), then whole passes.
    const syncs = await Promise.all([0, 1, 2].map(() => syncLexicalIndex(db, workspaceId, branchId, "chats", { k1: 1.2, b: 0.75 })));
    expect(syncs.filter((r) => r !== null)).toHaveLength(1);
    const passes = await Promise.all([indexPipeline(db, pipelineId), indexPipeline(db, pipelineId), indexPipeline(db, pipelineId)]);
    expect(passes.reduce((n, p) => n + p.embedded, 0)).toBe(10);
    expect(await unindexed()).toMatchObject({ noEmbedding: 0, unscanned: 0, noDoc: 0, strayDoc: 0 });
    expect(await lexicalState()).toEqual(await recomputed());
  });

  it("makes a full pass on request, and on a branch that has no mark yet", async () => {
    expect(await indexPipeline(db, pipelineId, "main", { full: true })).toMatchObject({ window: null, embedded: 0, dateScanned: 0, lexicalStats: [] });
    await createBranch(db, pipelineId, { name: "other" });
    const other = await resolveBranch(db, workspaceId, pipelineId, "other");
    const pass = await indexPipeline(db, pipelineId, "other");
    expect(pass.window).toBeNull();
    expect(await unindexed(other.branchId)).toMatchObject({ noEmbedding: 0, unscanned: 0, noDoc: 0, strayDoc: 0 });
    expect((await indexPipeline(db, pipelineId, "other")).window).toBe(0);
  });
});
