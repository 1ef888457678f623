/**
 * Drill-down through provenance: `sources` (one hop), `leaves` (breadth-first, deduplicated,
 * depth/count bounded) and `lineage` (bounded tree) — recursive CTEs on "RecordEdge", always
 * filtered by the workspace. With a branch, the starting record must be one the branch shows;
 * provenance itself is immutable, so every returned record carries `onBranch`.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { filterConditions, normalizeScope, Params, parseJson, requireRecord, requireSteps, resolveBranch, trace, type RecordFilters } from "./context";

export interface RecordSummary {
  id: string;
  step: string;
  scope: string;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  sourceCount: number;
  /** Null when no branch was given. */
  onBranch: boolean | null;
}

export interface BranchRef {
  pipelineId: string;
  branch?: string;
}

type Row = { id: string; step: string; scope: string; content: string; metadata: unknown; createdAt: Date; sources: number; on_branch: boolean | null };

const SUMMARY_COLUMNS = (params: Params, branchId: string | null) =>
  `r.id, r.step, r.scope, r.content, r.metadata, r."createdAt",
   (SELECT count(*)::int FROM "RecordEdge" e2 WHERE e2."childId" = r.id) AS sources,
   ${branchId ? `EXISTS (SELECT 1 FROM "BranchPointer" bp WHERE bp."branchId" = ${params.add(branchId)} AND bp."recordId" = r.id)` : "NULL::boolean"} AS on_branch`;

