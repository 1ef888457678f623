/**
 * The SQL of provenance: walks over "RecordEdge" (one hop, breadth-first to the leaves, a bounded
 * lineage, per-step neighbourhoods and ancestor counts) and the record rows they return. Every
 * read is filtered by the workspace; with a branch id, each row says whether the branch shows it.
 * Search (server/search/provenance.ts, neighbourhood.ts) and evals shape these rows; they write
 * no SQL of their own.
 */
import type { Db } from "../core/db";
import { filterConditions, Params, parseJson, tieKey, trace, type RecordFilters } from "./record-sql";

/** A record as provenance views list it. */
export interface ProvenanceRow {
  id: string;
  step: string;
  scope: string;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  /** Direct sources (parents). */
  sourceCount: number;
  /** Null when no branch was given. */
  onBranch: boolean | null;
}

type RawRow = { id: string; step: string; scope: string; content: string; metadata: unknown; createdAt: Date; sources: number; on_branch: boolean | null };

const onBranchColumn = (params: Params, branchId: string | null) =>
  branchId ? `EXISTS (SELECT 1 FROM "BranchPointer" bp WHERE bp."branchId" = ${params.add(branchId)} AND bp."recordId" = r.id)` : "NULL::boolean";

const SUMMARY_COLUMNS = (params: Params, branchId: string | null) =>
  `r.id, r.step, r.scope, r.content, r.metadata, r."createdAt",
   (SELECT count(*)::int FROM "RecordEdge" e2 WHERE e2."childId" = r.id) AS sources,
   ${onBranchColumn(params, branchId)} AS on_branch`;

function toRow(r: RawRow): ProvenanceRow {
  return {
    id: r.id,
    step: r.step,
    scope: r.scope,
    content: r.content,
    metadata: parseJson<Record<string, unknown>>(r.metadata),
    createdAt: new Date(r.createdAt),
    sourceCount: r.sources,
    onBranch: r.on_branch,
  };
}

/** Whether a branch shows a record. */
export async function branchShows(db: Db, branchId: string, recordId: string): Promise<boolean> {
  const shown = await db.branchPointer.findFirst({ where: { branchId, recordId }, select: { recordId: true } });
  return !!shown;
}

/** Direct parents (one hop down the DAG), in their input order. */
export async function parentRows(db: Db, workspaceId: string, id: string, branchId: string | null): Promise<ProvenanceRow[]> {
  const params = new Params();
  const rows = await db.$queryRawUnsafe<RawRow[]>(
    `SELECT ${SUMMARY_COLUMNS(params, branchId)}
     FROM "RecordEdge" e JOIN "Record" r ON r.id = e."parentId" AND r."workspaceId" = e."workspaceId"
     WHERE e."childId" = ${params.add(id)} AND e."workspaceId" = ${params.add(workspaceId)}
     ORDER BY e.position, r.id`,
    ...params.values,
  );
  return rows.map(toRow);
}

/**
 * Leaf records (no sources of their own) reached from `id`, breadth-first, deduplicated, at most
 * `maxCount + 1` of them (one more says "truncated"); `depthLimited` when the walk stopped at
 * `maxDepth` with records that still have sources.
 */
export async function leafRows(
  db: Db,
  args: { workspaceId: string; id: string; branchId: string | null; maxDepth: number; maxCount: number },
): Promise<{ leaves: Array<ProvenanceRow & { depth: number }>; depthLimited: boolean }> {
  const params = new Params();
  const pId = params.add(args.id);
  const pWs = params.add(args.workspaceId);
  const pDepth = params.add(args.maxDepth, "int");
  const cols = SUMMARY_COLUMNS(params, args.branchId);
  const sql = `WITH RECURSIVE walk(id, depth) AS (
       SELECT ${pId}::text, 0
       UNION
       SELECT e."parentId", w.depth + 1 FROM walk w JOIN "RecordEdge" e ON e."childId" = w.id
       WHERE w.depth < ${pDepth} AND e."workspaceId" = ${pWs}),
     firsts AS (SELECT id, min(depth) AS depth FROM walk WHERE depth > 0 GROUP BY id),
     classified AS (
       SELECT f.id, f.depth, EXISTS (SELECT 1 FROM "RecordEdge" x WHERE x."childId" = f.id) AS has_sources FROM firsts f)
     SELECT ${cols}, c.depth, 'leaf' AS kind
     FROM classified c JOIN "Record" r ON r.id = c.id AND r."workspaceId" = ${pWs}
     WHERE NOT c.has_sources
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 'deep'
     WHERE EXISTS (SELECT 1 FROM classified c WHERE c.has_sources AND c.depth >= ${pDepth})
     ORDER BY depth, id LIMIT ${params.add(args.maxCount + 2, "int")}`;
  const rows = await db.$queryRawUnsafe<Array<RawRow & { depth: number; kind: string }>>(trace("leaves", sql, params.values), ...params.values);
  return {
    leaves: rows.filter((r) => r.kind === "leaf").map((r) => ({ ...toRow(r), depth: r.depth })),
    depthLimited: rows.some((r) => r.kind === "deep"),
  };
}

