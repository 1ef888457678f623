/**
 * Top-down retrieval (Pyramid's pyramid retrieval): start at a high step (a synthesis, a world
 * model), follow provenance down the spec's chain of single-input steps, and at each level keep the
 * `beam` records closest to the query (BM25 over that level's candidates only, newest first on
 * ties); at the lowest derived level return the best `limit` records with the source records they
 * came from. Every record on the way is one the branch shows, within the scope.
 */
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import type { PipelineSpec } from "../pipeline/spec";
import { Bm25Index } from "../text/bm25";
import { directSourceRows, parentRowsOfStep, stepRowsInScope, type WalkRow } from "../store/provenance-reads";
import { byTieKey } from "../store/record-sql";
import { normalizeScope, parseJson, resolveBranch } from "./context";

export const DEFAULT_WALK_BEAM = 3;
export const MAX_WALK_BEAM = 20;
export const DEFAULT_WALK_LIMIT = 10;
export const MAX_WALK_LIMIT = 100;

export interface WalkInput {
  workspaceId: string;
  pipelineId: string;
  branch?: string;
  query: string;
  /** The step to start from (the top of the pyramid, e.g. "synthesis"). */
  from: string;
  scope?: string;
  /** Records kept per level on the way down. */
  beam?: number;
  /** Records returned from the lowest derived level. */
  limit?: number;
  /** Which records the caller may see (record-visibility.ts); the walk passes over the others. Default: all. */
  visible?: (record: { scope: string }) => boolean;
}

export interface WalkNode {
  id: string;
  step: string;
  scope: string;
  content: string;
  metadata: Record<string, unknown>;
  score: number;
  /** The record one level up this one was reached from (null at the top). */
  parentId: string | null;
}

export interface WalkHit extends WalkNode {
  /** The source records (raw sessions, chats) this record came from. */
  sources: Array<{ id: string; step: string; content: string; metadata: Record<string, unknown> }>;
}

export interface WalkResult {
  query: string;
  /** The steps walked, top first, e.g. synthesis → tier-2 → tier-1 → observations. */
  path: string[];
  /** The records kept at each level above the hits. */
  levels: Array<{ step: string; nodes: WalkNode[] }>;
  hits: WalkHit[];
}

/** The chain of single-input steps below `from`, down to (not including) a source. */
export function walkPath(spec: PipelineSpec, from: string): string[] {
  const sources = new Set(spec.sources.map((s) => s.name));
  const steps = new Map(spec.steps.map((s) => [s.name, s]));
  if (sources.has(from)) throw badRequest(`"${from}" is a source: walk from a step above it.`);
  if (!steps.has(from)) throw badRequest(`Unknown step "${from}". Steps in this pipeline: ${[...steps.keys()].join(", ") || "(none)"}.`);
  const path: string[] = [];
  for (let name: string | undefined = from; name && !sources.has(name); ) {
    const step = steps.get(name)!;
    if (Array.isArray(step.from)) throw badRequest(`The walk follows single-input steps; "${name}" merges ${step.from.join(", ")}.`);
    path.push(name);
    name = step.from as string;
  }
  return path;
}

type Row = WalkRow;

const byTimeDesc = (a: Row, b: Row) => (b.time ?? "").localeCompare(a.time ?? "") || byTieKey(a, b);

/** The `n` rows closest to the query (BM25 among these rows), newest first on equal scores. */
function best(rows: Row[], query: string, n: number): Array<Row & { score: number }> {
  rows = [...rows].sort(byTieKey); // the same order whatever order the database read them in
  const scores = new Map(new Bm25Index(rows.map((r) => r.content)).rank(query).map((r) => [r.index, r.score]));
  return rows
    .map((r, i) => ({ ...r, score: scores.get(i) ?? 0 }))
    .sort((a, b) => b.score - a.score || byTimeDesc(a, b))
    .slice(0, n);
}

const node = (r: Row & { score: number }): WalkNode => ({
  id: r.id,
  step: r.step,
  scope: r.scope,
  content: r.content,
  metadata: parseJson<Record<string, unknown>>(r.metadata),
  score: Math.round(r.score * 1e4) / 1e4,
  parentId: r.parentId ?? null,
});

export async function walk(db: Db, input: WalkInput): Promise<WalkResult> {
  const query = input.query.trim();
  if (!query) throw badRequest("query: say what to look for.");
  if (query.length > 1000) throw badRequest("query is at most 1000 characters.");
  const beam = Math.floor(input.beam ?? DEFAULT_WALK_BEAM);
  const limit = Math.floor(input.limit ?? DEFAULT_WALK_LIMIT);
  if (!(beam >= 1 && beam <= MAX_WALK_BEAM)) throw badRequest(`beam must be from 1 to ${MAX_WALK_BEAM}.`);
  if (!(limit >= 1 && limit <= MAX_WALK_LIMIT)) throw badRequest(`limit must be from 1 to ${MAX_WALK_LIMIT}.`);
  const ctx = await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch);
  const path = walkPath(ctx.spec, input.from);
  const scope = normalizeScope(input.scope);
  const visible = <T extends { scope: string }>(rows: T[]) => (input.visible ? rows.filter(input.visible) : rows);

  const topRows = visible(await stepRowsInScope(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, step: path[0]!, scope }));
  /** The records of `step` the branch shows whose provenance parents include one of `parents`. */
  const children = async (parents: string[], step: string) =>
    visible(await parentRowsOfStep(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, step, children: parents }));

  const levels: WalkResult["levels"] = [];
  let current = path.length === 1 ? best(topRows, query, limit) : best(topRows, query, beam);
  for (let i = 1; i < path.length && current.length; i++) {
    levels.push({ step: path[i - 1]!, nodes: current.map(node) });
    const below = await children(
      current.map((r) => r.id),
      path[i]!,
    );
    current = best(below, query, i === path.length - 1 ? limit : beam);
  }
  const hits = current.map(node);
  if (!hits.length) return { query, path, levels, hits: [] };

  // The hits' own sources: the raw records they were cut from.
  const sourceRows = visible(
    await directSourceRows(
      db,
      ctx.workspaceId,
      hits.map((h) => h.id),
    ),
  );
  return {
    query,
    path,
    levels,
    hits: hits.map((h) => ({
      ...h,
      sources: sourceRows
        .filter((s) => s.childId === h.id)
        .map((s) => ({ id: s.id, step: s.step, content: s.content, metadata: parseJson<Record<string, unknown>>(s.metadata) })),
    })),
  };
}
