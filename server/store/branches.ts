/**
 * The SQL of branches: pointer copies (copy-on-write creation), pointer set differences (diff),
 * pointer upserts (promotion) and the garbage collection of records no branch reaches.
 * Records are never copied or changed here; only pointers move.
 */
import type { DbTx } from "../core/db";
import { removeFromSearchIndex } from "./lexical-index";

export interface StepPointerCounts {
  step: string;
  /** Records only A points to, only B points to, and both point to. */
  onlyA: number;
  onlyB: number;
  shared: number;
  /** Groups (same step and group key: same inputs) that both show, with different records. */
  differingGroups: number;
}

/** Per step, how the record sets of two branches overlap. */
export async function comparePointers(db: DbTx, branchA: string, branchB: string): Promise<StepPointerCounts[]> {
  return db.$queryRawUnsafe<StepPointerCounts[]>(
    `SELECT COALESCE(a.step, b.step) AS step,
            count(*) FILTER (WHERE b."recordId" IS NULL)::int AS "onlyA",
            count(*) FILTER (WHERE a."recordId" IS NULL)::int AS "onlyB",
            count(*) FILTER (WHERE a."recordId" = b."recordId")::int AS shared,
            count(*) FILTER (WHERE a."recordId" <> b."recordId")::int AS "differingGroups"
     FROM (SELECT step, "groupKey", "recordId" FROM "BranchPointer" WHERE "branchId" = $1) a
     FULL JOIN (SELECT step, "groupKey", "recordId" FROM "BranchPointer" WHERE "branchId" = $2) b
       ON a.step = b.step AND a."groupKey" = b."groupKey"
     GROUP BY 1 ORDER BY 1`,
    branchA,
    branchB,
  ).then((rows) =>
    // A group both show with different records counts once on each side, not as shared.
    rows.map((r) => ({ ...r, onlyA: r.onlyA + r.differingGroups, onlyB: r.onlyB + r.differingGroups })),
  );
}

export interface RecordPairRow {
  groupKey: string;
  aId: string | null;
  bId: string | null;
  aContent: string | null;
  bContent: string | null;
  aScope: string | null;
  bScope: string | null;
}

/** Groups of one step where the two branches show different records (same inputs, different output), in group order. */
export async function differingPairs(
  db: DbTx,
  branchA: string,
  branchB: string,
  step: string,
  page: { afterGroupKey?: string | null; limit: number; groupKey?: string },
): Promise<RecordPairRow[]> {
  return db.$queryRawUnsafe<RecordPairRow[]>(
    `SELECT a."groupKey", ra.id AS "aId", rb.id AS "bId", ra.content AS "aContent", rb.content AS "bContent",
            ra.scope AS "aScope", rb.scope AS "bScope"
     FROM "BranchPointer" a
     JOIN "BranchPointer" b ON b."branchId" = $2 AND b.step = a.step AND b."groupKey" = a."groupKey"
     JOIN "Record" ra ON ra.id = a."recordId"
     JOIN "Record" rb ON rb.id = b."recordId"
     WHERE a."branchId" = $1 AND a.step = $3 AND a."recordId" <> b."recordId"
       AND ($4::text IS NULL OR a."groupKey" > $4) AND ($5::text IS NULL OR a."groupKey" = $5)
     ORDER BY a."groupKey" LIMIT $6`,
    branchA,
    branchB,
    step,
    page.afterGroupKey ?? null,
    page.groupKey ?? null,
    page.limit,
  );
}

/**
 * Makes `target`'s pointers of `steps` exactly `source`'s: upserts by (step, group key) — the
 * group key is the materialization key's input part, so the promoted record replaces the one
 * made from the same inputs — and removes the target's pointers the source does not have.
 */
export async function replaceStepPointers(db: DbTx, sourceBranchId: string, targetBranchId: string, steps: string[]) {
  if (steps.length === 0) return new Map<string, { upserted: number; removed: number }>();
  const upserted = await db.$queryRawUnsafe<Array<{ step: string; n: number }>>(
    `WITH up AS (
       INSERT INTO "BranchPointer" ("workspaceId", "branchId", step, "groupKey", "recordId", "updatedAt")
       SELECT "workspaceId", $2, step, "groupKey", "recordId", now() FROM "BranchPointer"
       WHERE "branchId" = $1 AND step = ANY($3::text[])
       ON CONFLICT ("branchId", step, "groupKey") DO UPDATE SET "recordId" = EXCLUDED."recordId", "updatedAt" = now()
       WHERE "BranchPointer"."recordId" <> EXCLUDED."recordId"
       RETURNING step)
     SELECT step, count(*)::int AS n FROM up GROUP BY step`,
    sourceBranchId,
    targetBranchId,
    steps,
  );
  const removed = await db.$queryRawUnsafe<Array<{ step: string; n: number }>>(
    `WITH gone AS (
       DELETE FROM "BranchPointer" t
       WHERE t."branchId" = $2 AND t.step = ANY($3::text[])
         AND NOT EXISTS (SELECT 1 FROM "BranchPointer" s WHERE s."branchId" = $1 AND s.step = t.step AND s."groupKey" = t."groupKey")
       RETURNING step)
     SELECT step, count(*)::int AS n FROM gone GROUP BY step`,
    sourceBranchId,
    targetBranchId,
    steps,
  );
  const out = new Map(steps.map((s) => [s, { upserted: 0, removed: 0 }]));
  for (const r of upserted) out.get(r.step)!.upserted = r.n;
  for (const r of removed) out.get(r.step)!.removed = r.n;
  return out;
}

