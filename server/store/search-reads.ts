/**
 * The reads search makes besides BM25 (server/store/lexical-scores.ts): nearest neighbours by
 * embedding (exact over a filtered set, or HNSW), literal phrases in records, the shape of
 * candidates (direct sources, turn numbers), derived → lower pairs for unscoped dedupe, and the
 * final rows with snippets. Every read is workspace-filtered and branch-aware.
 */
import type { Db } from "../core/db";
import { byTieKey, filterConditions, likeEscape, narrowsRecords, normalizeScope, onBranch, Params, tieKey, trace, type RecordFilters } from "./record-sql";
import { prepared } from "./prepared-statements";

/** A record's time for ranking and filters: its metadata time, else when it was stored. */
export const TIME_EXPR = `COALESCE(r.metadata #>> '{time,created_at}', to_char(r."createdAt", 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))`;

export interface BranchSteps {
  workspaceId: string;
  branchId: string;
  steps: string[];
}

/** A nearest-neighbour read: the query vector (pgvector text) of a model, and how many to return. */
type Knn = BranchSteps & { filters: RecordFilters; vector: string; dims: number; model: string; n: number };
/** An exact read also names the pipeline (embeddings carry it) and gives up over `maxCandidates`. */
type ExactKnn = Knn & { pipelineId: string; maxCandidates: number };

/** Conditions on `r`: in the workspace, one of the steps, on the branch, and the filters. */
export function recordConditions(params: Params, where: BranchSteps, filters: RecordFilters): string[] {
  return [
    `r."workspaceId" = ${params.add(where.workspaceId)}`,
    `r.step = ANY(${params.add(where.steps, "text[]")})`,
    onBranch(params, where.branchId, where.steps),
    ...filterConditions(params, filters),
  ];
}

function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

export interface Neighbour {
  id: string;
  step: string;
  time: string | null;
  dist: number;
  /** Tie-break of equal distances (see tieKey). */
  key: string;
}

/**
 * Exact cosine distances over the filtered records, unless there are more than `maxCandidates`
 * of them (then nothing: the caller takes the HNSW path).
 */
export async function nearestExact(
  db: Db,
  args: ExactKnn,
): Promise<Neighbour[]> {
  if (onlyScope(args.filters)) return nearestInScope(db, args);
  const params = new Params();
  const v = params.add(args.vector, `vector(${args.dims})`);
  const where = recordConditions(params, args, args.filters);
  // LATERAL: one primary-key probe per candidate (a plain join let the planner hash every
  // embedding of the model, not knowing the candidate set is small). OFFSET 0 keeps the subquery
  // from being pulled up into that same hash join over a sequential scan of the embeddings.
  const sql = `WITH cand AS MATERIALIZED (
       SELECT r.id, r.step, ${TIME_EXPR} AS t, ${tieKey()} AS key FROM "Record" r WHERE ${where.join(" AND ")} LIMIT ${args.maxCandidates + 1})
     SELECT c.id, c.step, c.t, c.key, (e.vector::vector(${args.dims}) <=> ${v})::float8 AS dist
     FROM cand c CROSS JOIN LATERAL (SELECT x.vector FROM "Embedding" x WHERE x."recordId" = c.id AND x.model = ${sqlString(args.model)} OFFSET 0) e
     WHERE (SELECT count(*) FROM cand) <= ${args.maxCandidates}
     ORDER BY dist, c.key LIMIT ${params.add(args.n, "int")}`;
  const rows = await db.$queryRawUnsafe<NeighbourRow[]>(trace("semantic-exact", sql, params.values), ...params.values);
  return rows.map(neighbour);
}

type NeighbourRow = { id: string; step: string; t: string | null; dist: number; key: string };
const neighbour = (r: NeighbourRow): Neighbour => ({ id: r.id, step: r.step, time: r.t, dist: Number(r.dist), key: r.key });

/** The filters narrow by scope and by nothing else (the common case: one user's or one team's memory). */
function onlyScope(f: RecordFilters): boolean {
  return !!normalizeScope(f.scope) && !narrowsRecords({ ...f, scope: undefined });
}

