/**
 * Lexical ranking that works for questions: BM25 over the english `tsvector` of each record, on
 * plain Postgres (runs on PGlite and any server, no extension beyond what full text already uses).
 *
 * - Matching is OR: a record needs one query lexeme, not all of them (`websearch_to_tsquery`
 *   wanted every word, so a natural-language question matched almost nothing).
 * - Lexemes are Postgres' english stems with its stop words removed; names and numbers stay
 *   lexemes (`2023`, `carolin`).
 * - idf comes from the indexed step on the branch: `SearchTermStat` holds each lexeme's document
 *   frequency and `SearchStepStat` the record count and mean length, brought up to date after
 *   every run (`refreshLexicalStats`) by the postings that joined and left. A step without
 *   statistics (not in a search output) ranks with idf 1, still length-normalised.
 * - tf is the lexeme's position count in the record; length is its number of distinct lexemes.
 * - Phrase boost: each adjacent pair of query words that also appears adjacent in the record
 *   (`'a' <-> 'b'`) adds PHRASE_BOOST × the pair's mean idf.
 * Keeping the candidate set small at scale: over the whole branch, a frequent lexeme is read only
 * down to its best postings by impact (CANDIDATE_BUDGET, TRUNCATE_FACTOR); under a scope, time or
 * metadata filter, a very common lexeme (in more than COMMON_SHARE of a step's records) still
 * scores but does not select candidates on its own.
 */
import type { Db } from "../core/db";
import { analyzeSearchIndex, syncLexicalIndex } from "../store/lexical-index";
import { parseQueryLexemes, postingScores, tsvectorScores, type PhraseBonus, type ScoredRecord, type TermWeight } from "../store/lexical-scores";
import { byTieKey, filterConditions, narrowsRecords, normalizeScope, onBranch, Params, type RecordFilters } from "../store/record-sql";
import { TtlCache } from "../core/ttl-cache";
import { forgetTermStats, type StepTermStats } from "./term-stats";

export { loadTermStats, type StepTermStats } from "./term-stats";

/** BM25 term-frequency saturation and length normalisation (the usual defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Score added per matched query bigram, times the bigram's mean idf. */
export const PHRASE_BOOST = 0.5;
/** Lexemes in more than this share of a step's records (and in more than COMMON_MIN_DF) do not select candidates alone. */
export const COMMON_SHARE = 0.25;
export const COMMON_MIN_DF = 1000;
/**
 * Unfiltered search reads about this many postings in all: each of the query's (term, step) lists
 * is read only down to its best max(CANDIDATE_BUDGET / lists, rescore) postings by impact, when it
 * has more than TRUNCATE_FACTOR times that many (below that, reading all is as cheap). A one-word
 * query reads deep; a long one over several steps reads each list less far, so the candidates (and
 * the probes each costs) stay bounded.
 */
export const CANDIDATE_BUDGET = 2000;
export const TRUNCATE_FACTOR = 2;
/**
 * A term whose greatest possible contribution in a step is below this share of the query's
 * greatest possible score there is left out of scoring. Its idf is then near 0: it is in nearly
 * every record (`user` and `assistant` in a chat transcript), so it only reorders records whose
 * scores differ by less than this share, yet checking it cost one probe per candidate.
 */
export const NEGLIGIBLE_SHARE = 0.001;
/** Steps the index does not cover: at most this many candidates are scored from their tsvectors. */
const MAX_SCORED = 5000;
/** Posting path: phrase bonuses and the caller's final checks apply to this many of the best by term score (at least). */
const RESCORE_MIN = 200;

export interface QueryTerms {
  /** Distinct english lexemes of the query, in first-seen order. */
  lexemes: string[];
  /** Adjacent pairs of query lexemes (stop words skipped). */
  bigrams: Array<[string, string]>;
  /** Each word of the query (lower case) and its lexeme (null for a stop word). */
  words: Array<{ surface: string; lexeme: string | null }>;
}

/** The query's lexemes and bigrams, from Postgres' own parser (so they match the index exactly). */
// What PostgreSQL's english parser makes of a query depends on the text alone: kept per process (bounded).
const parsedQueries = new TtlCache<Awaited<ReturnType<typeof parseQueryLexemes>>>(Infinity, 5_000);

