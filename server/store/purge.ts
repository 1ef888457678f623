/**
 * The purge cascade's SQL (seed §11.3): from root records, everything derived from them through
 * provenance edges, and every row that holds or points at one of those records — branch pointers
 * on every branch, embeddings, BM25 postings and docs, edges, projection state, fold checkpoints of
 * the folds they fed, and the live-ingest sessions (with their messages) that became them.
 * `purgeCascade` reads it (the dry run); `deleteCascade` deletes exactly what it read.
 */
import type { DbTx } from "../core/db";
import { likeEscape, normalizeScope } from "./record-sql";
import { removeFromSearchIndex } from "./lexical-index";
import { countCopies, purgeCopies, type CopiesTarget, type PurgeCopies } from "./purge-copies";

export interface PurgeCascade {
  roots: string[];
  records: Array<{ id: string; step: string; scope: string; depth: number }>;
  byStep: Record<string, number>;
  /** Branch pointers removed, per branch name. */
  pointers: Record<string, number>;
  embeddings: number;
  postings: number;
  searchDocs: number;
  edges: number;
  projectionStates: number;
  foldCheckpoints: number;
  /** Live-ingest sessions deleted with their messages (their record is purged, or they are in the purged scope). */
  ingestSessions: number;
  ingestMessages: number;
  /** Copies of the purged text outside the records (store/purge-copies.ts), per kind. */
  copies: PurgeCopies;
}

const count = async (db: DbTx, sql: string, ...params: unknown[]) =>
  Number((await db.$queryRawUnsafe<Array<{ n: number }>>(sql, ...params))[0]?.n ?? 0);

