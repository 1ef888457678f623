/**
 * Top-down retrieval (Pyramid's pyramid retrieval): start at a high step (a synthesis, a world
 * model), follow provenance down the spec's chain of single-input steps, and at each level keep the
 * `beam` records closest to the query (BM25 over that level's candidates only, newest first on
 * ties); at the lowest derived level return the best `limit` records with the source records they
 * came from. Every record on the way is one the branch shows, within the scope.
 *
 * Two options keep the right branch (issue 34: a fixed beam of 3 dropped it for half of the LoCoMo
 * questions):
 * - `breadth: "question"` (default): each level keeps every record that scores at least
 *   `BREADTH_RATIO` of that level's best for this question (at least `beam`, at most
 *   `MAX_WALK_BEAM`): a question that matches several branches equally walks all of them, a
 *   sharp one stays narrow. `"fixed"` keeps exactly `beam`.
 * - `fallback: "flat"` (default): the lowest level is also ranked flat (every record of that step
 *   in the scope); when the walk did not reach the scope's best record (its best hit scores below
 *   `FALLBACK_CONFIDENCE` of the flat best), it lost the branch and the flat ranking is returned
 *   (`fallback` says so and why); when it did, the walk's branch becomes a prior rather than a
 *   filter: the flat ranking with records of other branches at a share of their score, so the
 *   branch's good matches stay first and a strong match in another branch (the other part of a
 *   multi-part question) comes before the branch's weak records; the flat ranking also fills a
 *   branch of fewer than `limit` records. The share is what the flat ranking corroborates of the
 *   branch (otherBranchWeight): small when the branch holds the clearly better matches, near one
 *   when its matches are no better than the rest (an open question whose matches are spread over
 *   the history). `"none"` returns what the walk found.
 *
 * Deeper than the first page (`limit` > SHARP_HITS: an agent or the eval filling a context), the
 * hits after the first SHARP_HITS are the lowest level ranked with the pyramid's own context: each
 * record also counts its group's score (the summary one level up it was folded into; see
 * withGroupContext) — a graded vote of every group in place of the walk's in-branch-or-not prior —
 * so the budget goes to the matches and the turns beside them in the parts of the history about
 * the question before equal matches elsewhere. The first page is unchanged (its scores are the
 * match's; later hits carry the lifted score, so scores need not fall monotonically there).
 */
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import type { PipelineSpec } from "../pipeline/spec";
import { Bm25Index } from "../text/bm25";
import { directSourceRows, parentRowsOfStep, stepRowsInScope, type WalkRow } from "../store/provenance-reads";
import { byTieKey } from "../store/record-sql";
import { normalizeScope, parseJson, resolveBranch } from "./context";
import { FUSION_DEFAULTS } from "./search";

export const DEFAULT_WALK_BEAM = 3;
export const MAX_WALK_BEAM = 20;
export const DEFAULT_WALK_LIMIT = 10;
export const MAX_WALK_LIMIT = 100;
/** The deepest a server-side caller may ask (the API caps at MAX_WALK_LIMIT; see search.ts MAX_DEPTH). */
export const MAX_WALK_DEPTH = 200;
/** Breadth from the question: a level keeps the records scoring at least this share of its best. */
export const BREADTH_RATIO = 0.5;
/** Below this share of the flat best score, the walk's result is not trusted (fallback to flat): the walk must reach the scope's best record. */
export const FALLBACK_CONFIDENCE = 1;
export const WALK_BREADTHS = ["question", "fixed"] as const;
export const WALK_FALLBACKS = ["flat", "none"] as const;

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
  /** Per-level breadth: from the question's scores (default) or exactly `beam`. */
  breadth?: (typeof WALK_BREADTHS)[number];
  /** When the walk's confidence is low: rank the lowest level flat (default) or not. */
  fallback?: (typeof WALK_FALLBACKS)[number];
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
  /** Set when the hits are the flat ranking of the lowest level, not the walk's (its confidence was low). */
  fallback?: { step: string; confidence: number; reason: string };
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

/** The rows ranked by closeness to the query (BM25 among these rows), newest first on equal scores. */
function ranked(rows: Row[], query: string): Array<Row & { score: number }> {
  rows = [...rows].sort(byTieKey); // the same order whatever order the database read them in
  const scores = new Map(new Bm25Index(rows.map((r) => r.content)).rank(query).map((r) => [r.index, r.score]));
  return rows.map((r, i) => ({ ...r, score: Math.round((scores.get(i) ?? 0) * 1e6) / 1e6 })).sort((a, b) => b.score - a.score || byTimeDesc(a, b));
}