export async function queryTerms(db: Db, query: string): Promise<QueryTerms> {
  const rows = await parsedQueries.get(query, () => parseQueryLexemes(db, query));
  const words: QueryTerms["words"] = [];
  const sequence: string[] = [];
  for (const r of rows) {
    const lexeme = r.lexemes?.[0] ?? null;
    // Hyphenated words come whole and then in parts: the parts are the words.
    if (r.alias !== "asciihword" && r.alias !== "hword" && r.alias !== "numhword") words.push({ surface: r.token.toLowerCase(), lexeme });
    for (const l of r.lexemes ?? []) sequence.push(l);
  }
  const lexemes = [...new Set(sequence)];
  const bigrams: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (let i = 0; i + 1 < sequence.length; i++) {
    const a = sequence[i]!;
    const b = sequence[i + 1]!;
    if (a === b || seen.has(`${a} ${b}`)) continue;
    seen.add(`${a} ${b}`);
    bigrams.push([a, b]);
  }
  return { lexemes, bigrams, words };
}

export function idf(docs: number, df: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}

/**
 * Per query word, its idf in the largest indexed step (stop words 0; a word no record has gets
 * the highest idf; 1 when no step has statistics). For weighting query embeddings.
 */
export function wordWeights(terms: QueryTerms, stats: Map<string, StepTermStats>): (surface: string) => number {
  const largest = [...stats.values()].sort((a, b) => b.docs - a.docs)[0];
  const bySurface = new Map<string, number>();
  for (const w of terms.words) {
    const value = !w.lexeme ? 0 : largest ? idf(largest.docs, largest.df.get(w.lexeme) ?? 0) : 1;
    bySurface.set(w.surface, Math.max(bySurface.get(w.surface) ?? 0, value));
  }
  return (surface) => bySurface.get(surface) ?? bySurface.get(surface.replace(/'s$/, "")) ?? (largest ? idf(largest.docs, 0) : 1);
}

/** A lexeme as a tsquery operand. */
function tsq(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** The terms whose weight is at least NEGLIGIBLE_SHARE of their step's best score (a term alone always stays). */
export function withoutNegligible<W extends { step: string; idf: number }>(weights: W[]): W[] {
  const best = new Map<string, number>();
  for (const w of weights) best.set(w.step, (best.get(w.step) ?? 0) + Math.max(w.idf, 0));
  return weights.filter((w) => Math.max(w.idf, 0) >= NEGLIGIBLE_SHARE * best.get(w.step)!);
}

/** Unfiltered search: each list's depth (`lim`) from the CANDIDATE_BUDGET, at least `rescore`; a short list is read whole. */
export function withListDepths<W extends { df: number; lim: number | null }>(weights: W[], rescore: number): W[] {
  const perList = Math.max(Math.floor(CANDIDATE_BUDGET / Math.max(weights.length, 1)), rescore);
  return weights.map((w) => ({ ...w, lim: w.df > TRUNCATE_FACTOR * perList ? perList : null }));
}

export type LexicalHit = ScoredRecord;

/**
 * BM25 candidates over `steps` on the branch, filtered by `filters` (scope, time, metadata), in
 * the workspace. Steps with an index (statistics present) are scored from their postings; any
 * other step from its records' tsvectors with idf 1.
 */
export async function bm25Candidates(
  db: Db,
  args: { workspaceId: string; branchId: string; steps: string[]; terms: QueryTerms; stats: Map<string, StepTermStats>; n: number; filters: RecordFilters; timeExpr: string },
): Promise<LexicalHit[]> {
  const { terms, stats } = args;
  if (terms.lexemes.length === 0) return [];
  const rescore = Math.max(RESCORE_MIN, args.n * 3);
  // Over the whole branch (no scope, time or metadata filter) a term's best postings by impact are
  // its best records: a frequent term is read only that far. Under a filter its best records may
  // all be filtered out, so every posting in the scope is read and common terms only add.
  const filtered = narrowsRecords(args.filters);
  let weights: Array<TermWeight & { df: number }> = [];
  for (const step of args.steps) {
    const info = stats.get(step);
    for (const lexeme of terms.lexemes) {
      if (!info) {
        weights.push({ step, lexeme, idf: 1, avg: 0, selects: true, lim: null, df: 0 });
        continue;
      }
      const df = info.df.get(lexeme) ?? 0;
      if (df === 0) continue;
      const weight = { step, lexeme, idf: idf(info.docs, df), avg: info.avg, lim: null, df };
      weights.push({ ...weight, selects: !filtered || df <= Math.max(COMMON_MIN_DF, info.docs * COMMON_SHARE) });
    }
  }
  weights = withoutNegligible(weights);
  if (weights.length === 0) return [];
  if (!filtered) weights = withListDepths(weights, rescore);
  // Only common lexemes in a step: let them select (the query is all common words).
  for (const step of args.steps) {
    const own = weights.filter((w) => w.step === step);
    if (own.length && !own.some((w) => w.selects)) for (const w of own) w.selects = true;
  }
  // Scores are divided by the best a record could get (every query lexeme, tf → ∞, in the step
  // where that is highest): about "how much of the query, weighted by idf, this record matches",
  // 0..~1 for every query (phrase matches add a little), one scale for all steps.
  const best = new Map<string, number>();
  for (const w of weights) best.set(w.step, (best.get(w.step) ?? 0) + w.idf * (BM25_K1 + 1));
  const norm = Math.max(...best.values());
  const idfOf = new Map(weights.map((w) => [`${w.step} ${w.lexeme}`, w.idf]));
  const phrases: PhraseBonus[] = [];
  for (const step of args.steps) {
    for (const [a, b] of terms.bigrams.slice(0, 12)) {
      const ia = idfOf.get(`${step} ${a}`);
      const ib = idfOf.get(`${step} ${b}`);
      if (ia === undefined || ib === undefined) continue;
      phrases.push({ step, lexemes: [a, b], tsquery: `${tsq(a)} <-> ${tsq(b)}`, bonus: (PHRASE_BOOST * (ia + ib)) / 2 });
    }
  }
  const bm25 = { k1: BM25_K1, b: BM25_B };
  const indexed = args.steps.filter((s) => stats.has(s));
  const unindexed = args.steps.filter((s) => !stats.has(s));
  const hits: ScoredRecord[] = [];
  if (indexed.length) {
    const params = new Params();
    const scope = normalizeScope(args.filters.scope);
    hits.push(
      ...(await postingScores(db, {
        branchId: args.branchId,
        weights: weights.filter((w) => stats.has(w.step)),
        phrases: phrases.filter((p) => stats.has(p.step)),
        bm25,
        n: args.n,
        rescore,
        scope,
        recordFilters: filterConditions(params, { ...args.filters, scope: undefined }),
        where: [`r."workspaceId" = ${params.add(args.workspaceId)}`],
        branch: onBranch(params, args.branchId, indexed),
        params,
        timeExpr: args.timeExpr,
      })),
    );
  }
  if (unindexed.length) {
    const params = new Params();
    const own = weights.filter((w) => !stats.has(w.step));
    hits.push(
      ...(await tsvectorScores(db, {
        weights: own,
        phrases: phrases.filter((p) => !stats.has(p.step)),
        bm25,
        n: args.n,
        maxScored: MAX_SCORED,
        selectQuery: [...new Set(own.map((w) => w.lexeme))].map(tsq).join(" | "),
        where: [
          `r."workspaceId" = ${params.add(args.workspaceId)}`,
          `r.step = ANY(${params.add(unindexed, "text[]")})`,
          onBranch(params, args.branchId, unindexed),
          ...filterConditions(params, args.filters),
        ],
        params,
        timeExpr: args.timeExpr,
      })),
    );
  }
  return hits
    .map((h) => ({ ...h, score: h.score / norm }))
    .sort((a, b) => b.score - a.score || byTieKey(a, b))
    .slice(0, args.n);
}

/**
 * A refresh that changed less than this share of a step's records keeps the planner statistics of
 * the index tables (a +1% run does not ANALYZE tables of millions of postings; PostgreSQL's
 * autovacuum analyzes them when enough changed, PGlite's planner keeps estimates that were right).
 */
const ANALYZE_SHARE = 0.1;

/**
 * Brings the BM25 index (postings and statistics) of `steps` on a branch in line with the
 * branch's pointers. With `changed` (per step, the records whose pointers changed since the
 * branch's last index pass), only those are read, unless a step's pointer count shows a record
 * left; without it, each step is compared whole. Returns the steps whose record set changed.
 */
export async function refreshLexicalStats(db: Db, workspaceId: string, branchId: string, steps: string[], changed?: Map<string, string[]>): Promise<string[]> {
  const refreshed: string[] = [];
  let analyze = false;
  for (const step of steps) {
    const sync = await syncLexicalIndex(db, workspaceId, branchId, step, { k1: BM25_K1, b: BM25_B }, changed ? (changed.get(step) ?? []) : undefined);
    if (!sync) continue;
    refreshed.push(step);
    // Committed: searches in this process read the new statistics from now on.
    forgetTermStats(branchId);
    if (sync.joined + sync.left > ANALYZE_SHARE * Math.max(sync.docs, 1)) analyze = true;
  }
  if (analyze) await analyzeSearchIndex(db);
  return refreshed;
}