/** Records of a pipeline in a scope (the prefix semantics of every read: `acme:eng` and `acme:eng:*`). */
export async function recordsInScope(db: DbTx, workspaceId: string, pipelineId: string, scope: string): Promise<string[]> {
  const s = normalizeScope(scope)!;
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT id FROM "Record" WHERE "workspaceId" = $1 AND "pipelineId" = $2 AND (scope = $3 OR scope LIKE $4) ORDER BY id`,
    workspaceId,
    pipelineId,
    s,
    `${likeEscape(s)}:%`,
  );
  return rows.map((r) => r.id);
}

/** Ingest sessions a scope purge removes even when they never became records (still open). */
function sessionCondition(scope: string | null) {
  return scope
    ? `s."workspaceId" = $1 AND (s."recordId" = ANY($2::text[]) OR (s."pipelineId" = $3 AND (s.scope = $4 OR s.scope LIKE $5)))`
    : `s."workspaceId" = $1 AND s."recordId" = ANY($2::text[])`;
}

function sessionParams(workspaceId: string, ids: string[], pipelineId: string, scope: string | null): unknown[] {
  if (!scope) return [workspaceId, ids];
  const s = normalizeScope(scope)!;
  return [workspaceId, ids, pipelineId, s, `${likeEscape(s)}:%`];
}

/** What purging `roots` removes (read only). `scope` also takes that scope's open ingest sessions. */
export async function purgeCascade(db: DbTx, workspaceId: string, pipelineId: string, roots: string[], scope: string | null = null): Promise<PurgeCascade> {
  const records = await db.$queryRawUnsafe<Array<{ id: string; step: string; scope: string; depth: number }>>(
    `WITH RECURSIVE down(id, depth) AS (
       SELECT id, 0 FROM "Record" WHERE id = ANY($1::text[]) AND "workspaceId" = $2
       UNION
       SELECT e."childId", d.depth + 1 FROM down d JOIN "RecordEdge" e ON e."parentId" = d.id AND e."workspaceId" = $2
     )
     SELECT r.id, r.step, r.scope, min(d.depth)::int AS depth FROM down d JOIN "Record" r ON r.id = d.id
     GROUP BY r.id, r.step, r.scope ORDER BY depth, r.step, r.id`,
    roots,
    workspaceId,
  );
  const ids = records.map((r) => r.id);
  const byStep: Record<string, number> = {};
  for (const r of records) byStep[r.step] = (byStep[r.step] ?? 0) + 1;
  const pointerRows = await db.$queryRawUnsafe<Array<{ name: string; n: number }>>(
    `SELECT b.name, count(*)::int AS n FROM "BranchPointer" p JOIN "Branch" b ON b.id = p."branchId"
     WHERE p."recordId" = ANY($1::text[]) AND p."workspaceId" = $2 GROUP BY b.name ORDER BY b.name`,
    ids,
    workspaceId,
  );
  const folds = foldKeys(records);
  const copies = await countCopies(db, copiesTarget(workspaceId, pipelineId, records, scope));
  return {
    roots,
    records,
    byStep,
    pointers: Object.fromEntries(pointerRows.map((r) => [r.name, r.n])),
    embeddings: await count(db, `SELECT count(*)::int AS n FROM "Embedding" WHERE "recordId" = ANY($1::text[])`, ids),
    postings: await count(db, `SELECT count(*)::int AS n FROM "SearchPosting" WHERE "recordId" = ANY($1::text[])`, ids),
    searchDocs: await count(db, `SELECT count(*)::int AS n FROM "SearchDoc" WHERE "recordId" = ANY($1::text[])`, ids),
    edges: await count(db, `SELECT count(*)::int AS n FROM "RecordEdge" WHERE "childId" = ANY($1::text[]) OR "parentId" = ANY($1::text[])`, ids),
    projectionStates: await count(db, `SELECT count(*)::int AS n FROM "ProjectionState" WHERE "recordId" = ANY($1::text[])`, ids),
    foldCheckpoints: await count(db, `SELECT count(*)::int AS n FROM "FoldCheckpoint" WHERE "pipelineId" = $1 AND (step || E'\\x1f' || scope) = ANY($2::text[])`, pipelineId, folds),
    ingestSessions: await count(db, `SELECT count(*)::int AS n FROM "IngestSession" s WHERE ${sessionCondition(scope)}`, ...sessionParams(workspaceId, ids, pipelineId, scope)),
    ingestMessages: await count(
      db,
      `SELECT count(*)::int AS n FROM "IngestMessage" m JOIN "IngestSession" s ON s.id = m."sessionId" WHERE ${sessionCondition(scope)}`,
      ...sessionParams(workspaceId, ids, pipelineId, scope),
    ),
    copies,
  };
}

function copiesTarget(workspaceId: string, pipelineId: string, records: PurgeCascade["records"], scope: string | null): CopiesTarget {
  return { workspaceId, pipelineId, ids: records.map((r) => r.id), scopes: [...new Set(records.map((r) => r.scope))], scope: scope === null ? null : normalizeScope(scope)! };
}

/** A fold's checkpoints hold state made from its inputs: those of the (step, scope) of a purged record go too. */
function foldKeys(records: PurgeCascade["records"]): string[] {
  return [...new Set(records.map((r) => `${r.step}\x1f${r.scope}`))];
}

/**
 * Deletes what `purgeCascade` read (call it inside the same transaction). `idempotencyTombstone`:
 * what a replay of an Idempotency-Key answered before the purge gets instead. Returns the branch
 * ids whose pointers changed.
 */
export async function deleteCascade(db: DbTx, workspaceId: string, pipelineId: string, cascade: PurgeCascade, scope: string | null, idempotencyTombstone: string): Promise<string[]> {
  const ids = cascade.records.map((r) => r.id);
  await purgeCopies(db, copiesTarget(workspaceId, pipelineId, cascade.records, scope), idempotencyTombstone);
  const branches = await db.$queryRawUnsafe<Array<{ branchId: string }>>(
    `DELETE FROM "BranchPointer" WHERE "recordId" = ANY($1::text[]) AND "workspaceId" = $2 RETURNING "branchId"`,
    ids,
    workspaceId,
  );
  await db.$executeRawUnsafe(`DELETE FROM "ProjectionState" WHERE "recordId" = ANY($1::text[])`, ids);
  await db.$executeRawUnsafe(`DELETE FROM "FoldCheckpoint" WHERE "pipelineId" = $1 AND (step || E'\\x1f' || scope) = ANY($2::text[])`, pipelineId, foldKeys(cascade.records));
  await db.$executeRawUnsafe(`DELETE FROM "IngestSession" s WHERE ${sessionCondition(scope)}`, ...sessionParams(workspaceId, ids, pipelineId, scope));
  await db.$executeRawUnsafe(`DELETE FROM "RecordEdge" WHERE "childId" = ANY($1::text[]) OR "parentId" = ANY($1::text[])`, ids);
  await db.$executeRawUnsafe(`DELETE FROM "Embedding" WHERE "recordId" = ANY($1::text[])`, ids);
  await removeFromSearchIndex(db, ids);
  await db.$executeRawUnsafe(`DELETE FROM "Record" WHERE id = ANY($1::text[]) AND "workspaceId" = $2`, ids, workspaceId);
  return [...new Set(branches.map((b) => b.branchId))];
}