/**
 * Exact KNN over one scope, from the embeddings alone: each embedding row carries its record's
 * pipeline, step and scope, so the scope's vectors come through Embedding_scope_idx in one pass
 * (no per-candidate probe of "Record" and "BranchPointer"). Rows of the pipeline that the branch
 * does not show (other branches, superseded step versions) are skipped as the sorted list is read,
 * so the branch is probed for about `n` records, not for every candidate.
 *
 * Up to HALF_MAX_DIMS dimensions the index carries a half-precision copy of each unit vector
 * (migration embedding_scope_halfvec): the scope is read by an index-only scan, its half-precision
 * distances choose a pool of the nearest, and the pool is ranked by the full-precision vectors.
 * Half precision moves a cosine distance by at most HALF_DIST_ERROR, so when the pool reaches that
 * far past its n-th record it holds the exact answer; otherwise (never seen outside a test) the
 * full-precision read below answers.
 */
async function nearestInScope(
  db: Db,
  args: ExactKnn,
): Promise<Neighbour[]> {
  if (args.dims <= HALF_MAX_DIMS) {
    const pooled = await nearestInScopeHalf(db, args, 2 * args.n + 50);
    if (pooled) return pooled;
  }
  const params = new Params();
  const v = params.add(args.vector, `vector(${args.dims})`);
  const where = scopeConditions(params, args);
  const sql = `WITH cand AS MATERIALIZED (
       SELECT x."recordId" AS id, x.step, (x.vector::vector(${args.dims}) <=> ${v})::float8 AS dist
       FROM "Embedding" x WHERE ${where.join(" AND ")} LIMIT ${args.maxCandidates + 1})
     SELECT c.id, c.step, (SELECT ${TIME_EXPR} FROM "Record" r WHERE r.id = c.id) AS t, (SELECT ${tieKey()} FROM "Record" r WHERE r.id = c.id) AS key, c.dist
     FROM (SELECT * FROM cand ORDER BY dist OFFSET 0) c
     WHERE (SELECT count(*) FROM cand) <= ${args.maxCandidates} AND ${onBranch(params, args.branchId, args.steps, "c")}
     ORDER BY c.dist FETCH FIRST (${params.add(args.n, "int")}) ROWS WITH TIES`;
  // Every record tied with the n-th is read, so the tie-break below picks the same ones each time.
  const rows = await db.$queryRawUnsafe<NeighbourRow[]>(trace("semantic-scope", sql, params.values), ...params.values);
  return rows.map(neighbour).sort((a, b) => a.dist - b.dist || byTieKey(a, b)).slice(0, args.n);
}

/** Embeddings up to this many dimensions carry a half-precision copy (migration embedding_scope_halfvec). */
export const HALF_MAX_DIMS = 1000;
/**
 * A bound on how far half precision moves the cosine distance of two unit vectors (each component
 * rounded by at most 2^-11 of itself: at most about 2 × 2^-11 in the cosine), with room to spare.
 */
export const HALF_DIST_ERROR = 0.002;

function scopeConditions(params: Params, args: ExactKnn): string[] {
  return [
    `x."pipelineId" = ${params.add(args.pipelineId)}`,
    `x.model = ${sqlString(args.model)}`,
    `x.step = ANY(${params.add(args.steps, "text[]")})`,
    `x."workspaceId" = ${params.add(args.workspaceId)}`,
    ...filterConditions(params, { scope: args.filters.scope }, "x"),
  ];
}

/**
 * nearestInScope through the half-precision copies: `pool` nearest by half precision on the branch,
 * ranked by full precision. Null when the pool may miss one of the exact n nearest (the caller
 * then reads full precision); [] when the scope has more than maxCandidates embeddings.
 */