export interface LineageEdgeRow {
  parent: string;
  child: string;
  position: number;
  /** Hops from the start record to this edge's child, plus one (nearest). */
  depth: number;
}

/** Provenance edges under `id`, nearest first, at most `limit` of them. */
export async function lineageEdgeRows(db: Db, args: { workspaceId: string; id: string; maxDepth: number; limit: number }): Promise<LineageEdgeRow[]> {
  return db.$queryRawUnsafe<LineageEdgeRow[]>(
    `WITH RECURSIVE walk(parent, child, position, depth) AS (
       SELECT e."parentId", e."childId", e.position, 1 FROM "RecordEdge" e WHERE e."childId" = $1 AND e."workspaceId" = $2
       UNION
       SELECT e."parentId", e."childId", e.position, w.depth + 1 FROM walk w JOIN "RecordEdge" e ON e."childId" = w.parent
       WHERE w.depth < $3 AND e."workspaceId" = $2)
     SELECT parent, child, position, min(depth)::int AS depth FROM walk GROUP BY 1, 2, 3 ORDER BY depth, child, position LIMIT $4`,
    args.id,
    args.workspaceId,
    args.maxDepth,
    args.limit,
  );
}

/** These records (unordered), as provenance views list them. */
export async function provenanceRows(db: Db, workspaceId: string, ids: string[], branchId: string | null): Promise<ProvenanceRow[]> {
  const params = new Params();
  const cols = SUMMARY_COLUMNS(params, branchId);
  const rows = await db.$queryRawUnsafe<RawRow[]>(
    `SELECT ${cols} FROM "Record" r WHERE r.id = ANY(${params.add(ids, "text[]")}) AND r."workspaceId" = ${params.add(workspaceId)}`,
    ...params.values,
  );
  return rows.map(toRow);
}

export interface RecordDetailRow extends ProvenanceRow {
  pipelineId: string;
  stepVersionHash: string;
  materializationKey: string;
  contentFingerprint: string;
  audit: Record<string, unknown> | null;
  runId: string | null;
  childCount: number;
}

/** One record with its build facts and the count of records made from it; null when absent. */
export async function recordDetailRow(db: Db, workspaceId: string, id: string, branchId: string | null): Promise<RecordDetailRow | null> {
  const params = new Params();
  const cols = SUMMARY_COLUMNS(params, branchId);
  type Detail = RawRow & {
    pipelineId: string;
    stepVersionHash: string;
    materializationKey: string;
    contentFingerprint: string;
    audit: unknown;
    runId: string | null;
    children: number;
    call_audit: unknown;
  };
  // A split's item keeps its model call once, on the work item's first record (Audit.sharedCall):
  // the call's prompt, response and cost are read from there (same pipeline and work key).
  const [row] = await db.$queryRawUnsafe<Detail[]>(
    `SELECT ${cols}, r."pipelineId", r."stepVersionHash", r."materializationKey", r."contentFingerprint", r.audit, r."runId",
            (SELECT count(*)::int FROM "RecordEdge" c WHERE c."parentId" = r.id AND c."workspaceId" = r."workspaceId") AS children,
            CASE WHEN r.audit #>> '{sharedCall,index}' <> '0' THEN
              (SELECT h.audit FROM "Record" h WHERE h."pipelineId" = r."pipelineId" AND h."workKey" = r."workKey"
                 AND h.audit #>> '{sharedCall,index}' = '0' AND h."workspaceId" = r."workspaceId" LIMIT 1)
            END AS call_audit
     FROM "Record" r WHERE r.id = ${params.add(id)} AND r."workspaceId" = ${params.add(workspaceId)}`,
    ...params.values,
  );
  if (!row) return null;
  const audit = row.audit ? parseJson<Record<string, unknown>>(row.audit) : null;
  return {
    ...toRow(row),
    pipelineId: row.pipelineId,
    stepVersionHash: row.stepVersionHash,
    materializationKey: row.materializationKey,
    contentFingerprint: row.contentFingerprint,
    audit: audit && row.call_audit ? withSharedCall(audit, parseJson<Record<string, unknown>>(row.call_audit)) : audit,
    runId: row.runId ?? null,
    childCount: row.children,
  };
}

