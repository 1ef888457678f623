/**
 * Search at a chosen altitude (the seed's §4.6 / Part VI): full text (generated tsvector + GIN),
 * semantic (pgvector HNSW per embedding model), hybrid (reciprocal rank fusion, optional recency
 * half-life). Unscoped search covers every indexed step and keeps the highest altitude when a
 * record and a record derived from it both match; the lower hits ride along for drill-down.
 * Leaf search (`exact`) finds a literal phrase in source records. Every query is branch-aware
 * (only records the branch points to) and workspace-filtered.
 *
 * `graph`: hybrid plus a third list — the source records reached from the question's entities over
 * one or two hops of beliefs (graph-retrieval.ts) — fused by RRF, with a recency weight; needs an
 * entities and a relations step.
 *
 * What stays here is the ranking: the fusion of the candidate lists with the boosts that act on
 * them (recency, dates, altitude dedupe). Each list's SQL is in server/store, date parsing in
 * dates.ts / relative-dates.ts, snippets and highlights in snippets.ts, the BM25 statistics cache in
 * term-stats.ts, the recency boost in recency.ts, the knobs and their defaults in search-knobs.ts.
 * The boosts stay with the fusion: they act on the fused lists in one pass.
 */
import { getEmbedder } from "../llm/workspace-embedder";
import { toVectorLiteral } from "../store/embedding-store";
import { dateMentionsOf } from "../store/date-mentions";
import {
  candidateShapes,
  hitRows,
  nearestExact,
  nearestHnsw,
  phraseRecords,
  TIME_EXPR,
  type CandidateShape,
  type Neighbour,
} from "../store/search-reads";
import { byTieKey } from "../store/record-sql";
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { isQueryEmbedder } from "../llm/embedder";
import { forwardWindow, inRange, mentionOverlaps, parseDateRange, parseRelativeRange, type DateRange } from "./dates";
import { dateMentions } from "./relative-dates";
import { bm25Candidates, loadTermStats, queryTerms, wordWeights, type QueryTerms, type StepTermStats } from "./lexical";
import { altitudes, indexedSteps, narrowsRecords, parseJson, requireSteps, resolveBranch, sourceSteps, type BranchContext, type RecordFilters } from "./context";
import { byPathRank, graphRetrieve, type EvidencePath, type QuestionEntity } from "./graph-retrieval";
import { HL_START, HL_STOP, parseHighlights, phraseSnippet } from "./snippets";

import { SEARCH_MODES, type SearchMode } from "./modes";
import { preferCurrentState } from "./current-state";
import { recencyClock, recencyFactor, type Recency } from "./recency";
export { SEARCH_MODES, type SearchMode };

export { MAX_QUERY_LENGTH, MAX_LIMIT, MAX_DEPTH, FUSION_DEFAULTS, GRAPH_RECENCY, RELEVANCE_FLOOR, DATE_BOOST, type Fusion, type RelevanceFloor } from "./search-knobs";
import { DATE_BOOST, FUSION_DEFAULTS, GRAPH_RECENCY, MAX_DEPTH, MAX_QUERY_LENGTH, RELEVANCE_FLOOR, type Fusion, type RelevanceFloor } from "./search-knobs";

/** Below this many candidate records, semantic search computes exact distances over the filtered set. */
const EXACT_KNN_THRESHOLD = 20_000;

export interface SearchInput extends RecordFilters {
  workspaceId: string;
  pipelineId: string;
  branch?: string;
  /** The branch already resolved by the caller (the API's pipeline procedure): saves a round trip. Must be of workspaceId and pipelineId. */
  branchContext?: BranchContext;
  query: string;
  mode?: SearchMode;
  /** Altitude: one step (or several). Omitted: every step a search output indexes (unscoped). */
  step?: string | string[];
  /** Restrict to one search output's steps. */
  output?: string;
  /** Leaf search: literal, case-insensitive phrase in source records (or in `step`). */
  exact?: boolean;
  limit?: number;
  /** Multiply scores by (1 - weight) + weight * 0.5^(age / halfLifeDays). */
  recency?: Recency;
  /** Unscoped only: keep the highest altitude (default true). */
  dedupe?: boolean;
  /** Hybrid: score = fts / (k + fts rank) + semantic / (k + semantic rank). Defaults: FUSION_DEFAULTS. */
  fusion?: Fusion;
  /**
   * Drop hits whose relevance — the larger of `score.fts` (share of the query's idf weight the
   * record matches, 0..~1) and `score.semantic` (cosine) — is below this.
   */
  minScore?: number;
  /**
   * A month, day or year named in the query ("in May 2023"): "boost" (default) multiplies the
   * score of records from that range by DATE_BOOST; "filter" keeps only them (as `from`/`to`,
   * unless those are given); "off" ignores it.
   */
  dates?: "boost" | "filter" | "off";
  /** ISO time the question is asked (default now): what a relative time in it ("last week") resolves against. */
  asOf?: string;
  /** False: no highlighted snippet (each hit's snippet is the start of its content) — faster, for callers that read the content. */
  snippets?: boolean;
}

