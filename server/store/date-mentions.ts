/**
 * Relative-time mentions at index time: records on a branch whose text has not been scanned for
 * relative dates yet ("last night", "two days ago"), and the write of what was resolved to their
 * `metadata.time.mentions` — derived data, like embeddings: keys and content are untouched, so no
 * pipeline rebuilds. A scanned record carries `time.mentions` (an empty list when nothing was found)
 * and `time.mentions_of`, the content fingerprint scanned: metadata copied from a source record
 * (a window inherits its transcript's `time`) does not pass for the record's own.
 */
import type { DbTx } from "../core/db";

export interface UnscannedRecord {
  id: string;
  content: string;
  /** `metadata.time.created_at`: the anchor phrases resolve against. */
  createdAt: string;
}

/** Timed records of the steps on the branch not scanned for relative dates (as they read now), by id after `after`. */
export async function unscannedForDates(db: DbTx, args: { workspaceId: string; branchId: string; steps: string[]; after: string; limit: number }): Promise<UnscannedRecord[]> {
  return db.$queryRawUnsafe<UnscannedRecord[]>(
    `SELECT r.id, r.content, r.metadata #>> '{time,created_at}' AS "createdAt" FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
     WHERE p."branchId" = $1 AND p.step = ANY($2::text[]) AND r."workspaceId" = $3 AND p."recordId" > $4
       AND r.metadata #>> '{time,created_at}' IS NOT NULL AND r.metadata #>> '{time,mentions_of}' IS DISTINCT FROM r."contentFingerprint"
     ORDER BY p."recordId" LIMIT $5`,
    args.branchId,
    args.steps,
    args.workspaceId,
    args.after,
    args.limit,
  );
}

/** Of `ids` (records changed on a branch since its last index pass), the timed ones not scanned for relative dates, by id. */
export async function unscannedAmong(db: DbTx, workspaceId: string, ids: string[]): Promise<UnscannedRecord[]> {
  if (ids.length === 0) return [];
  return db.$queryRawUnsafe<UnscannedRecord[]>(
    `SELECT r.id, r.content, r.metadata #>> '{time,created_at}' AS "createdAt" FROM "Record" r
     WHERE r.id = ANY($1::text[]) AND r."workspaceId" = $2
       AND r.metadata #>> '{time,created_at}' IS NOT NULL AND r.metadata #>> '{time,mentions_of}' IS DISTINCT FROM r."contentFingerprint"
     ORDER BY r.id`,
    ids,
    workspaceId,
  );
}

/** Writes each record's resolved mentions to `metadata.time.mentions` (one statement). */
export async function storeDateMentions(db: DbTx, workspaceId: string, rows: Array<{ id: string; mentions: unknown[] }>): Promise<void> {
  if (rows.length === 0) return;
  await db.$executeRawUnsafe(
    `UPDATE "Record" r SET metadata = jsonb_set(jsonb_set(r.metadata, '{time,mentions}', u.mentions::jsonb), '{time,mentions_of}', to_jsonb(r."contentFingerprint"))
     FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS mentions) u
     WHERE r.id = u.id AND r."workspaceId" = $3`,
    rows.map((r) => r.id),
    rows.map((r) => JSON.stringify(r.mentions)),
    workspaceId,
  );
}

/** `metadata.time.mentions` of the records (raw JSON, parsed by the caller), by id. */
export async function dateMentionsOf(db: DbTx, workspaceId: string, ids: string[]): Promise<Map<string, unknown>> {
  if (ids.length === 0) return new Map();
  const rows = await db.$queryRawUnsafe<Array<{ id: string; mentions: unknown }>>(
    `SELECT id, metadata #> '{time,mentions}' AS mentions FROM "Record"
     WHERE id = ANY($1::text[]) AND "workspaceId" = $2 AND metadata #>> '{time,mentions_of}' = "contentFingerprint" ORDER BY id`,
    ids,
    workspaceId,
  );
  return new Map(rows.map((r) => [r.id, r.mentions]));
}