/** A split item's audit with its call's prompt, response, tokens, cost and latency (stored on the first item). */
function withSharedCall(own: Record<string, unknown>, call: Record<string, unknown>): Record<string, unknown> {
  const fields = ["renderedPrompt", "rawResponse", "tokensIn", "tokensOut", "costUsd", "latencyMs"];
  return { ...own, ...Object.fromEntries(fields.filter((f) => call[f] !== undefined && own[f] === undefined).map((f) => [f, call[f]])) };
}

/**
 * The records a branch shows for one step, newest first, keyset-paginated: at most `limit + 1`
 * rows (one more says there is a next page) older than `after` (createdAt, id).
 */
export async function stepPageRows(
  db: Db,
  args: { workspaceId: string; branchId: string; step: string; filters: RecordFilters; after: [string, string] | null; limit: number },
): Promise<ProvenanceRow[]> {
  const params = new Params();
  const where = [
    `p."branchId" = ${params.add(args.branchId)}`,
    `p.step = ${params.add(args.step)}`,
    `r."workspaceId" = ${params.add(args.workspaceId)}`,
    ...filterConditions(params, args.filters),
  ];
  if (args.after) where.push(`(r."createdAt", r.id) < (${params.add(args.after[0])}::timestamp, ${params.add(args.after[1])})`);
  const cols = SUMMARY_COLUMNS(params, null);
  const rows = await db.$queryRawUnsafe<RawRow[]>(
    `SELECT DISTINCT ${cols} FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
     WHERE ${where.join(" AND ")} ORDER BY r."createdAt" DESC, r.id DESC LIMIT ${params.add(args.limit + 1, "int")}`,
    ...params.values,
  );
  return rows.map(toRow);
}

// Neighbourhoods ------------------------------------------------------------------------------

/** A record as the lineage graph draws it: a preview and its edge counts both ways. */
export interface GraphRecordRow {
  id: string;
  step: string;
  scope: string;
  preview: string;
  onBranch: boolean | null;
  parentCount: number;
  childCount: number;
}

type RawGraphRow = { id: string; step: string; scope: string; preview: string; on_branch: boolean | null; parents: number; children: number };

const GRAPH_COLUMNS = (params: Params, branchId: string | null) =>
  `r.id, r.step, r.scope, left(r.content, 200) AS preview,
   (SELECT count(*)::int FROM "RecordEdge" x WHERE x."childId" = r.id) AS parents,
   (SELECT count(*)::int FROM "RecordEdge" x WHERE x."parentId" = r.id) AS children,
   ${onBranchColumn(params, branchId)} AS on_branch`;

const toGraphRow = (r: RawGraphRow): GraphRecordRow => ({
  id: r.id,
  step: r.step,
  scope: r.scope,
  preview: r.preview,
  onBranch: r.on_branch,
  parentCount: r.parents,
  childCount: r.children,
});

export async function graphRecordRow(db: Db, workspaceId: string, id: string, branchId: string | null): Promise<GraphRecordRow | null> {
  const params = new Params();
  const [row] = await db.$queryRawUnsafe<RawGraphRow[]>(
    `SELECT ${GRAPH_COLUMNS(params, branchId)} FROM "Record" r WHERE r.id = ${params.add(id)} AND r."workspaceId" = ${params.add(workspaceId)}`,
    ...params.values,
  );
  return row ? toGraphRow(row) : null;
}

/**
 * One side of a record's neighbourhood (parents: edges into it; children: edges out of it),
 * grouped by step: each group's count and its records `offset` … `offset + limit` (parents in
 * input order, children by id).
 */