export interface LowerHit {
  id: string;
  step: string;
  altitude: number;
}

export interface SearchHit {
  id: string;
  step: string;
  altitude: number;
  scope: string;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  /** Plain text around the match; `highlights` are [start, end) offsets of matched terms in it. */
  snippet: string;
  highlights: Array<[number, number]>;
  /** `graph` (mode "graph"): the best evidence path's score, 0..1; null when the graph did not reach the record. */
  score: { fts: number | null; semantic: number | null; graph?: number | null; fused: number };
  sourceCount: number;
  /** Mode "graph": how the graph reached this record (question entity → belief → … → this record), best first. */
  evidencePaths?: EvidencePath[];
  /** Unscoped search: matching records this one was derived from (lower altitude). */
  lowerHits: LowerHit[];
}

export interface SearchResult {
  mode: SearchMode | "exact";
  query: string;
  steps: string[];
  /** The date range read from the query, when `dates` used one. */
  dateRange?: DateRange & { use: "boost" | "filter" };
  hits: SearchHit[];
  /** Mode "graph": the question's entities found in the graph, and names it uses that the graph does not know. */
  graph?: { entities: QuestionEntity[]; unknownNames: string[]; beliefsRead: number };
  /** Why a result may be empty or partial (e.g. only stop words). */
  notice?: string;
  /** True when no record clears the relevance floor: nothing in this memory matches the query. */
  noMatch: boolean;
  /** The relevance floor this search applied (RELEVANCE_FLOOR). */
  floor: RelevanceFloor;
}

interface Candidate {
  id: string;
  step: string;
  time: string | null;
  /** Content-derived tie-break of equal scores (never the random id): see tieKey. */
  key: string;
  fts: number | null;
  semantic: number | null;
  ftsRank?: number;
  semRank?: number;
  graph?: number;
  graphRank?: number;
  paths?: EvidencePath[];
}

function checkQuery(query: unknown): string {
  if (typeof query !== "string") throw badRequest("Query must be a string.");
  const q = query.replace(/\u0000/g, "").trim();
  if (!q) throw badRequest("Query is empty: type some words to search for.");
  if (q.length > MAX_QUERY_LENGTH) throw badRequest(`Query is too long (${q.length} characters; at most ${MAX_QUERY_LENGTH}).`);
  return q;
}

async function ftsCandidates(
  db: Db,
  ctx: BranchContext,
  steps: string[],
  terms: QueryTerms,
  stats: Map<string, StepTermStats>,
  filters: RecordFilters,
  n: number,
): Promise<Candidate[]> {
  const hits = await bm25Candidates(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, steps, terms, stats, n, filters, timeExpr: TIME_EXPR });
  return hits.map((h, i) => ({ id: h.id, step: h.step, time: h.time, key: h.key, fts: h.score, semantic: null, ftsRank: i + 1 }));
}

/**
 * KNN over one embedding model. Selective filters (few candidate records): exact distances over
 * the filtered set, found through the pointer/scope indexes. Otherwise: the model's HNSW index
 * with pgvector's iterative scan, filters applied as the index streams (never a full scan).
 */
