/**
 * Drill-down through provenance: `sources` (one hop), `leaves` (breadth-first, deduplicated,
 * depth/count bounded) and `lineage` (bounded tree) — recursive CTEs on "RecordEdge", always
 * filtered by the workspace. With a branch, the starting record must be one the branch shows;
 * provenance itself is immutable, so every returned record carries `onBranch`.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import {
  branchShows,
  leafRows,
  lineageEdgeRows,
  parentRows,
  provenanceRows,
  recordDetailRow,
  type RecordDetailRow,
  stepPageRows,
  type ProvenanceRow,
} from "../store/provenance-reads";
import { normalizeScope, requireRecord, requireSteps, resolveBranch, type RecordFilters } from "./context";

export type RecordSummary = ProvenanceRow;

export interface BranchRef {
  pipelineId: string;
  branch?: string;
}

/** Workspace check, plus (with a branch) that the record belongs to that pipeline and is shown by the branch. Returns the branch id. */
export async function startAt(db: Db, workspaceId: string, id: string, ref?: BranchRef): Promise<string | null> {
  if (typeof id !== "string" || !id || id.length > 200) throw badRequest("A record id is required.");
  const rec = await requireRecord(db, workspaceId, id);
  if (!ref) return null;
  const ctx = await resolveBranch(db, workspaceId, ref.pipelineId, ref.branch);
  if (rec.pipelineId !== ctx.pipelineId) throw notFound(`Record "${id}" is not in pipeline "${ref.pipelineId}".`);
  if (!(await branchShows(db, ctx.branchId, id))) throw notFound(`Record "${id}" is not on branch "${ctx.branchName}".`);
  return ctx.branchId;
}

/** Direct parents (one hop down the DAG), in their input order. */
export async function sources(db: Db, workspaceId: string, id: string, ref?: BranchRef): Promise<RecordSummary[]> {
  const branchId = await startAt(db, workspaceId, id, ref);
  return parentRows(db, workspaceId, id, branchId);
}

export interface LeavesOptions {
  maxDepth?: number;
  maxCount?: number;
}

export interface LeavesResult {
  leaves: Array<RecordSummary & { depth: number }>;
  /** More leaves exist than maxCount. */
  truncated: boolean;
  /** The walk stopped at maxDepth with records still having sources. */
  depthLimited: boolean;
}

/** Deduplicated leaf records (no sources of their own), breadth-first, bounded. */
export async function leaves(db: Db, workspaceId: string, id: string, options: LeavesOptions = {}, ref?: BranchRef): Promise<LeavesResult> {
  const maxDepth = Math.min(50, Math.max(1, Math.floor(options.maxDepth ?? 10)));
  const maxCount = Math.min(10_000, Math.max(1, Math.floor(options.maxCount ?? 100)));
  const branchId = await startAt(db, workspaceId, id, ref);
  const { leaves: found, depthLimited } = await leafRows(db, { workspaceId, id, branchId, maxDepth, maxCount });
  return { leaves: found.slice(0, maxCount), truncated: found.length > maxCount, depthLimited };
}

export interface LineageNode {
  id: string;
  step: string;
  scope: string;
  preview: string;
  depth: number;
  onBranch: boolean | null;
  /** The caller may not see this record (another scope): its place stays, its scope and preview are blank. */
  redacted?: boolean;
}

export interface LineageTree {
  id: string;
  step: string;
  preview: string;
  /** This node already appears elsewhere in the tree (a diamond): its children are there. */
  repeated?: boolean;
  /** The caller may not see this record (another scope): its preview is blank. */
  redacted?: boolean;
  children: LineageTree[];
}

export interface LineageResult {
  root: string;
  nodes: LineageNode[];
  edges: Array<{ parent: string; child: string; position: number }>;
  tree: LineageTree;
  truncated: boolean;
}