function toSummary(r: Row): RecordSummary {
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

/** Workspace check, plus (with a branch) that the record belongs to that pipeline and is shown by the branch. */
async function start(db: Db, workspaceId: string, id: string, ref?: BranchRef): Promise<string | null> {
  if (typeof id !== "string" || !id || id.length > 200) throw badRequest("A record id is required.");
  const rec = await requireRecord(db, workspaceId, id);
  if (!ref) return null;
  const ctx = await resolveBranch(db, workspaceId, ref.pipelineId, ref.branch);
  if (rec.pipelineId !== ctx.pipelineId) throw notFound(`Record "${id}" is not in pipeline "${ref.pipelineId}".`);
  const shown = await db.branchPointer.findFirst({ where: { branchId: ctx.branchId, recordId: id }, select: { recordId: true } });
  if (!shown) throw notFound(`Record "${id}" is not on branch "${ctx.branchName}".`);
  return ctx.branchId;
}

/** Direct parents (one hop down the DAG), in their input order. */
export async function sources(db: Db, workspaceId: string, id: string, ref?: BranchRef): Promise<RecordSummary[]> {
  const branchId = await start(db, workspaceId, id, ref);
  const params = new Params();
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${SUMMARY_COLUMNS(params, branchId)}
     FROM "RecordEdge" e JOIN "Record" r ON r.id = e."parentId" AND r."workspaceId" = e."workspaceId"
     WHERE e."childId" = ${params.add(id)} AND e."workspaceId" = ${params.add(workspaceId)}
     ORDER BY e.position, r.id`,
    ...params.values,
  );
  return rows.map(toSummary);
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
  const branchId = await start(db, workspaceId, id, ref);
  const params = new Params();
  const pId = params.add(id);
  const pWs = params.add(workspaceId);
  const pDepth = params.add(maxDepth, "int");
  const cols = SUMMARY_COLUMNS(params, branchId);
  const leavesSql = `WITH RECURSIVE walk(id, depth) AS (
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
     ORDER BY depth, id LIMIT ${params.add(maxCount + 2, "int")}`;
  const rows = await db.$queryRawUnsafe<Array<Row & { depth: number; kind: string }>>(trace("leaves", leavesSql, params.values), ...params.values);
  const depthLimited = rows.some((r) => r.kind === "deep");
  const found = rows.filter((r) => r.kind === "leaf");
  return {
    leaves: found.slice(0, maxCount).map((r) => ({ ...toSummary(r), depth: r.depth })),
    truncated: found.length > maxCount,
    depthLimited,
  };
}

export interface LineageNode {
  id: string;
  step: string;
  scope: string;
  preview: string;
  depth: number;
  onBranch: boolean | null;
}

export interface LineageTree {
  id: string;
  step: string;
  preview: string;
  /** This node already appears elsewhere in the tree (a diamond): its children are there. */
  repeated?: boolean;
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
  const branchId = await start(db, workspaceId, id, ref);
  const edgeRows = await db.$queryRawUnsafe<Array<{ parent: string; child: string; position: number; depth: number }>>(
    `WITH RECURSIVE walk(parent, child, position, depth) AS (
       SELECT e."parentId", e."childId", e.position, 1 FROM "RecordEdge" e WHERE e."childId" = $1 AND e."workspaceId" = $2
       UNION
       SELECT e."parentId", e."childId", e.position, w.depth + 1 FROM walk w JOIN "RecordEdge" e ON e."childId" = w.parent
       WHERE w.depth < $3 AND e."workspaceId" = $2)
     SELECT parent, child, position, min(depth)::int AS depth FROM walk GROUP BY 1, 2, 3 ORDER BY depth, child, position LIMIT $4`,
    id,
    workspaceId,
    maxDepth,
    maxNodes * 4,
  );
  // Nodes in breadth-first order, bounded.
  const depthOf = new Map<string, number>([[id, 0]]);
  for (const e of edgeRows) if (!depthOf.has(e.parent)) depthOf.set(e.parent, e.depth);
  const truncated = depthOf.size > maxNodes || edgeRows.length >= maxNodes * 4;
  const keep = new Set([...depthOf.keys()].slice(0, maxNodes));
  const edges = edgeRows.filter((e) => keep.has(e.parent) && keep.has(e.child)).map(({ parent, child, position }) => ({ parent, child, position }));
  const params = new Params();
  const cols = SUMMARY_COLUMNS(params, branchId);
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${cols} FROM "Record" r WHERE r.id = ANY(${params.add([...keep], "text[]")}) AND r."workspaceId" = ${params.add(workspaceId)}`,
    ...params.values,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const nodes: LineageNode[] = [...keep]
    .filter((n) => byId.has(n))
    .map((n) => {
      const r = byId.get(n)!;
      return { id: n, step: r.step, scope: r.scope, preview: r.content.slice(0, 200), depth: depthOf.get(n)!, onBranch: r.on_branch };
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

export interface RecordDetail extends RecordSummary {
  pipelineId: string;
  stepVersionHash: string;
  materializationKey: string;
  contentFingerprint: string;
  audit: Record<string, unknown> | null;
  runId: string | null;
  childCount: number;
  embeddings: Array<{ model: string; dimensions: number }>;
}

/** One record with metadata, audit, provenance counts and embedding models. */
export async function getRecord(db: Db, workspaceId: string, id: string, ref?: BranchRef): Promise<RecordDetail> {
  const branchId = await start(db, workspaceId, id, ref);
  const params = new Params();
  const cols = SUMMARY_COLUMNS(params, branchId);
  const [row] = await db.$queryRawUnsafe<Array<Row & Record<string, unknown>>>(
    `SELECT ${cols}, r."pipelineId", r."stepVersionHash", r."materializationKey", r."contentFingerprint", r.audit, r."runId",
            (SELECT count(*)::int FROM "RecordEdge" c WHERE c."parentId" = r.id AND c."workspaceId" = r."workspaceId") AS children
     FROM "Record" r WHERE r.id = ${params.add(id)} AND r."workspaceId" = ${params.add(workspaceId)}`,
    ...params.values,
  );
  const embeddings = await db.embedding.findMany({ where: { recordId: id, workspaceId }, select: { model: true, dimensions: true } });
  return {
    ...toSummary(row as Row),
    pipelineId: row!.pipelineId as string,
    stepVersionHash: row!.stepVersionHash as string,
    materializationKey: row!.materializationKey as string,
    contentFingerprint: row!.contentFingerprint as string,
    audit: (row!.audit ? parseJson<Record<string, unknown>>(row!.audit) : null) as Record<string, unknown> | null,
    runId: (row!.runId as string | null) ?? null,
    childCount: row!.children as number,
    embeddings,
  };
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
  const params = new Params();
  const where = [
    `p."branchId" = ${params.add(ctx.branchId)}`,
    `p.step = ${params.add(input.step)}`,
    `r."workspaceId" = ${params.add(ctx.workspaceId)}`,
    ...filterConditions(params, input),
  ];
  if (input.cursor) {
    const [at, id] = decodeCursor(input.cursor);
    where.push(`(r."createdAt", r.id) < (${params.add(at)}::timestamp, ${params.add(id)})`);
  }
  const cols = SUMMARY_COLUMNS(params, null);
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT DISTINCT ${cols} FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
     WHERE ${where.join(" AND ")} ORDER BY r."createdAt" DESC, r.id DESC LIMIT ${params.add(limit + 1, "int")}`,
    ...params.values,
  );
  const page = rows.slice(0, limit).map((r) => ({ ...toSummary(r), onBranch: true }));
  const last = page.at(-1);
  return { records: page, nextCursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null };
}