async function nearestInScopeHalf(db: Db, args: ExactKnn, pool: number): Promise<Neighbour[] | null> {
  const params = new Params();
  const v = params.add(args.vector, `vector(${args.dims})`);
  const scope = normalizeScope(args.filters.scope)!;
  const where = scopeConditions(params, { ...args, filters: {} }).join(" AND ");
  // The scope and the scopes under it: two index-only reads of Embedding_scope_idx (an OR of the
  // two would be a bitmap scan, which visits the table).
  const read = `SELECT x."recordId" AS id, x.step, (x.half <=> l2_normalize(${v})::halfvec(${args.dims}))::float8 AS hd FROM "Embedding" x WHERE ${where}`;
  const sql = `WITH cand AS MATERIALIZED (
       ${read} AND x.scope = ${params.add(scope)}
       UNION ALL ${read} AND x.scope LIKE ${params.add(`${likeEscape(scope)}:%`)}
       LIMIT ${args.maxCandidates + 1}),
     near AS MATERIALIZED (
       SELECT c.id, c.step, c.hd FROM (SELECT * FROM cand ORDER BY hd OFFSET 0) c
       WHERE ${onBranch(params, args.branchId, args.steps, "c")} LIMIT ${params.add(pool, "int")}),
     exact AS MATERIALIZED (
       SELECT n.id, n.step, n.hd, (SELECT (e.vector::vector(${args.dims}) <=> ${v})::float8 FROM "Embedding" e WHERE e."recordId" = n.id AND e.model = ${sqlString(args.model)}) AS dist
       FROM near n)
     SELECT c.id, c.step, r.t, r.key, c.dist, (SELECT max(hd) FROM exact) AS farthest, (SELECT count(*) FROM exact)::int AS pooled
     FROM (SELECT * FROM exact ORDER BY dist FETCH FIRST (${params.add(args.n, "int")}) ROWS WITH TIES) c
     CROSS JOIN LATERAL (SELECT ${TIME_EXPR} AS t, ${tieKey()} AS key FROM "Record" r WHERE r.id = c.id) r
     WHERE (SELECT count(*) FROM cand) <= ${args.maxCandidates}`;
  // Every record tied with the n-th is read, so the tie-break below picks the same ones each time.
  const rows = await db.$queryRawUnsafe<Array<NeighbourRow & { farthest: number; pooled: number }>>(trace("semantic-scope-half", sql, params.values), ...params.values);
  const ranked = rows.map(neighbour).sort((a, b) => a.dist - b.dist || byTieKey(a, b));
  const nth = ranked[Math.min(args.n, ranked.length) - 1];
  // A full pool: a record outside it is at least as far as the pool's farthest by half precision,
  // so its exact distance is at least that less the error. Unless that is beyond the n-th's exact
  // distance (a tie included), a record outside the pool could belong in the answer.
  if (rows.length > 0 && rows[0]!.pooled >= pool && nth && !(Number(rows[0]!.farthest) - HALF_DIST_ERROR > nth.dist)) return null;
  return ranked.slice(0, args.n);
}

/**
 * Nearest neighbours through the model's HNSW index, filters applied as the index streams (iterative scan).
 *
 * One statement: the scan's settings are made by `set_config(…, is_local => true)` in an uncorrelated
 * subquery of a condition that reads no row. PostgreSQL plans such a condition as an InitPlan behind a
 * one-time filter above the scan, so the settings are in place before the index returns its first row,
 * and they end with the statement's transaction like SET LOCAL (instead of BEGIN, two SET LOCALs, the
 * read and COMMIT: five round trips per search).
 */
export async function nearestHnsw(db: Db, args: Knn): Promise<Neighbour[]> {
  const params = new Params();
  const v = params.add(args.vector, `vector(${args.dims})`);
  const where = recordConditions(params, args, args.filters);
  const efSearch = Math.max(40, Math.min(1000, args.n * 2));
  const settings = `(SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true) || set_config('hnsw.ef_search', '${efSearch}', true)) IS NOT NULL`;
  const sql = `SELECT r.id, r.step, ${TIME_EXPR} AS t, ${tieKey()} AS key, (e.vector::vector(${args.dims}) <=> ${v})::float8 AS dist
     FROM "Embedding" e JOIN "Record" r ON r.id = e."recordId"
     WHERE ${settings} AND e.model = ${sqlString(args.model)} AND ${where.join(" AND ")}
     ORDER BY e.vector::vector(${args.dims}) <=> ${v} LIMIT ${params.add(args.n, "int")}`;
  const rows = await db.$queryRawUnsafe<NeighbourRow[]>(trace("semantic-hnsw", sql, params.values), ...params.values);
  return rows.map(neighbour).sort((a, b) => a.dist - b.dist || byTieKey(a, b));
}

/** Records containing `phrase` literally (case-insensitive), newest first. */
export async function phraseRecords(db: Db, args: BranchSteps & { filters: RecordFilters; phrase: string; n: number }) {
  const params = new Params();
  const where = [`strpos(lower(r.content), lower(${params.add(args.phrase)})) > 0`, ...recordConditions(params, args, args.filters)];
  return db.$queryRawUnsafe<Array<{ id: string; step: string; t: string | null; key: string }>>(
    `SELECT r.id, r.step, ${TIME_EXPR} AS t, ${tieKey()} AS key FROM "Record" r WHERE ${where.join(" AND ")}
     ORDER BY t DESC NULLS LAST, key LIMIT ${params.add(args.n, "int")}`,
    ...params.values,
  );
}