export async function neighbourGroupRows(
  db: Db,
  args: { workspaceId: string; id: string; branchId: string | null; direction: "parents" | "children"; step?: string; offset: number; limit: number },
): Promise<Array<{ step: string; count: number; records: GraphRecordRow[] }>> {
  const [mine, other] = args.direction === "parents" ? [`"childId"`, `"parentId"`] : [`"parentId"`, `"childId"`];
  const order = args.direction === "parents" ? `e.position, r.id` : `r.id`;
  const params = new Params();
  const pId = params.add(args.id);
  const pWs = params.add(args.workspaceId);
  const stepFilter = args.step ? `AND r.step = ${params.add(args.step)}` : "";
  const counts = await db.$queryRawUnsafe<Array<{ step: string; count: number }>>(
    `SELECT r.step, count(*)::int AS count FROM "RecordEdge" e JOIN "Record" r ON r.id = e.${other} AND r."workspaceId" = e."workspaceId"
     WHERE e.${mine} = ${pId} AND e."workspaceId" = ${pWs} ${stepFilter} GROUP BY r.step ORDER BY r.step`,
    ...params.values,
  );
  if (counts.length === 0) return [];
  // Rank ids first, then read columns (content, counts) for the page only, not for all 1,000.
  const rows = await db.$queryRawUnsafe<Array<RawGraphRow & { n: number }>>(
    `WITH ranked AS (
       SELECT r.id, r.step, row_number() OVER (PARTITION BY r.step ORDER BY ${order}) AS n
       FROM "RecordEdge" e JOIN "Record" r ON r.id = e.${other} AND r."workspaceId" = e."workspaceId"
       WHERE e.${mine} = ${pId} AND e."workspaceId" = ${pWs} ${stepFilter}),
     page AS (SELECT id, n FROM ranked WHERE n > ${params.add(args.offset, "int")} AND n <= ${params.add(args.offset + args.limit, "int")})
     SELECT ${GRAPH_COLUMNS(params, args.branchId)}, page.n FROM page JOIN "Record" r ON r.id = page.id
     ORDER BY r.step, page.n`,
    ...params.values,
  );
  return counts.map((c) => ({ step: c.step, count: c.count, records: rows.filter((r) => r.step === c.step).map(toGraphRow) }));
}

/** Ancestors at least two hops away, counted per step (distinct records, nearest depth). */
export async function ancestorCountRows(db: Db, workspaceId: string, id: string, maxDepth: number): Promise<Array<{ step: string; depth: number; count: number }>> {
  return db.$queryRawUnsafe(
    `WITH RECURSIVE walk(id, depth) AS (
       SELECT $1::text, 0
       UNION
       SELECT e."parentId", w.depth + 1 FROM walk w JOIN "RecordEdge" e ON e."childId" = w.id
       WHERE w.depth < $3 AND e."workspaceId" = $2),
     firsts AS (SELECT id, min(depth) AS depth FROM walk GROUP BY id)
     SELECT r.step, min(f.depth)::int AS depth, count(*)::int AS count
     FROM firsts f JOIN "Record" r ON r.id = f.id AND r."workspaceId" = $2
     WHERE f.depth >= 2 GROUP BY r.step ORDER BY 2, 1`,
    id,
    workspaceId,
    maxDepth,
  );
}

// Lineage walks for many records at once (evals) -----------------------------------------------

const LINEAGE_MAX_DEPTH = 25;

/**
 * `walk(top, id, depth)`: every record on the lineage of each id in `$1` (itself included), through
 * provenance edges of workspace `$2`, up to LINEAGE_MAX_DEPTH hops.
 */
const LINEAGE_WALK = `WITH RECURSIVE walk(top, id, depth) AS (
   SELECT h, h, 0 FROM unnest($1::text[]) AS h
   UNION
   SELECT w.top, e."parentId", w.depth + 1 FROM walk w JOIN "RecordEdge" e ON e."childId" = w.id
   WHERE w.depth < ${LINEAGE_MAX_DEPTH} AND e."workspaceId" = $2)`;

