/**
 * SQL over branch pointers: a branch is a set of (step, groupKey) → record pointers, so creating
 * one copies pointers and counting one's records reads them.
 */
import type { DbTx } from "../core/db";

/** Copy-on-write: every pointer of `fromBranchId` into `toBranchId` in one INSERT…SELECT, never records. */
export async function copyBranchPointers(tx: DbTx, fromBranchId: string, toBranchId: string): Promise<number> {
  return tx.$executeRawUnsafe(
    `INSERT INTO "BranchPointer" ("workspaceId", "branchId", step, "groupKey", "recordId", "updatedAt")
     SELECT "workspaceId", $1, step, "groupKey", "recordId", now() FROM "BranchPointer" WHERE "branchId" = $2`,
    toBranchId,
    fromBranchId,
  );
}

/** How many records the branch points at, per step and the step version that made them. */
export async function pointerCountsByStepVersion(db: DbTx, branchId: string) {
  return db.$queryRawUnsafe<Array<{ step: string; svh: string; n: number }>>(
    `SELECT p.step, r."stepVersionHash" AS svh, count(*)::int AS n
     FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
     WHERE p."branchId" = $1 GROUP BY 1, 2`,
    branchId,
  );
}

/** Sources per group record an aggregate step has on the branch, by its pointer's group key. */
export async function groupSourceCounts(db: DbTx, branchId: string, step: string): Promise<Map<string, number>> {
  const rows = await db.$queryRawUnsafe<Array<{ groupKey: string; size: number }>>(
    `SELECT p."groupKey", (SELECT count(*)::int FROM "RecordEdge" e WHERE e."childId" = p."recordId") AS size
     FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = $2`,
    branchId,
    step,
  );
  return new Map(rows.map((r) => [r.groupKey, r.size]));
}
