/**
 * The knobs of search and their defaults: the caller's limits, hybrid fusion, graph mode's recency,
 * the relevance floor per mode and the date boost. Kept apart from the ranking (search.ts), which
 * reads them, so the API schemas and the eval can name a default without loading the ranking.
 */
import type { SearchMode } from "./modes";

export const MAX_QUERY_LENGTH = 1000;
export const MAX_LIMIT = 100;
/**
 * The deepest ranking a server-side caller may ask for (the API caps callers at MAX_LIMIT): the
 * eval fills a 2,000-token context with short records (facts) past its k (eval/score.ts FILL_DEPTH).
 */
export const MAX_DEPTH = 200;
/** Hybrid fusion defaults (weighted reciprocal rank fusion), tuned on the LoCoMo dev split. */
export const FUSION_DEFAULTS = { method: "rrf", k: 20, fts: 1, semantic: 0.5, graph: 1, context: 0.5, semanticFloor: 0.2 } as const satisfies Required<Fusion>;
/**
 * Graph mode's recency weight when the call gives none (recency.ts: age counts from the question's
 * asOf or the newest candidate, not from today), so a memory of 2023 is not uniformly "old"; ties go to newer evidence.
 */
export const GRAPH_RECENCY = { halfLifeDays: 180, weight: 0.1 } as const;

/**
 * How hybrid search combines its two lists, and how much a record's own source adds:
 * - `method` "rrf": fts / (k + fts rank) + semantic / (k + semantic rank) (reciprocal rank fusion),
 *   + graph / (k + graph rank) in mode "graph";
 *   "sum": fts × fts score + semantic × cosine (both scores are 0..1, so the sum can be cut on);
 * - `context`: a candidate whose source record is also a candidate (a window and its transcript)
 *   gets `context` × the source's score added — evidence that the whole conversation is about
 *   the question, not just one line;
 * - `semanticFloor`: the relevance floor. A record found only by meaning (no query word in it)
 *   must have at least this cosine similarity, so a query that shares neither words nor meaning
 *   with anything returns nothing instead of the least-bad neighbours.
 */
/**
 * The relevance floor, per mode: what a record must clear to be a hit at all. When none does the
 * result says `noMatch: true` (an agent can act on "nothing here" instead of reading the least-bad
 * neighbours). `semantic` is the least cosine similarity of a record found only by meaning
 * (`fusion.semanticFloor` overrides it); the offline embedder's unrelated text stays well below it.
 * - fts: the record contains at least one of the query's words (stemmed; stop words do not count);
 * - semantic: cosine ≥ semantic;
 * - hybrid: a query word, or cosine ≥ semantic;
 * - graph: as hybrid, or reached from the question's entities through the graph;
 * - exact: the record contains the phrase.
 * A query with no word of two letters or more (only stop words, single letters, punctuation) has
 * nothing to match in any mode: no hits, `noMatch`, and a notice that says why.
 */
export const RELEVANCE_FLOOR = {
  semantic: FUSION_DEFAULTS.semanticFloor,
  rules: {
    fts: "contains at least one query word",
    semantic: "cosine similarity at least the floor",
    hybrid: "contains a query word, or cosine similarity at least the floor",
    graph: "contains a query word, is reached through the graph, or cosine similarity at least the floor",
    exact: "contains the phrase",
  },
} as const;

export interface RelevanceFloor {
  mode: SearchMode | "exact";
  /** Least cosine similarity of a record found only by meaning; null where meaning is not used. */
  semantic: number | null;
  /** The caller's `minScore`, when given. */
  minScore: number | null;
  rule: string;
}

/**
 * Score multiplier for records about a date range the query names (`dates: "boost"`): dated in the
 * range or the FORWARD_DAYS after it (a session of 2 May tells what happened on 1 May), or
 * mentioning a day in the range (their "last night" resolved at index time, `metadata.time.mentions`).
 */
export const DATE_BOOST = 1.3;

export interface Fusion {
  method?: "rrf" | "sum";
  k?: number;
  fts?: number;
  semantic?: number;
  /** Mode "graph": weight of the graph list. */
  graph?: number;
  context?: number;
  semanticFloor?: number;
}