/** For each of `ids`, the records of `steps` on its lineage, with their `custom.eval` metadata. */
export async function lineageRecordsOfSteps(
  db: Db,
  workspaceId: string,
  ids: string[],
  steps: string[],
): Promise<Array<{ top: string; id: string; evalMeta: { sample?: unknown; session?: unknown } | null }>> {
  const rows = await db.$queryRawUnsafe<Array<{ top: string; id: string; meta: unknown }>>(
    `${LINEAGE_WALK}
     SELECT DISTINCT w.top, w.id, r.metadata #> '{custom,eval}' AS meta, ${tieKey()} AS key
     FROM walk w JOIN "Record" r ON r.id = w.id
     WHERE r.step = ANY($3::text[]) AND r."workspaceId" = $2
     ORDER BY key`,
    ids,
    workspaceId,
    steps,
  );
  return rows.map((r) => ({ top: r.top, id: r.id, evalMeta: r.meta == null ? null : parseJson<{ sample?: unknown; session?: unknown } | null>(r.meta) }));
}

/**
 * For each of `ids`, the turn numbers (`custom.turns`) of the records on its lineage made directly
 * from a source record of `steps` (a window, an observation, a fact of one turn), with that
 * source's `custom.eval` metadata: which turns of which session a derived record came from.
 */
export async function lineageSourceTurns(
  db: Db,
  workspaceId: string,
  ids: string[],
  steps: string[],
): Promise<Array<{ top: string; turns: number[]; evalMeta: { sample?: unknown; session?: unknown } | null }>> {
  const rows = await db.$queryRawUnsafe<Array<{ top: string; turns: unknown; meta: unknown }>>(
    `${LINEAGE_WALK}
     SELECT DISTINCT w.top, r.metadata #> '{custom,turns}' AS turns, s.metadata #> '{custom,eval}' AS meta
     FROM walk w JOIN "Record" r ON r.id = w.id
     JOIN "RecordEdge" e ON e."childId" = r.id AND e."workspaceId" = $2
     JOIN "Record" s ON s.id = e."parentId"
     WHERE r."workspaceId" = $2 AND s."workspaceId" = $2 AND s.step = ANY($3::text[])
       AND jsonb_typeof(r.metadata #> '{custom,turns}') = 'array'`,
    ids,
    workspaceId,
    steps,
  );
  return rows.map((r) => {
    const turns = parseJson<unknown>(r.turns);
    return {
      top: r.top,
      turns: Array.isArray(turns) ? turns.filter((t): t is number => typeof t === "number" && Number.isInteger(t) && t > 0) : [],
      evalMeta: r.meta == null ? null : parseJson<{ sample?: unknown; session?: unknown } | null>(r.meta),
    };
  });
}

/** For each of `ids`, every record on its lineage (itself included) and whether it is a leaf (a source). */
export async function lineageMembers(db: Db, workspaceId: string, ids: string[]): Promise<Array<{ top: string; id: string; leaf: boolean }>> {
  return db.$queryRawUnsafe(
    `${LINEAGE_WALK}
     SELECT DISTINCT w.top, w.id,
            NOT EXISTS (SELECT 1 FROM "RecordEdge" p WHERE p."childId" = w.id AND p."workspaceId" = $2) AS leaf
     FROM walk w`,
    ids,
    workspaceId,
  );
}

// Per-branch reads for evals --------------------------------------------------------------------

/**
 * The records a named branch shows for one step (optionally one scope), in time order: records of
 * one time (the windows of a session) by their index in what they were split from, then by content
 * key (ids are random, so they must not order equal times).
 */
export async function branchStepRecords(
  db: Db,
  args: { workspaceId: string; pipelineId: string; branch: string; step: string; scope: string | null },
): Promise<Array<{ id: string; step: string; content: string }>> {
  return db.$queryRawUnsafe(
    `SELECT r.id, r.step, r.content FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
     JOIN "Branch" b ON b.id = p."branchId"
     WHERE b."pipelineId" = $1 AND b.name = $2 AND p.step = $3 AND ($4::text IS NULL OR r.scope = $4) AND r."workspaceId" = $5
     ORDER BY r.metadata #>> '{time,created_at}' NULLS LAST,
              CASE WHEN jsonb_typeof(r.metadata #> '{step,index}') = 'number' THEN (r.metadata #>> '{step,index}')::numeric END NULLS LAST, ${tieKey()}`,
    args.pipelineId,
    args.branch,
    args.step,
    args.scope,
    args.workspaceId,
  );
}

