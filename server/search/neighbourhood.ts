/**
 * A record's lineage one hop at a time, for a graph that stays readable at any size: its parents
 * (sources) and children (what was made from it), grouped by step with counts and the first
 * `limit` records of each group. The UI opens on this neighbourhood and expands on click
 * (another record's neighbourhood, or more records of one group), so a record with 1,000 sources
 * costs one grouped query and a handful of nodes, not a 1,000-node tree.
 */
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { Params } from "./context";
import { startAt, type BranchRef } from "./provenance";

export interface LineageRecord {
  id: string;
  step: string;
  scope: string;
  preview: string;
  /** Null when no branch was given. */
  onBranch: boolean | null;
  parentCount: number;
  childCount: number;
}

export interface NeighbourGroup {
  direction: "parents" | "children";
  step: string;
  /** All records of this step on this side. */
  count: number;
  /** Records `offset` … `offset + limit` of the group (parents in input order, children by id). */
  records: LineageRecord[];
}

export interface NeighbourhoodOptions {
  /** Records returned per group (default 25, at most 200). */
  limit?: number;
  /** Only this side and step, from this offset: the "more" of one group. */
  direction?: "parents" | "children";
  step?: string;
  offset?: number;
}

export interface Neighbourhood {
  record: LineageRecord;
  groups: NeighbourGroup[];
}

type Row = { id: string; step: string; scope: string; preview: string; on_branch: boolean | null; parents: number; children: number };

const RECORD_COLUMNS = (params: Params, branchId: string | null) =>
  `r.id, r.step, r.scope, left(r.content, 200) AS preview,
   (SELECT count(*)::int FROM "RecordEdge" x WHERE x."childId" = r.id) AS parents,
   (SELECT count(*)::int FROM "RecordEdge" x WHERE x."parentId" = r.id) AS children,
   ${branchId ? `EXISTS (SELECT 1 FROM "BranchPointer" bp WHERE bp."branchId" = ${params.add(branchId)} AND bp."recordId" = r.id)` : "NULL::boolean"} AS on_branch`;

const toRecord = (r: Row): LineageRecord => ({
  id: r.id,
  step: r.step,
  scope: r.scope,
  preview: r.preview,
  onBranch: r.on_branch,
  parentCount: r.parents,
  childCount: r.children,
});

/** The record, and its parents and children grouped by step (counts + the first records of each). */
export async function neighbourhood(db: Db, workspaceId: string, id: string, options: NeighbourhoodOptions = {}, ref?: BranchRef): Promise<Neighbourhood> {
  const limit = Math.min(200, Math.max(1, Math.floor(options.limit ?? 25)));
  const offset = Math.max(0, Math.floor(options.offset ?? 0));
  if (options.offset && !(options.direction && options.step)) throw badRequest("An offset needs a direction and a step (the group to page through).");
  const branchId = await startAt(db, workspaceId, id, ref);

  const self = new Params();
  const [me] = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${RECORD_COLUMNS(self, branchId)} FROM "Record" r WHERE r.id = ${self.add(id)} AND r."workspaceId" = ${self.add(workspaceId)}`,
    ...self.values,
  );

  const groups: NeighbourGroup[] = [];
  for (const direction of ["parents", "children"] as const) {
    if (options.direction && options.direction !== direction) continue;
    // parents: edges into this record; children: edges out of it.
    const [mine, other] = direction === "parents" ? [`"childId"`, `"parentId"`] : [`"parentId"`, `"childId"`];
    const order = direction === "parents" ? `e.position, r.id` : `r.id`;
    const params = new Params();
    const pId = params.add(id);
    const pWs = params.add(workspaceId);
    const stepFilter = options.step ? `AND r.step = ${params.add(options.step)}` : "";
    const counts = await db.$queryRawUnsafe<Array<{ step: string; count: number }>>(
      `SELECT r.step, count(*)::int AS count FROM "RecordEdge" e JOIN "Record" r ON r.id = e.${other} AND r."workspaceId" = e."workspaceId"
       WHERE e.${mine} = ${pId} AND e."workspaceId" = ${pWs} ${stepFilter} GROUP BY r.step ORDER BY r.step`,
      ...params.values,
    );
    if (counts.length === 0) continue;
    // Rank ids first, then read columns (content, counts) for the page only, not for all 1,000.
    const rows = await db.$queryRawUnsafe<Array<Row & { n: number }>>(
      `WITH ranked AS (
         SELECT r.id, r.step, row_number() OVER (PARTITION BY r.step ORDER BY ${order}) AS n
         FROM "RecordEdge" e JOIN "Record" r ON r.id = e.${other} AND r."workspaceId" = e."workspaceId"
         WHERE e.${mine} = ${pId} AND e."workspaceId" = ${pWs} ${stepFilter}),
       page AS (SELECT id, n FROM ranked WHERE n > ${params.add(offset, "int")} AND n <= ${params.add(offset + limit, "int")})
       SELECT ${RECORD_COLUMNS(params, branchId)}, page.n FROM page JOIN "Record" r ON r.id = page.id
       ORDER BY r.step, page.n`,
      ...params.values,
    );
    for (const c of counts) {
      groups.push({ direction, step: c.step, count: c.count, records: rows.filter((r) => r.step === c.step).map(toRecord) });
    }
  }
  return { record: toRecord(me!), groups };
}

export interface AncestorGroup {
  step: string;
  /** Hops from the record to the nearest ancestor of this step (2 or more: parents are the groups above). */
  depth: number;
  count: number;
}

/**
 * Ancestors beyond the parents, as counts per step (distinct records, nearest depth): the rest of
 * the path down to the raw sources, without listing thousands of records. A walk over every
 * ancestor (seconds for thousands on the embedded database), so the graph loads it after the
 * neighbourhood it opens on.
 */
export async function ancestorsByStep(db: Db, workspaceId: string, id: string, ref?: BranchRef, maxDepth = 10): Promise<AncestorGroup[]> {
  await startAt(db, workspaceId, id, ref);
  return db.$queryRawUnsafe<AncestorGroup[]>(
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
    Math.min(50, Math.max(2, Math.floor(maxDepth))),
  );
}