async function semanticCandidates(
  db: Db,
  ctx: BranchContext,
  steps: string[],
  query: string,
  filters: RecordFilters,
  n: number,
  embedderId: string,
  weightOf?: (surface: string) => number,
): Promise<{ candidates: Candidate[]; plan: "exact" | "hnsw" }> {
  const embedder = await getEmbedder(db, ctx.workspaceId, embedderId).catch((err: Error) => {
    throw badRequest(`Semantic search is unavailable: ${err.message}`);
  });
  const [vector] = weightOf && isQueryEmbedder(embedder) ? [embedder.embedQuery(query, weightOf)] : await embedder.embed([query]);
  // A query with no content word embeds to the zero vector: its cosine with anything is undefined (NaN).
  if (!vector || !vector.some((v) => v !== 0 && Number.isFinite(v))) return { plan: "exact", candidates: [] };
  const dims = embedder.dimensions;
  const where = { workspaceId: ctx.workspaceId, branchId: ctx.branchId, steps };
  const knn = { ...where, pipelineId: ctx.pipelineId, filters, vector: toVectorLiteral(vector!), dims, model: embedder.id, n };
  let rows: Neighbour[] = [];
  let plan: "exact" | "hnsw" = "exact";
  // Without any filter but the step, the candidate set is the whole step: go straight to HNSW.
  if (narrowsRecords(filters)) rows = await nearestExact(db, { ...knn, maxCandidates: EXACT_KNN_THRESHOLD });
  if (rows.length === 0) {
    plan = "hnsw";
    rows = await nearestHnsw(db, knn);
  }
  return {
    plan,
    candidates: rows.filter((r) => Number.isFinite(r.dist)).map((r, i) => ({ id: r.id, step: r.step, time: r.time, key: r.key, fts: null, semantic: 1 - r.dist, semRank: i + 1 })),
  };
}

async function exactCandidates(db: Db, ctx: BranchContext, steps: string[], phrase: string, filters: RecordFilters, n: number): Promise<Candidate[]> {
  const rows = await phraseRecords(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, steps, filters, phrase, n });
  return rows.map((r) => ({ id: r.id, step: r.step, time: r.t, key: r.key, fts: null, semantic: null }));
}

/**
 * A turn window whose every turn is already in better-ranked windows of the same conversation
 * adds nothing: drop it, so the result (and an agent's context budget) goes to new turns. (Windows
 * that share only some turns stay: their other turns may be the evidence.)
 */
function withoutOverlaps<T extends { c: Candidate }>(ranked: T[], shapes: Map<string, CandidateShape>): T[] {
  const kept = new Map<string, Array<Set<number>>>();
  return ranked.filter(({ c }) => {
    const shape = shapes.get(c.id);
    if (!shape?.turns || shape.parents.length !== 1) return true;
    const key = `${c.step}\u0000${shape.parents[0]}`;
    const taken = kept.get(key) ?? [];
    if (shape.turns.every((n) => taken.some((t) => t.has(n)))) return false;
    taken.push(new Set(shape.turns));
    kept.set(key, taken);
    return true;
  });
}

