/**
 * A record's lineage one hop at a time, for a graph that stays readable at any size: its parents
 * (sources) and children (what was made from it), grouped by step with counts and the first
 * `limit` records of each group. The UI opens on this neighbourhood and expands on click
 * (another record's neighbourhood, or more records of one group), so a record with 1,000 sources
 * costs one grouped query and a handful of nodes, not a 1,000-node tree.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { ancestorCountRows, graphRecordRow, neighbourGroupRows, type GraphRecordRow } from "../store/provenance-reads";
import { startAt, type BranchRef } from "./provenance";

export type LineageRecord = GraphRecordRow;

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

/** The record, and its parents and children grouped by step (counts + the first records of each). */
export async function neighbourhood(db: Db, workspaceId: string, id: string, options: NeighbourhoodOptions = {}, ref?: BranchRef): Promise<Neighbourhood> {
  const limit = Math.min(200, Math.max(1, Math.floor(options.limit ?? 25)));
  const offset = Math.max(0, Math.floor(options.offset ?? 0));
  if (options.offset && !(options.direction && options.step)) throw badRequest("An offset needs a direction and a step (the group to page through).");
  const branchId = await startAt(db, workspaceId, id, ref);

  const record = await graphRecordRow(db, workspaceId, id, branchId);
  if (!record) throw notFound(`Record "${id.slice(0, 100)}" not found in this workspace.`);
  const groups: NeighbourGroup[] = [];
  for (const direction of ["parents", "children"] as const) {
    if (options.direction && options.direction !== direction) continue;
    const found = await neighbourGroupRows(db, { workspaceId, id, branchId, direction, step: options.step, offset, limit });
    for (const g of found) groups.push({ direction, ...g });
  }
  return { record, groups };
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
  return ancestorCountRows(db, workspaceId, id, Math.min(50, Math.max(2, Math.floor(maxDepth))));
}