/** The tree of sources of a record, bounded by depth and node count. */
export async function lineage(
  db: Db,
  workspaceId: string,
  id: string,
  options: { maxDepth?: number; maxNodes?: number } = {},
  ref?: BranchRef,
): Promise<LineageResult> {
  const maxDepth = Math.min(50, Math.max(1, Math.floor(options.maxDepth ?? 10)));
  const maxNodes = Math.min(5000, Math.max(1, Math.floor(options.maxNodes ?? 500)));
  const branchId = await startAt(db, workspaceId, id, ref);
  const edgeRows = await lineageEdgeRows(db, { workspaceId, id, maxDepth, limit: maxNodes * 4 });
  // Nodes in breadth-first order, bounded.
  const depthOf = new Map<string, number>([[id, 0]]);
  for (const e of edgeRows) if (!depthOf.has(e.parent)) depthOf.set(e.parent, e.depth);
  const truncated = depthOf.size > maxNodes || edgeRows.length >= maxNodes * 4;
  const keep = new Set([...depthOf.keys()].slice(0, maxNodes));
  const edges = edgeRows.filter((e) => keep.has(e.parent) && keep.has(e.child)).map(({ parent, child, position }) => ({ parent, child, position }));
  const rows = await provenanceRows(db, workspaceId, [...keep], branchId);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const nodes: LineageNode[] = [...keep]
    .filter((n) => byId.has(n))
    .map((n) => {
      const r = byId.get(n)!;
      return { id: n, step: r.step, scope: r.scope, preview: r.content.slice(0, 200), depth: depthOf.get(n)!, onBranch: r.onBranch };
    });
  const parentsOf = new Map<string, string[]>();
  for (const e of [...edges].sort((a, b) => a.position - b.position)) parentsOf.set(e.child, [...(parentsOf.get(e.child) ?? []), e.parent]);
  const seen = new Set<string>();
  const build = (n: string): LineageTree => {
    const r = byId.get(n);
    const node: LineageTree = { id: n, step: r?.step ?? "?", preview: r?.content.slice(0, 200) ?? "", children: [] };
    if (seen.has(n)) return { ...node, repeated: true };
    seen.add(n);
    node.children = (parentsOf.get(n) ?? []).map(build);
    return node;
  };
  return { root: id, nodes, edges, tree: build(id), truncated };
}

export interface RecordDetail extends RecordDetailRow {
  embeddings: Array<{ model: string; dimensions: number }>;
}

/** One record with metadata, audit, provenance counts and embedding models. */
export async function getRecord(db: Db, workspaceId: string, id: string, ref?: BranchRef): Promise<RecordDetail> {
  const branchId = await startAt(db, workspaceId, id, ref);
  const row = await recordDetailRow(db, workspaceId, id, branchId);
  if (!row) throw notFound(`Record "${id.slice(0, 100)}" not found in this workspace.`);
  const embeddings = await db.embedding.findMany({ where: { recordId: id, workspaceId }, select: { model: true, dimensions: true } });
  return { ...row, embeddings };
}

export interface ListByStepInput extends RecordFilters {
  workspaceId: string;
  pipelineId: string;
  branch?: string;
  step: string;
  cursor?: string | null;
  limit?: number;
}

function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString("base64url");
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string" && !Number.isNaN(Date.parse(v[0]))) {
      return [v[0], v[1]];
    }
  } catch {
    // fall through
  }
  throw badRequest("Invalid cursor: pass back the nextCursor of the previous page.");
}

/** The records a branch shows for one step (altitude), newest first, keyset-paginated. */
export async function listByStep(db: Db, input: ListByStepInput) {
  const ctx = await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch);
  requireSteps(ctx.spec, [input.step]);
  normalizeScope(input.scope);
  const limit = Math.min(200, Math.max(1, Math.floor(input.limit ?? 50)));
  const after = input.cursor ? decodeCursor(input.cursor) : null;
  const rows = await stepPageRows(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, step: input.step, filters: input, after, limit });
  const page = rows.slice(0, limit).map((r) => ({ ...r, onBranch: true }));
  const last = page.at(-1);
  return { records: page, nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null };
}