/**
 * Every statement of the transaction reads one snapshot (REPEATABLE READ): copies of several tables
 * of a branch stay consistent with each other while other transactions commit. The transaction's
 * first statement.
 */
export async function readFromOneSnapshot(tx: DbTx) {
  await tx.$executeRawUnsafe(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`);
}

/**
 * The lexical search index of a branch (BM25 postings, documents and statistics) copied to a new
 * branch made from it: the new branch points at the same records, so it searches like its origin
 * from the start instead of finding nothing until its first run.
 */
export async function copyBranchSearchIndex(db: DbTx, fromBranchId: string, toBranchId: string) {
  await db.$executeRawUnsafe(
    `INSERT INTO "SearchStepStat" ("workspaceId", "branchId", step, docs, "avgLength", signature, "updatedAt")
     SELECT "workspaceId", $2, step, docs, "avgLength", signature, now() FROM "SearchStepStat" WHERE "branchId" = $1`,
    fromBranchId,
    toBranchId,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "SearchTermStat" ("workspaceId", "branchId", step, term, df)
     SELECT "workspaceId", $2, step, term, df FROM "SearchTermStat" WHERE "branchId" = $1`,
    fromBranchId,
    toBranchId,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "SearchDoc" ("workspaceId", "branchId", step, "recordId", len)
     SELECT "workspaceId", $2, step, "recordId", len FROM "SearchDoc" WHERE "branchId" = $1`,
    fromBranchId,
    toBranchId,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO "SearchPosting" ("workspaceId", "branchId", step, term, "recordId", tf, len, scope, impact)
     SELECT "workspaceId", $2, step, term, "recordId", tf, len, scope, impact FROM "SearchPosting" WHERE "branchId" = $1`,
    fromBranchId,
    toBranchId,
  );
}

/**
 * Fresh planner statistics for the tables a new branch's copy filled (issue 48 item 6). Statistics
 * gathered before the branch existed know only its origin's branch id, so the planner takes the new
 * id for a handful of rows: it probed each candidate's pointer through ("branchId", "updatedAt"),
 * reading the branch's every pointer per candidate (an unchanged branch searched 3–5× slower than
 * main, PGlite and PostgreSQL alike, until autovacuum — which PGlite lacks — analyzed the table).
 */
export async function analyzeBranchCopy(db: DbTx) {
  await db.$executeRawUnsafe(`ANALYZE "BranchPointer", "SearchPosting", "SearchDoc", "SearchTermStat", "SearchStepStat"`);
}

/** Pointers of a branch (by step) and the search and projection state kept per branch: all go with the branch. */
export async function deleteBranchRows(db: DbTx, branchId: string) {
  const pointers = await db.branchPointer.deleteMany({ where: { branchId } });
  await db.searchStepStat.deleteMany({ where: { branchId } });
  await db.searchTermStat.deleteMany({ where: { branchId } });
  await db.$executeRawUnsafe(`DELETE FROM "SearchPosting" WHERE "branchId" = $1`, branchId);
  await db.$executeRawUnsafe(`DELETE FROM "SearchDoc" WHERE "branchId" = $1`, branchId);
  await db.projectionState.deleteMany({ where: { branchId } });
  await db.branch.delete({ where: { id: branchId } });
  return pointers.count;
}

/**
 * Records of the pipeline that no branch reaches: not pointed to, and not an ancestor (through
 * provenance edges) of a pointed record — an aggregate reused across versions keeps its parents.
 */
const UNREACHED = `
  WITH RECURSIVE live(id) AS (
    SELECT DISTINCT p."recordId" FROM "BranchPointer" p JOIN "Branch" b ON b.id = p."branchId" WHERE b."pipelineId" = $1
    UNION
    SELECT e."parentId" FROM "RecordEdge" e JOIN live ON e."childId" = live.id
  )
  SELECT r.id, r.step, length(r.content) AS bytes FROM "Record" r
  WHERE r."pipelineId" = $1 AND NOT EXISTS (SELECT 1 FROM live WHERE live.id = r.id)`;

export interface GcCounts {
  records: number;
  bytes: number;
  byStep: Record<string, number>;
}

export async function unreachedRecords(db: DbTx, pipelineId: string): Promise<{ ids: string[]; counts: GcCounts }> {
  const rows = await db.$queryRawUnsafe<Array<{ id: string; step: string; bytes: number }>>(UNREACHED, pipelineId);
  const byStep: Record<string, number> = {};
  for (const r of rows) byStep[r.step] = (byStep[r.step] ?? 0) + 1;
  return { ids: rows.map((r) => r.id), counts: { records: rows.length, bytes: rows.reduce((n, r) => n + Number(r.bytes), 0), byStep } };
}

/** Deletes records by id with their edges and embeddings. */
export async function deleteRecords(db: DbTx, ids: string[]) {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += 5000) {
    const chunk = ids.slice(i, i + 5000);
    await db.$executeRawUnsafe(`DELETE FROM "RecordEdge" WHERE "childId" = ANY($1::text[]) OR "parentId" = ANY($1::text[])`, chunk);
    await db.$executeRawUnsafe(`DELETE FROM "Embedding" WHERE "recordId" = ANY($1::text[])`, chunk);
    await removeFromSearchIndex(db, chunk);
    deleted += await db.$executeRawUnsafe(`DELETE FROM "Record" WHERE id = ANY($1::text[])`, chunk);
  }
  return deleted;
}
