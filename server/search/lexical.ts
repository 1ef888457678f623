/**
 * Lexical ranking that works for questions: BM25 over the english `tsvector` of each record, on
 * plain Postgres (runs on PGlite and any server, no extension beyond what full text already uses).
 *
 * - Matching is OR: a record needs one query lexeme, not all of them (`websearch_to_tsquery`
 *   wanted every word, so a natural-language question matched almost nothing).
 * - Lexemes are Postgres' english stems with its stop words removed; names and numbers stay
 *   lexemes (`2023`, `carolin`).
 * - idf comes from the indexed step on the branch: `SearchTermStat` holds each lexeme's document
 *   frequency and `SearchStepStat` the record count and mean length, refreshed after every run
 *   (`refreshLexicalStats`) from `ts_stat`. A step without statistics (not in a search output)
 *   ranks with idf 1, still length-normalised.
 * - tf is the lexeme's position count in the record; length is its number of distinct lexemes.
 * - Phrase boost: each adjacent pair of query words that also appears adjacent in the record
 *   (`'a' <-> 'b'`) adds PHRASE_BOOST × the pair's mean idf.
 * Very common lexemes (in more than COMMON_SHARE of a step's records) still score but do not
 * select candidates on their own, which keeps the candidate set small at 100k records.
 */
import type { Db } from "../core/db";
import { Params, trace } from "./context";

/** BM25 term-frequency saturation and length normalisation (the usual defaults). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
/** Score added per matched query bigram, times the bigram's mean idf. */
export const PHRASE_BOOST = 0.5;
/** Lexemes in more than this share of a step's records (and in more than COMMON_MIN_DF) do not select candidates alone. */
export const COMMON_SHARE = 0.25;
export const COMMON_MIN_DF = 1000;
/** At most this many candidates are scored per step (the rarest terms' matches first). */
const MAX_SCORED = 5000;

export interface QueryTerms {
  /** Distinct english lexemes of the query, in first-seen order. */
  lexemes: string[];
  /** Adjacent pairs of query lexemes (stop words skipped). */
  bigrams: Array<[string, string]>;
  /** Each word of the query (lower case) and its lexeme (null for a stop word). */
  words: Array<{ surface: string; lexeme: string | null }>;
}