/** The `n` rows closest to the query. */
function best(rows: Row[], query: string, n: number): Array<Row & { score: number }> {
  return ranked(rows, query).slice(0, n);
}

/** A level's records on the way down: `beam` of them, or (breadth "question") every one close to the best. */
function keep(rows: Row[], query: string, beam: number, breadth: (typeof WALK_BREADTHS)[number]): Array<Row & { score: number }> {
  const all = ranked(rows, query);
  if (breadth === "fixed" || !all.length) return all.slice(0, beam);
  const floor = all[0]!.score * BREADTH_RATIO;
  const close = all.filter((r) => r.score > 0 && r.score >= floor).length;
  return all.slice(0, Math.min(MAX_WALK_BEAM, Math.max(beam, close)));
}

/**
 * The level above the lowest votes for its records (the pyramid's own context): a record's flat
 * score gets CONTEXT_WEIGHT × its group's score (the summary it was folded into, BM25 among that
 * level's records), scaled so the best group lifts by CONTEXT_WEIGHT × the lowest level's best.
 * A match in a group about the question comes before an equal match in a group about something
 * else, and the group's other records (the turns around the match: the answer to a question
 * asked in the turn before) follow its matches rather than never. The same weight as hybrid
 * search's `context` (a candidate whose source record also matches gets half the source's score).
 */
export const CONTEXT_WEIGHT = FUSION_DEFAULTS.context;
/** The first page of hits is the match ranking alone; the group context orders the hits after it. */
export const SHARP_HITS = DEFAULT_WALK_LIMIT;

export async function withGroupContext(
  rows: Array<Row & { score: number }>,
  groups: Array<Row & { score: number }>,
  membersOf: (groupIds: string[]) => Promise<Row[]>,
): Promise<Array<Row & { score: number }>> {
  const best = rows[0]?.score ?? 0;
  const groupBest = groups[0]?.score ?? 0;
  if (!(best > 0 && groupBest > 0)) return rows;
  const matching = groups.filter((g) => g.score > 0);
  const groupScore = new Map(matching.map((g) => [g.id, g.score]));
  const lift = new Map<string, number>();
  for (const m of await membersOf(matching.map((g) => g.id))) {
    const g = groupScore.get(m.parentId ?? "") ?? 0;
    lift.set(m.id, Math.max(lift.get(m.id) ?? 0, g));
  }
  const scale = (CONTEXT_WEIGHT * best) / groupBest;
  return rows
    .map((r) => ({ ...r, score: Math.round((r.score + scale * (lift.get(r.id) ?? 0)) * 1e6) / 1e6 }))
    .sort((a, b) => b.score - a.score || byTimeDesc(a, b));
}

/**
 * How much a record of another branch than the walk's counts, as a share of its flat score: the
 * walk's branch is a prior, and the flat ranking says how far to trust it. Among the first page
 * of the flat ranking (SHARP_HITS records), the mean score of the records outside the branch over
 * the mean score of those inside it (at most 1). A sharp question whose matches sit in the walk's
 * branch (the part of the history it is about) scores the branch's records well above the rest,
 * and the other branches count for little; an open question ("Would X be considered …?") whose
 * matches are spread over the whole history, the walk's branch no better than the others, gets a
 * weight near one: the flat ranking, the walk deciding near-ties. 1 (no prior) when the first
 * page is all in the branch or all outside it.
 *
 * Issue 34: the fixed weight it replaces (0.5) kept the walk's weak matches before another
 * branch's better ones on open-domain questions (LoCoMo dev, offline: category 3 hit@5 0.579,
 * bm25-sessions 0.632); with this one 0.684, every other category and metric the same or better.
 */
export function otherBranchWeight(inBranch: ReadonlySet<string>, flat: ReadonlyArray<{ id: string; score: number }>): number {
  const page = flat.slice(0, SHARP_HITS);
  const inside = page.filter((r) => inBranch.has(r.id));
  const outside = page.filter((r) => !inBranch.has(r.id));
  if (!inside.length || !outside.length) return 1;
  const mean = (rows: typeof page) => rows.reduce((a, r) => a + r.score, 0) / rows.length;
  const insideMean = mean(inside);
  return insideMean > 0 ? Math.min(1, mean(outside) / insideMean) : 1;
}

/**
 * The confident walk's records merged with the lowest level ranked flat (both scored by the same
 * index): a record outside the walk's branch counts at otherBranchWeight of its score, so the
 * branch's matches stay first and a strong match in another branch — the second part of a
 * multi-part question, or one of an open question's many mentions — comes before the branch's
 * weak records instead of after every one of them. The flat best is in the walk (the walk is
 * confident), so the first hit is the walk's.
 */