export async function search(db: Db, input: SearchInput): Promise<SearchResult> {
  const query = checkQuery(input.query);
  const mode: SearchMode = input.mode ?? "hybrid";
  if (!SEARCH_MODES.includes(mode)) throw badRequest(`Unknown search mode "${String(mode)}": use ${SEARCH_MODES.join(", ")}.`);
  const limit = Math.min(MAX_DEPTH, Math.max(1, Math.floor(input.limit ?? 20)));
  if (input.recency && !(input.recency.halfLifeDays > 0)) throw badRequest("recency.halfLifeDays must be a positive number of days.");
  const given = input.branchContext;
  const fits = given && given.workspaceId === input.workspaceId && given.pipelineId === input.pipelineId && given.branchName === (input.branch ?? "main");
  const ctx = fits ? given : await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch);
  const alt = altitudes(ctx.spec);
  const indexed = indexedSteps(ctx.spec, input.output);
  const explicit = input.step === undefined ? null : requireSteps(ctx.spec, [...new Set(Array.isArray(input.step) ? input.step : [input.step])]);
  if (explicit && explicit.length === 0) throw badRequest("step must name at least one step.");

  // Leaf search: literal phrase, source records unless a step is named.
  if (input.exact) {
    const steps = explicit ?? sourceSteps(ctx.spec);
    const candidates = await exactCandidates(db, ctx, steps, query, input, limit);
    const hits = await hydrate(db, ctx, candidates, alt, { kind: "phrase", phrase: query });
    for (const h of hits) h.score.fused = 1;
    return { mode: "exact", query, steps, hits, noMatch: hits.length === 0, floor: { mode: "exact", semantic: null, minScore: null, rule: RELEVANCE_FLOOR.rules.exact } };
  }

  const steps = explicit ?? [...indexed.keys()];
  if (steps.length === 0) {
    throw badRequest(`This pipeline has no search output: add one (surface "search") or name a step to search.`);
  }
  const unscoped = explicit === null;
  const dateUse = input.dates ?? "boost";
  const asOf = input.asOf === undefined ? new Date() : new Date(input.asOf);
  if (Number.isNaN(asOf.getTime())) throw badRequest(`asOf must be an ISO date or time; got "${String(input.asOf).slice(0, 40)}".`);
  const parsedRange = dateUse === "off" ? null : (parseDateRange(query) ?? parseRelativeRange(query, asOf));
  const dateRange = parsedRange ? { ...parsedRange, use: dateUse as "boost" | "filter" } : undefined;
  if (dateRange?.use === "filter" && !input.from && !input.to) input = { ...input, from: dateRange.from, to: dateRange.to };
  const pool = unscoped ? Math.min(300, limit * 3) : limit;

  const fusing = mode === "hybrid" || mode === "graph";
  const n = fusing ? Math.max(50, pool) : pool;
  // Graph first: a pipeline without a graph is refused before any other work.
  const graph = mode === "graph" ? await graphRetrieve(db, ctx, { question: query, steps, filters: input, n }) : null;
  const terms = await queryTerms(db, query);
  const stats = await loadTermStats(db, ctx.branchId, steps, terms.lexemes);
  const lexemes = terms.lexemes.length > 0;
  const fusion = { ...FUSION_DEFAULTS, ...input.fusion };
  const floor: RelevanceFloor = { mode, semantic: mode === "fts" ? null : fusion.semanticFloor, minScore: input.minScore ?? null, rule: RELEVANCE_FLOOR.rules[mode] };
  let notice: string | undefined;
  if (!terms.lexemes.some((l) => l.length > 1 || /\d/.test(l))) {
    return { mode, query, steps, hits: [], noMatch: true, floor, notice: "The query has only stop words, single letters or punctuation: no words to search for." };
  }
  let semantic: Promise<Candidate[]> = Promise.resolve([]);
  if (mode !== "fts") {
    // One embedding model per query: the one the (first) covering search output names.
    const models = [...new Set(steps.map((s) => indexed.get(s)).filter((m): m is string => !!m))];
    if (models.length === 0) {
      if (mode === "semantic") throw badRequest(`Step(s) ${steps.join(", ")} are not in a search output, so they have no embeddings: use mode "fts" or add them to a search output.`);
      notice = `Step(s) ${steps.join(", ")} are not in a search output (no embeddings): full-text results only.`;
    } else {
      const embedSteps = steps.filter((s) => indexed.get(s) === models[0]);
      semantic = semanticCandidates(db, ctx, embedSteps, query, input, n, models[0]!, wordWeights(terms, stats)).then((r) => r.candidates);
    }
  }
  // The two lists are independent reads: on a server with a connection pool they run at once.
  const [fts, sem] = await Promise.all([
    mode !== "semantic" && lexemes ? ftsCandidates(db, ctx, steps, terms, stats, input, n) : Promise.resolve([] as Candidate[]),
    semantic,
  ]);

  // Fuse.
  const graphList: Candidate[] = (graph?.candidates ?? []).map((g, i) => ({ id: g.id, step: g.step, time: g.time, key: g.key, fts: null, semantic: null, graph: g.score, graphRank: i + 1, paths: g.paths }));
  const byId = new Map<string, Candidate>();
  for (const c of [...fts, ...sem, ...graphList]) {
    const prev = byId.get(c.id);
    byId.set(c.id, prev ? { ...prev, ...Object.fromEntries(Object.entries(c).filter(([, v]) => v !== null && v !== undefined)) } : c);
  }
  const base = (c: Candidate): number => {
    if (mode === "fts") return c.fts ?? 0;
    if (mode === "semantic") return c.semantic ?? 0;
    if (fusion.method === "sum") return fusion.fts * (c.fts ?? 0) + fusion.semantic * Math.max(0, c.semantic ?? 0) + fusion.graph * (c.graph ?? 0);
    return (
      (c.ftsRank ? fusion.fts / (fusion.k + c.ftsRank) : 0) +
      (c.semRank ? fusion.semantic / (fusion.k + c.semRank) : 0) +
      (c.graphRank ? fusion.graph / (fusion.k + c.graphRank) : 0)
    );
  };
  for (const [id, c] of byId) {
    if (mode !== "fts" && c.fts === null && c.graphRank === undefined && (c.semantic ?? 0) < fusion.semanticFloor) byId.delete(id);
    else if (input.minScore !== undefined && Math.max(c.fts ?? 0, c.semantic ?? 0) < input.minScore) byId.delete(id);
  }
  const dedupe = unscoped && input.dedupe !== false;
  // With the altitude dedupe, the same read walks the provenance between the candidates (as far as
  // their altitudes span): the ranked ones are a subset, so their pairs are among these.
  const candidateAlts = dedupe ? [...byId.values()].map((c) => alt.get(c.step) ?? 0) : [];
  const span = candidateAlts.length > 1 ? Math.max(...candidateAlts) - Math.min(...candidateAlts) : 0;
  const shapes = fusion.context > 0 || dedupe ? await candidateShapes(db, ctx.workspaceId, [...byId.keys()], span) : new Map<string, CandidateShape>();
  const recency = input.recency ?? (mode === "graph" ? GRAPH_RECENCY : undefined);
  const now = recencyClock([...byId.values()].map((c) => c.time), input.asOf !== undefined ? asOf.getTime() : null);
  const window = dateRange?.use === "boost" ? forwardWindow(dateRange) : null;
  const mentions = window ? await dateMentionsOf(db, ctx.workspaceId, [...byId.keys()]) : new Map<string, unknown>();
  const about = (c: Candidate) => !!window && (inRange(c.time, window) || dateMentions(mentions.get(c.id)).some((m) => mentionOverlaps(m, dateRange!)));
  const fused = [...byId.values()].map((c) => {
    const parent = shapes.get(c.id)?.parents.find((p) => byId.has(p));
    const score = base(c) + (parent ? fusion.context * base(byId.get(parent)!) : 0);
    const dated = about(c) ? DATE_BOOST : 1;
    return { c, score: score * dated * recencyFactor(c.time, recency, now) };
  });
  fused.sort((a, b) => b.score - a.score || byTieKey(a.c, b.c));
  let ranked = (dedupe ? withoutOverlaps(fused, shapes) : fused).slice(0, pool);

  // Unscoped: the highest altitude wins; lower hits are attached for drill-down.
  const lower = new Map<string, LowerHit[]>();
  if (dedupe && ranked.length > 1) {
    const altOf = (id: string) => alt.get(byId.get(id)!.step) ?? 0;
    const alts = ranked.map((r) => alt.get(r.c.step) ?? 0);
    // (derived, lower) pairs among the ranked records within as many hops as their altitudes span.
    const maxDepth = Math.max(...alts) - Math.min(...alts);
    const inRanked = new Set(ranked.map((r) => r.c.id));
    const pairs = ranked.flatMap((r) =>
      (shapes.get(r.c.id)?.lower ?? []).filter((l) => l.depth <= maxDepth && inRanked.has(l.id)).map((l) => ({ top: r.c.id, id: l.id })),
    );
    // A lower hit goes to the highest-altitude record derived from it, the best-ranked of those.
    const rankOf = new Map(ranked.map((r, i) => [r.c.id, i]));
    const owner = new Map<string, string>();
    // Issue 48 item 12: a fold's record is a running overview of everything before it (a documents
    // pipeline's collection, a pyramid's synthesis), not a grouping of the hit: it never hides one
    // (else every search of a documents pipeline answered one "collection" hit, the page a click away).
    const folds = new Set(ctx.spec.steps.filter((s) => s.type === "fold").map((s) => s.name));
    for (const { top, id } of pairs) {
      if (altOf(top) <= altOf(id) || folds.has(byId.get(top)!.step)) continue;
      const cur = owner.get(id);
      if (!cur || altOf(top) > altOf(cur) || (altOf(top) === altOf(cur) && rankOf.get(top)! < rankOf.get(cur)!)) owner.set(id, top);
    }
    // A lower hit whose owner is itself absorbed goes to the top-most owner.
    const root = (id: string): string => {
      let at = id;
      for (let i = 0; i < 20 && owner.has(at); i++) at = owner.get(at)!;
      return at;
    };
    for (const id of owner.keys()) {
      const top = root(id);
      const list = lower.get(top) ?? [];
      list.push({ id, step: byId.get(id)!.step, altitude: altOf(id) });
      lower.set(top, list);
      // The graph's evidence for an absorbed record stays visible on the record that absorbed it.
      const paths = byId.get(id)!.paths;
      if (paths?.length) {
        const owned = byId.get(top)!;
        owned.paths = [...(owned.paths ?? []), ...paths].sort(byPathRank).slice(0, 3);
        owned.graph = Math.max(owned.graph ?? 0, byId.get(id)!.graph ?? 0);
      }
    }
    ranked = ranked.filter((r) => !owner.has(r.c.id));
  }
  ranked = (await preferCurrentState(db, query, ranked)).slice(0, limit);

  const hits = await hydrate(
    db,
    ctx,
    ranked.map((r) => r.c),
    alt,
    lexemes && input.snippets !== false ? { kind: "fts", tsquery: terms.lexemes.map((l) => `'${l.replace(/'/g, "''")}'`).join(" | ") } : { kind: "none" },
  );
  const scoreOf = new Map(ranked.map((r) => [r.c.id, r.score]));
  for (const h of hits) {
    h.score.fused = scoreOf.get(h.id) ?? 0;
    h.lowerHits = (lower.get(h.id) ?? []).sort((a, b) => b.altitude - a.altitude || byTieKey(byId.get(a.id)!, byId.get(b.id)!));
    if (graph) {
      const c = byId.get(h.id)!;
      h.score.graph = c.graph ?? null;
      if (c.paths?.length) h.evidencePaths = c.paths;
    }
  }
  if (graph && !graph.entities.length) {
    const named = graph.unknownNames.length ? ` (${graph.unknownNames.join(", ")} ${graph.unknownNames.length > 1 ? "are" : "is"} not in it)` : "";
    notice = `${notice ? `${notice} ` : ""}The question names no entity of the graph${named}: results come from full-text and semantic search alone.`;
  }
  const graphInfo = graph ? { graph: { entities: graph.entities, unknownNames: graph.unknownNames, beliefsRead: graph.beliefsRead } } : {};
  return { mode, query, steps, hits, noMatch: hits.length === 0, floor, ...graphInfo, ...(notice ? { notice } : {}), ...(dateRange ? { dateRange } : {}) };
}