export interface CandidateShape {
  /**
   * Direct sources (one hop up the provenance), in input order: an edge's position is its index in
   * the child's sources, unique per child, so no read of the parents is needed to order them.
   */
  parents: string[];
  /** `metadata.custom.turns` of a turn window: the turn numbers it holds. */
  turns: number[] | null;
  /** Other records of the set reachable up this one's provenance, each with its fewest hops (within `maxDepth`). */
  lower: Array<{ id: string; depth: number }>;
}

/**
 * Direct sources and turn numbers of each record, and — within `maxDepth` hops up the provenance —
 * which other records of the set it was derived from (0: none asked). One statement for what
 * ranking needs about the candidates (it was two: shapes, then the walk for the altitude dedupe).
 */
export async function candidateShapes(db: Db, workspaceId: string, ids: string[], maxDepth = 0): Promise<Map<string, CandidateShape>> {
  if (ids.length === 0) return new Map();
  const depth = ids.length < 2 ? 0 : Math.max(0, maxDepth);
  // The walk keeps every (top, id, depth) it reaches (UNION), so each pair's fewest hops is found.
  const sql = `WITH RECURSIVE walk(top, id, depth) AS (
       SELECT h, h, 0 FROM unnest($1::text[]) AS h
       UNION
       SELECT w.top, e."parentId", w.depth + 1 FROM walk w JOIN "RecordEdge" e ON e."childId" = w.id
       WHERE w.depth < $3 AND e."workspaceId" = $2),
     lower AS (
       SELECT top, array_agg(id ORDER BY id) AS ids, array_agg(depth ORDER BY id) AS depths
       FROM (SELECT top, id, min(depth) AS depth FROM walk WHERE depth > 0 AND id = ANY($1::text[]) GROUP BY top, id) p GROUP BY top)
     SELECT r.id, COALESCE((SELECT array_agg(e."parentId" ORDER BY e.position, e."parentId") FROM "RecordEdge" e WHERE e."childId" = r.id AND e."workspaceId" = $2), '{}') AS parents,
            CASE WHEN jsonb_typeof(r.metadata #> '{custom,turns}') = 'array' THEN r.metadata #> '{custom,turns}' END AS turns,
            l.ids AS lower, l.depths AS "lowerDepth"
     FROM "Record" r LEFT JOIN lower l ON l.top = r.id WHERE r.id = ANY($1::text[]) AND r."workspaceId" = $2`;
  const params = [ids, workspaceId, depth];
  const rows = await db.$queryRawUnsafe<Array<{ id: string; parents: string[]; turns: unknown; lower: string[] | null; lowerDepth: number[] | null }>>(
    prepared(trace("shapes", sql, params)),
    ...params,
  );
  const out = new Map<string, CandidateShape>();
  for (const r of rows) {
    const turns = typeof r.turns === "string" ? (JSON.parse(r.turns) as unknown) : r.turns;
    out.set(r.id, {
      parents: r.parents ?? [],
      turns: Array.isArray(turns) && turns.length && turns.every((t) => typeof t === "number") ? (turns as number[]) : null,
      lower: (r.lower ?? []).map((id, i) => ({ id, depth: Number(r.lowerDepth![i]) })),
    });
  }
  return out;
}

export interface HitRow {
  id: string;
  step: string;
  scope: string;
  content: string;
  metadata: unknown;
  createdAt: Date;
  headline: string | null;
  sources: number;
}

/** The final hits' rows, with a `ts_headline` snippet for `headline.tsquery` (markers `start`/`stop`). */
export async function hitRows(db: Db, workspaceId: string, ids: string[], headline: { tsquery: string; start: string; stop: string } | null): Promise<HitRow[]> {
  if (ids.length === 0) return [];
  const params = new Params();
  const idList = params.add(ids, "text[]");
  const ws = params.add(workspaceId);
  const headlineSql = headline
    ? `ts_headline('english', left(r.content, 20000), ${params.add(headline.tsquery, "tsquery")}, ${params.add(
        `StartSel=${headline.start}, StopSel=${headline.stop}, MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`,
      )})`
    : `NULL::text`;
  return db.$queryRawUnsafe<HitRow[]>(
    prepared(`SELECT r.id, r.step, r.scope, r.content, r.metadata, r."createdAt", ${headlineSql} AS headline,
            (SELECT count(*)::int FROM "RecordEdge" e WHERE e."childId" = r.id) AS sources
     FROM "Record" r WHERE r.id = ANY(${idList}) AND r."workspaceId" = ${ws}`),
    ...params.values,
  );
}