function mergeWithFlat(walked: Array<Row & { score: number }>, flat: Array<Row & { score: number }>, limit: number): Array<Row & { score: number }> {
  const inBranch = new Map(walked.map((r) => [r.id, r]));
  const other = otherBranchWeight(new Set(inBranch.keys()), flat);
  const weighted = (r: Row & { score: number }) => (inBranch.has(r.id) ? r.score : r.score * other);
  return [...flat]
    .sort((a, b) => weighted(b) - weighted(a) || Number(inBranch.has(b.id)) - Number(inBranch.has(a.id)) || byTimeDesc(a, b))
    .slice(0, limit)
    .map((r) => {
      // A record of the walk keeps the parent it was reached from; every score is the flat index's.
      const reached = inBranch.get(r.id);
      return reached ? { ...reached, score: r.score } : r;
    });
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
  if (!(limit >= 1 && limit <= MAX_WALK_DEPTH)) throw badRequest(`limit must be from 1 to ${MAX_WALK_LIMIT}.`);
  const ctx = await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch);
  const path = walkPath(ctx.spec, input.from);
  const scope = normalizeScope(input.scope);
  const visible = <T extends { scope: string }>(rows: T[]) => (input.visible ? rows.filter(input.visible) : rows);

  const topRows = visible(await stepRowsInScope(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, step: path[0]!, scope }));
  /** The records of `step` the branch shows whose provenance parents include one of `parents`. */
  const children = async (parents: string[], step: string) =>
    visible(await parentRowsOfStep(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, step, children: parents }));

  const levels: WalkResult["levels"] = [];
  const breadth = input.breadth ?? "question";
  let current = path.length === 1 ? best(topRows, query, limit) : keep(topRows, query, beam, breadth);
  for (let i = 1; i < path.length && current.length; i++) {
    levels.push({ step: path[i - 1]!, nodes: current.map(node) });
    const below = await children(
      current.map((r) => r.id),
      path[i]!,
    );
    current = i === path.length - 1 ? best(below, query, limit) : keep(below, query, beam, breadth);
  }
  let fallback: WalkResult["fallback"];
  if ((input.fallback ?? "flat") === "flat" && path.length > 1) {
    const lowest = path.at(-1)!;
    // Both sides scored by the same index (BM25 over the whole step in the scope), so they compare.
    const flat = ranked(visible(await stepRowsInScope(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, step: lowest, scope })), query);
    const flatScore = new Map(flat.map((r) => [r.id, r.score]));
    const flatBest = flat[0]?.score ?? 0;
    const walkBest = Math.max(0, ...current.map((r) => flatScore.get(r.id) ?? 0));
    const confidence = flatBest > 0 ? Math.round((walkBest / flatBest) * 1e4) / 1e4 : 1;
    if (confidence < FALLBACK_CONFIDENCE) {
      current = flat.slice(0, limit);
      fallback = { step: lowest, confidence, reason: `the walk's best ${lowest} record scored ${Math.round(confidence * 100)}% of the best in the scope: ranked ${lowest} flat` };
    } else {
      current = mergeWithFlat(current, flat, limit);
    }
    if (limit > SHARP_HITS) {
      // Past the first page: the lowest level with its groups' votes (withGroupContext), flat.
      const groups = ranked(visible(await stepRowsInScope(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, step: path.at(-2)!, scope })), query);
      const lifted = (await withGroupContext(flat, groups, (ids) => children(ids, lowest))).slice(0, limit);
      const top = current.slice(0, SHARP_HITS);
      const taken = new Set(top.map((r) => r.id));
      // A record the walk reached keeps the parent it was reached from.
      const reached = new Map(current.map((r) => [r.id, r]));
      const rest = lifted.filter((r) => !taken.has(r.id)).map((r) => ({ ...r, parentId: reached.get(r.id)?.parentId ?? null }));
      current = [...top, ...rest].slice(0, limit);
    }
  }
  const hits = current.map(node);
  if (!hits.length) return { query, path, levels, hits: [], ...(fallback ? { fallback } : {}) };

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
    ...(fallback ? { fallback } : {}),
    hits: hits.map((h) => ({
      ...h,
      sources: sourceRows
        .filter((s) => s.childId === h.id)
        .map((s) => ({ id: s.id, step: s.step, content: s.content, metadata: parseJson<Record<string, unknown>>(s.metadata) })),
    })),
  };
}