type SnippetSource = { kind: "fts"; tsquery: string } | { kind: "phrase"; phrase: string } | { kind: "none" };

/** Content, metadata, snippet with highlights and source count for the final hits, in order. */
async function hydrate(db: Db, ctx: BranchContext, candidates: Candidate[], alt: Map<string, number>, snip: SnippetSource): Promise<SearchHit[]> {
  if (candidates.length === 0) return [];
  const rows = await hitRows(
    db,
    ctx.workspaceId,
    candidates.map((c) => c.id),
    snip.kind === "fts" ? { tsquery: snip.tsquery, start: HL_START, stop: HL_STOP } : null,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return candidates
    .filter((c) => byId.has(c.id))
    .map((c) => {
      const r = byId.get(c.id)!;
      const s =
        snip.kind === "fts" && r.headline
          ? parseHighlights(r.headline)
          : snip.kind === "phrase"
            ? phraseSnippet(r.content, snip.phrase)
            : { snippet: r.content.slice(0, 240) + (r.content.length > 240 ? "…" : ""), highlights: [] as Array<[number, number]> };
      return {
        id: r.id,
        step: r.step,
        altitude: alt.get(r.step) ?? 0,
        scope: r.scope,
        content: r.content,
        metadata: parseJson<Record<string, unknown>>(r.metadata),
        createdAt: new Date(r.createdAt),
        snippet: s.snippet,
        highlights: s.highlights,
        score: { fts: c.fts, semantic: c.semantic, fused: 0 },
        sourceCount: r.sources,
        lowerHits: [],
      };
    });
}

/** For benchmarks and EXPLAIN: the semantic candidate query's plan choice. */
export const __internal = { semanticCandidates, ftsCandidates, resolveBranch };