/** What the records a named branch shows cost to build, per step (from each record's audit). */
export async function branchBuildCostPerStep(
  db: Db,
  args: { workspaceId: string; pipelineId: string; branch: string },
): Promise<Array<{ step: string; records: number; tokensIn: number; tokensOut: number; costUsd: number }>> {
  const rows = await db.$queryRawUnsafe<Array<{ step: string; records: number; tokens_in: number; tokens_out: number; cost: number }>>(
    `SELECT p.step, count(*)::int AS records,
            COALESCE(sum((r.audit->>'tokensIn')::float8), 0)::float8 AS tokens_in,
            COALESCE(sum((r.audit->>'tokensOut')::float8), 0)::float8 AS tokens_out,
            COALESCE(sum((r.audit->>'costUsd')::float8), 0)::float8 AS cost
     FROM "BranchPointer" p JOIN "Branch" b ON b.id = p."branchId" JOIN "Record" r ON r.id = p."recordId"
     WHERE b."pipelineId" = $1 AND b.name = $2 AND r."workspaceId" = $3 GROUP BY p.step ORDER BY p.step`,
    args.pipelineId,
    args.branch,
    args.workspaceId,
  );
  return rows.map((r) => ({ step: r.step, records: r.records, tokensIn: Number(r.tokens_in), tokensOut: Number(r.tokens_out), costUsd: Number(r.cost) }));
}

// Top-down walks (search/walk.ts) ---------------------------------------------------------------

/** A record as a walk reads it: content, metadata and its time; `parentId` is the record it was reached from. */
export type WalkRow = { id: string; step: string; scope: string; content: string; metadata: unknown; time: string | null; key: string; parentId?: string | null };

const WALK_COLUMNS = `r.id, r.step, r.scope, r.content, r.metadata, r.metadata #>> '{time,created_at}' AS time, ${tieKey()} AS key`;

/** Every record a branch shows for one step, optionally within a scope (and its sub-scopes). */
export async function stepRowsInScope(db: Db, args: { workspaceId: string; branchId: string; step: string; scope?: string }): Promise<WalkRow[]> {
  const p = new Params();
  return db.$queryRawUnsafe<WalkRow[]>(
    `SELECT ${WALK_COLUMNS} FROM "BranchPointer" bp JOIN "Record" r ON r.id = bp."recordId"
     WHERE bp."branchId" = ${p.add(args.branchId)} AND bp.step = ${p.add(args.step)} AND r."workspaceId" = ${p.add(args.workspaceId)}
     ${filterConditions(p, { scope: args.scope })
       .map((c) => `AND ${c}`)
       .join(" ")}
     ORDER BY key`,
    ...p.values,
  );
}

/**
 * The records of `step` a branch shows that are provenance parents of one of `children` (each once,
 * with the child it was reached from: of several, the one it is earliest an input of, then the
 * child's content key — never the order the edges were read in).
 */
export async function parentRowsOfStep(db: Db, args: { workspaceId: string; branchId: string; step: string; children: string[] }): Promise<WalkRow[]> {
  const p = new Params();
  return db.$queryRawUnsafe<WalkRow[]>(
    `SELECT DISTINCT ON (r.id) ${WALK_COLUMNS}, e."childId" AS "parentId"
     FROM "RecordEdge" e JOIN "Record" r ON r.id = e."parentId" AND r."workspaceId" = e."workspaceId"
     JOIN "Record" c ON c.id = e."childId"
     JOIN "BranchPointer" bp ON bp."recordId" = r.id AND bp."branchId" = ${p.add(args.branchId)} AND bp.step = ${p.add(args.step)}
     WHERE e."childId" = ANY(${p.add(args.children, "text[]")}) AND e."workspaceId" = ${p.add(args.workspaceId)}
     ORDER BY r.id, e.position, ${tieKey("c")}`,
    ...p.values,
  );
}

/** The direct sources of each of `ids`, in input order. */
export async function directSourceRows(
  db: Db,
  workspaceId: string,
  ids: string[],
): Promise<Array<{ childId: string; id: string; step: string; scope: string; content: string; metadata: unknown }>> {
  const p = new Params();
  return db.$queryRawUnsafe(
    `SELECT e."childId", r.id, r.step, r.scope, r.content, r.metadata FROM "RecordEdge" e
     JOIN "Record" r ON r.id = e."parentId" AND r."workspaceId" = e."workspaceId"
     WHERE e."childId" = ANY(${p.add(ids, "text[]")}) AND e."workspaceId" = ${p.add(workspaceId)}
     ORDER BY e.position, r.id`,
    ...p.values,
  );
}