/** The query's lexemes and bigrams, from Postgres' own parser (so they match the index exactly). */
export async function queryTerms(db: Db, query: string): Promise<QueryTerms> {
  const rows = await db.$queryRawUnsafe<Array<{ alias: string; token: string; lexemes: string[] | null }>>(
    `SELECT alias, token, lexemes FROM ts_debug('english', $1) WHERE lexemes IS NOT NULL`,
    query,
  );
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

export interface StepTermStats {
  docs: number;
  avg: number;
  df: Map<string, number>;
}

/** BM25 statistics of `steps` on the branch for the given lexemes (steps never indexed are absent). */
export async function loadTermStats(db: Db, branchId: string, steps: string[], lexemes: string[]): Promise<Map<string, StepTermStats>> {
  const rows = await db.$queryRawUnsafe<Array<{ step: string; docs: number; avgLength: number; term: string | null; df: number | null }>>(
    `SELECT s.step, s.docs, s."avgLength", t.term, t.df FROM "SearchStepStat" s
     LEFT JOIN "SearchTermStat" t ON t."branchId" = s."branchId" AND t.step = s.step AND t.term = ANY($3::text[])
     WHERE s."branchId" = $1 AND s.step = ANY($2::text[])`,
    branchId,
    steps,
    lexemes,
  );
  const out = new Map<string, StepTermStats>();
  for (const r of rows) {
    const info = out.get(r.step) ?? { docs: Number(r.docs), avg: Number(r.avgLength) || 1, df: new Map<string, number>() };
    if (r.term) info.df.set(r.term, Number(r.df));
    out.set(r.step, info);
  }
  return out;
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

export interface LexicalHit {
  id: string;
  step: string;
  time: string | null;
  score: number;
}

/**
 * BM25 candidates over `steps` on the branch. `where` holds the caller's conditions on alias `r`
 * (workspace, steps, branch, scope, time…), with their parameters already in `params`.
 */
export async function bm25Candidates(
  db: Db,
  args: { steps: string[]; terms: QueryTerms; stats: Map<string, StepTermStats>; n: number; params: Params; where: string[]; timeExpr: string },
): Promise<LexicalHit[]> {
  const { terms, params } = args;
  if (terms.lexemes.length === 0) return [];
  const stepInfo = args.stats;
  const idfRows: Array<{ step: string; lexeme: string; idf: number; avg: number }> = [];
  const selecting = new Set<string>();
  for (const step of args.steps) {
    const info = stepInfo.get(step);
    for (const lexeme of terms.lexemes) {
      if (!info) {
        idfRows.push({ step, lexeme, idf: 1, avg: 0 });
        selecting.add(lexeme);
        continue;
      }
      const df = info.df.get(lexeme) ?? 0;
      if (df === 0) continue;
      idfRows.push({ step, lexeme, idf: idf(info.docs, df), avg: info.avg });
      if (df <= Math.max(COMMON_MIN_DF, info.docs * COMMON_SHARE)) selecting.add(lexeme);
    }
  }
  if (idfRows.length === 0) return [];
  // Scores are divided by the best a record could get (every query lexeme, tf → ∞, in the step
  // where that is highest): about "how much of the query, weighted by idf, this record matches",
  // 0..~1 for every query (phrase matches add a little), one scale for all steps.
  const best = new Map<string, number>();
  for (const r of idfRows) best.set(r.step, (best.get(r.step) ?? 0) + r.idf * (BM25_K1 + 1));
  const norm = Math.max(...best.values());
  const rowsWithNorm = idfRows.map((r) => ({ ...r, norm }));
  // Only common lexemes: let them select (the query is all common words).
  const select = selecting.size ? [...selecting] : [...new Set(idfRows.map((r) => r.lexeme))];
  const tsquery = params.add(select.map(tsq).join(" | "), "tsquery");
  const idfJson = params.add(JSON.stringify(rowsWithNorm), "jsonb");
  const bigramSql = terms.bigrams
    .filter(([a, b]) => idfRows.some((r) => r.lexeme === a) && idfRows.some((r) => r.lexeme === b))
    .slice(0, 12)
    .map(([a, b]) => {
      const q = params.add(`${tsq(a)} <-> ${tsq(b)}`, "tsquery");
      const la = params.add(a);
      const lb = params.add(b);
      return `(CASE WHEN c.sv @@ ${q} THEN ${PHRASE_BOOST} * (COALESCE((SELECT i.idf FROM idf i WHERE i.step = c.step AND i.lexeme = ${la}), 0) + COALESCE((SELECT i.idf FROM idf i WHERE i.step = c.step AND i.lexeme = ${lb}), 0)) / 2 ELSE 0 END)`;
    });
  const limit = params.add(args.n, "int");
  const maxScored = params.add(MAX_SCORED, "int");
  const sql = `WITH idf AS MATERIALIZED (
       SELECT x.step, x.lexeme, x.idf, x.avg, x.norm FROM jsonb_to_recordset(${idfJson}) AS x(step text, lexeme text, idf float8, avg float8, norm float8)),
     cand AS MATERIALIZED (
       SELECT r.id, r.step, ${args.timeExpr} AS t, r."searchVector" AS sv, length(r."searchVector") AS len
       FROM "Record" r
       WHERE r."searchVector" @@ ${tsquery} AND ${args.where.join(" AND ")}
       LIMIT ${maxScored}),
     avglen AS (SELECT step, GREATEST(avg(len), 1)::float8 AS avg FROM cand GROUP BY step)
     SELECT c.id, c.step, c.t, ((SELECT COALESCE(sum(i.idf * cardinality(u.positions) * ${BM25_K1 + 1}
                 / (cardinality(u.positions) + ${BM25_K1} * (1 - ${BM25_B} + ${BM25_B} * c.len / COALESCE(NULLIF(i.avg, 0), a.avg)))), 0)
          FROM unnest(c.sv) u JOIN idf i ON i.lexeme = u.lexeme AND i.step = c.step)
       ${bigramSql.length ? `+ ${bigramSql.join(" + ")}` : ""}) / (SELECT max(i.norm) FROM idf i WHERE i.step = c.step) AS score
     FROM cand c JOIN avglen a ON a.step = c.step
     ORDER BY score DESC, c.id LIMIT ${limit}`;
  const rows = await db.$queryRawUnsafe<Array<{ id: string; step: string; t: string | null; score: number }>>(trace("bm25", sql, params.values), ...params.values);
  return rows.map((r) => ({ id: r.id, step: r.step, time: r.t, score: Number(r.score) }));
}

/**
 * Recompute BM25 statistics for `steps` on a branch where the step's record set changed since the
 * last computation (signature: count and a hash of the record ids). Returns the steps refreshed.
 */
export async function refreshLexicalStats(db: Db, workspaceId: string, branchId: string, steps: string[]): Promise<string[]> {
  const refreshed: string[] = [];
  for (const step of steps) {
    const [sig] = await db.$queryRawUnsafe<Array<{ n: number; h: string | null }>>(
      `SELECT count(*)::int AS n, md5(string_agg(p."recordId", ',' ORDER BY p."recordId")) AS h
       FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = $2`,
      branchId,
      step,
    );
    const signature = `${sig?.n ?? 0}:${sig?.h ?? ""}`;
    const [current] = await db.$queryRawUnsafe<Array<{ signature: string }>>(
      `SELECT signature FROM "SearchStepStat" WHERE "branchId" = $1 AND step = $2`,
      branchId,
      step,
    );
    if (current?.signature === signature) continue;
    const source = `SELECT r."searchVector" FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId" WHERE p."branchId" = %L AND p.step = %L`;
    await db.$transaction([
      db.$executeRawUnsafe(`DELETE FROM "SearchTermStat" WHERE "branchId" = $1 AND step = $2`, branchId, step),
      db.$executeRawUnsafe(
        `INSERT INTO "SearchTermStat" ("workspaceId", "branchId", step, term, df)
         SELECT $1, $2, $3, word, ndoc FROM ts_stat(format($4, $2::text, $3::text))`,
        workspaceId,
        branchId,
        step,
        source,
      ),
      db.$executeRawUnsafe(
        `INSERT INTO "SearchStepStat" ("workspaceId", "branchId", step, docs, "avgLength", signature, "updatedAt")
         SELECT $1, $2, $3, count(*)::int, COALESCE(avg(length(r."searchVector")), 0)::float8, $4, now()
         FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId" WHERE p."branchId" = $2 AND p.step = $3
         ON CONFLICT ("branchId", step) DO UPDATE SET docs = EXCLUDED.docs, "avgLength" = EXCLUDED."avgLength",
           signature = EXCLUDED.signature, "updatedAt" = now()`,
        workspaceId,
        branchId,
        step,
        signature,
      ),
    ]);
    refreshed.push(step);
  }
  return refreshed;
}
