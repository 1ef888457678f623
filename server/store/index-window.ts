/**
 * The index window of a branch: which pointers changed since its last complete index pass, so the
 * pass after a run reads what the run changed instead of the whole branch.
 *
 * Every pointer write stamps `"updatedAt" = now()` (its transaction's start, server/store/*), and
 * `"BranchPointer"("branchId", "updatedAt")` finds the changed ones. A pass takes its mark before it
 * reads anything: the start of the oldest client transaction still open (it may yet commit
 * pointers stamped that early; a long one only widens the next window), rounded to timestamp(3)
 * as the stamps are (rounding keeps the order). Any pointer stamped before the mark was committed
 * before the pass read, so once the pass completes, everything before the mark is indexed
 * (`SearchIndexState`). A pass that fails stores nothing: the next one starts from the older mark.
 * Pointers that go are not stamped: the BM25 sync counts each step's pointers to notice them.
 */
import type { DbTx } from "../core/db";

export interface IndexState {
  coverage: string;
  /** timestamp(3) as text, kept in the database's own form (no clock or time zone of the app involved). */
  indexedThrough: string;
}

/** The mark a pass takes before its first read (see above). */
export async function indexMark(db: DbTx): Promise<string> {
  const [row] = await db.$queryRawUnsafe<Array<{ mark: string }>>(
    `SELECT (LEAST(now(), (SELECT min(xact_start) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'))::timestamp(3))::text AS mark`,
  );
  return row!.mark;
}

export async function readIndexState(db: DbTx, branchId: string): Promise<IndexState | null> {
  const [row] = await db.$queryRawUnsafe<IndexState[]>(
    `SELECT coverage, "indexedThrough"::text AS "indexedThrough" FROM "SearchIndexState" WHERE "branchId" = $1`,
    branchId,
  );
  return row ?? null;
}

export async function saveIndexState(db: DbTx, args: { workspaceId: string; branchId: string; coverage: string; indexedThrough: string }): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO "SearchIndexState" ("branchId", "workspaceId", coverage, "indexedThrough", "updatedAt")
     VALUES ($1, $2, $3, $4::timestamp(3), now())
     ON CONFLICT ("branchId") DO UPDATE SET coverage = EXCLUDED.coverage, "indexedThrough" = EXCLUDED."indexedThrough", "updatedAt" = now()`,
    args.branchId,
    args.workspaceId,
    args.coverage,
    args.indexedThrough,
  );
}

/** Forgets where the branch's index stands: its next pass is a full one. */
export async function clearIndexState(db: DbTx, branchId: string): Promise<void> {
  await db.$executeRawUnsafe(`DELETE FROM "SearchIndexState" WHERE "branchId" = $1`, branchId);
}

/**
 * The records of `steps` whose pointers on the branch changed at or after `since`, by step (each
 * record once per step); null when more than `limit` pointers changed (a full pass is as cheap).
 */
export async function changedPointers(
  db: DbTx,
  args: { branchId: string; steps: string[]; since: string; limit: number },
): Promise<Map<string, string[]> | null> {
  const rows = await db.$queryRawUnsafe<Array<{ step: string; recordId: string }>>(
    `SELECT step, "recordId" FROM "BranchPointer"
     WHERE "branchId" = $1 AND "updatedAt" >= $2::timestamp(3) AND step = ANY($3::text[])
     LIMIT $4`,
    args.branchId,
    args.since,
    args.steps,
    args.limit + 1,
  );
  if (rows.length > args.limit) return null;
  const byStep = new Map<string, Set<string>>(args.steps.map((s) => [s, new Set<string>()]));
  for (const r of rows) byStep.get(r.step)!.add(r.recordId);
  return new Map([...byStep].map(([step, ids]) => [step, [...ids].sort()]));
}
