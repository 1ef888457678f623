/**
 * BM25 at query time: the query's lexemes as PostgreSQL parses them, and the scoring reads over
 * the posting table that `lexical-index.ts` keeps in sync (`postingScores`), or over candidates'
 * tsvectors where a branch has no postings yet (`tsvectorScores`).
 */
import type { Db } from "../core/db";
import { likeEscape, Params, tieKey, trace } from "./record-sql";
import { prepared } from "./prepared-statements";

/** Postgres' own parse of a query (so it matches the index exactly): each token and its lexemes. */
export async function parseQueryLexemes(db: Db, query: string) {
  return db.$queryRawUnsafe<Array<{ alias: string; token: string; lexemes: string[] | null }>>(
    `SELECT alias, token, lexemes FROM ts_debug('english', $1) WHERE lexemes IS NOT NULL`,
    query,
  );
}

/**
 * One query term's weight in one step. `selects`: its postings nominate candidates (false for very
 * common terms, which only add to candidates through probes). `lim`: read only its `lim` postings
 * of highest impact (null: all of them); the records it holds beyond those get its weight by probe.
 */
export interface TermWeight {
  step: string;
  lexeme: string;
  idf: number;
  avg: number;
  selects: boolean;
  lim: number | null;
}

/** A phrase (adjacent query lexemes, as a tsquery) and what matching it adds in a step. */
export interface PhraseBonus {
  step: string;
  /** Its two lexemes: only a record with both can match, so only such records are checked. */
  lexemes: [string, string];
  tsquery: string;
  bonus: number;
}

export interface Bm25Params {
  k1: number;
  b: number;
}

/**
 * Digits BM25 scores are rounded to: a sum of floats depends on the order its terms are added in
 * (the order rows arrive in), and a difference in the last bits must not decide a ranking. Equal
 * rounded scores are ordered by the content key.
 */
const SCORE_DIGITS = 9;

export interface ScoredRecord {
  id: string;
  step: string;
  time: string | null;
  score: number;
  /** Tie-break of equal scores (see tieKey). */
  key: string;
}

/**
 * BM25 from the posting table. Candidates are the records holding a selecting term — all its
 * postings (in the scope, through SearchPosting_scope_idx), or for a term with `lim` only its
 * best by impact (SearchPosting_impact_idx) — checked against the `where` conditions on `r` that
 * are not scope (time, metadata) before ranking. Terms a candidate was not found under (common
 * terms, truncated terms) add to its score through primary-key probes, for candidates that can
 * still reach the top. The best `rescore` by term score get their phrase bonuses and the caller's
 * conditions, and are ordered; the branch check (an index refreshed at run end may be behind the
 * pointers) then runs down that order only until `n` pass: with many records tied at the cut (at 1M,
 * ~1,100 records of one score in a scope) it was a BranchPointer probe for each.
 *
 * With truncated terms the result is exact for every record any list reached; a record reached by
 * none (no rare term, and below the top `lim` of every common one) is missed, which only matters
 * when fewer than `n` records score above what such a record can score. A read stops after exactly
 * `lim` postings, equal impacts taken by record id (SearchPosting_impact_idx ends with it): taking
 * every posting tied with the last read ~3,800 where 333 were asked in a corpus of same-shaped
 * records, so a cut through a tie can only swap records of equal bound for one another.
 */
export async function postingScores(
  db: Db,
  args: {
    branchId: string;
    weights: TermWeight[];
    phrases: PhraseBonus[];
    bm25: Bm25Params;
    n: number;
    rescore: number;
    /** A normalised scope: its records and those of the scopes under it (`scope:…`). */
    scope?: string;
    /** Conditions on `r` beyond scope (time, metadata…) with their params in `params`: checked per candidate. */
    recordFilters: string[];
    /** Conditions on `r` for the final rows (workspace…). */
    where: string[];
    /** A condition on `r` (id, step) checked last, in rank order, until `n` rows pass: branch membership. */
    branch?: string;
    params: Params;
    timeExpr: string;
  },
): Promise<ScoredRecord[]> {
  const { params, bm25 } = args;
  const branch = params.add(args.branchId);
  const weights = params.add(JSON.stringify(args.weights), "jsonb");
  const phrases = params.add(JSON.stringify(args.phrases), "jsonb");
  const rescore = params.add(args.rescore, "int");
  // Rounded (see SCORE_DIGITS): a float sum depends on the order rows arrive in.
  const termScore = (w: string, p: string) =>
    `round(sum(${w}.idf * ${p}.tf * ${bm25.k1 + 1} / (${p}.tf + ${bm25.k1} * (${1 - bm25.b} + ${bm25.b} * ${p}.len / GREATEST(${w}.avg, 1))))::numeric, ${SCORE_DIGITS})::float8`;
  // A term's postings, in the scope and the scopes under it when there is one: two index-only
  // reads of SearchPosting_scope_idx (which carries record, tf and len), one for 'a:b' and one for
  // the range 'a:b:…'. Written as one "= OR LIKE" the planner took a bitmap OR and visited the
  // heap for every posting. The range is also spelled out in the index's own operators (byte order,
  // text_pattern_ops: 'a:b:' ≤ scope < 'a:b;' is exactly the scopes starting 'a:b:'): a generic plan
  // of the named statement cannot derive that range from LIKE with a parameter, and at 1M read
  // 60 ms of the step's index for it.
  const exact = args.scope ? params.add(args.scope) : "";
  const like = args.scope ? params.add(`${likeEscape(args.scope)}:%`) : "";
  const under = args.scope ? `x.scope ~>=~ ${params.add(`${args.scope}:`)} AND x.scope ~<~ ${params.add(`${args.scope};`)} AND x.scope LIKE ${like}` : "";
  const postings = (columns: string) => {
    const of = `SELECT ${columns} FROM "SearchPosting" x WHERE x."branchId" = ${branch} AND x.step = q.step AND x.term = q.lexeme`;
    return args.scope ? `${of} AND x.scope = ${exact} UNION ALL ${of} AND ${under}` : of;
  };
  const filterSql = args.recordFilters.length
    ? `WHERE EXISTS (SELECT 1 FROM "Record" r WHERE r.id = p."recordId" AND ${args.recordFilters.join(" AND ")})`
    : "";
  const k1 = bm25.k1;
  // A posting's impact is tf·(k1+1) / (tf + k1·K), K the record's length normalisation (the same
  // for all its postings: they are written together, against one mean length). The least impact
  // any term can have in the record (tf = 1) follows from one of its postings.
  const least = (p: string) => `${k1 + 1} / (1 + ${p}.tf * (${k1 + 1} / ${p}.impact - 1))`;
  // A truncated list is read in the order its edge is taken in, so without a scope the edge is the
  // least impact read, when the read got all \`lim\` postings (it read them anyway: reading them
  // again to find the lim-th took about as long as reading them). Under a scope (search never
  // truncates there) the whole list's lim-th is read apart.
  const edge = args.scope
    ? `(SELECT x.impact FROM "SearchPosting" x WHERE x."branchId" = ${branch} AND x.step = q.step AND x.term = q.lexeme
         ORDER BY x.impact DESC, x."recordId" OFFSET q.lim - 1 LIMIT 1)`
    : `(SELECT CASE WHEN count(*) = q.lim THEN min(r.impact) END FROM read r WHERE r.i = q.i)`;
  const sql = `WITH q AS MATERIALIZED (
       -- Each term has a bit of its own, and a record's terms are a bit string (bit_or): an array
       -- (array_agg) keeps a memory context per group, and over ~1,600 candidates its hash
       -- aggregate spilled to disk.
       SELECT x.step, x.lexeme, x.idf, x.avg, x.selects, x.lim, x.i, set_bit(repeat('0', jsonb_array_length(${weights}))::varbit, x.i, 1) AS bit
       FROM (SELECT x.*, (row_number() OVER () - 1)::int AS i
             FROM jsonb_to_recordset(${weights}) AS x(step text, lexeme text, idf float8, avg float8, selects boolean, lim int)) x),
     -- One index probe per query lexeme (LATERAL, OFFSET 0 keeps it from being flattened): with
     -- stale statistics the planner otherwise reads every posting of the branch and hashes them.
     read AS MATERIALIZED (
         SELECT q.i, q.bit, q.idf, q.avg, x.* FROM q CROSS JOIN LATERAL (
           SELECT * FROM (${postings(`x."recordId", x.step, x.tf, x.len, ${args.scope ? "NULL::float8" : "x.impact"} AS impact`)}) x OFFSET 0) x
         WHERE q.selects AND q.lim IS NULL
         UNION ALL
         SELECT q.i, q.bit, q.idf, q.avg, x.* FROM q CROSS JOIN LATERAL (
           SELECT x."recordId", x.step, x.tf, x.len, x.impact FROM (${postings(`x."recordId", x.step, x.tf, x.len, x.impact`)}) x
           ORDER BY x.impact DESC, x."recordId" LIMIT q.lim) x
         WHERE q.selects AND q.lim IS NOT NULL),
     sel AS MATERIALIZED (
       SELECT p."recordId" AS id, p.step, ${termScore("p", "p")} AS s, bit_or(p.bit) AS terms,
              min(CASE WHEN p.impact > 0 THEN ${least("p")} END) AS low
       FROM read p
       ${filterSql}
       GROUP BY p."recordId", p.step),
     -- What a term can still add to a record it was not found under: a common term at most
     -- idf × (k1 + 1); a truncated one at most idf × the impact where its read stopped (\`edge\`:
     -- the lim-th posting's impact, 0 when the list is shorter; OFFSET 0: flattened, a read ran once per use).
     bound AS MATERIALIZED (
       SELECT e.step, e.lexeme, e.i, e.edge, GREATEST(e.idf, 0) * CASE WHEN e.selects THEN e.edge ELSE ${k1 + 1} END AS b
       FROM (SELECT q.*, CASE WHEN q.selects THEN COALESCE(${edge}, 0) END AS edge
             FROM q WHERE NOT q.selects OR q.lim IS NOT NULL OFFSET 0) e),
     -- Each candidate's terms to look up, and the most they can add. A truncated term cannot be in
     -- a record whose least impact is above the edge: any posting of it there would have been read.
     -- (The margin covers the float error of \`low\`.)
     missing AS MATERIALIZED (
       SELECT c.id, c.step, c.s, b.lexeme, sum(b.b) OVER (PARTITION BY c.id) AS upto
       FROM sel c JOIN bound b ON b.step = c.step AND get_bit(c.terms, b.i) = 0
       WHERE NOT COALESCE(c.low > b.edge * (1 + 1e-9), false)),
     cut AS MATERIALIZED (
       SELECT COALESCE((SELECT s FROM sel ORDER BY s DESC OFFSET ${rescore} - 1 LIMIT 1), 0) AS floor),
     -- A candidate whose score plus what its missing terms can add stays below the rescore-th best
     -- score already known can never reach the top: not probed (exact).
     com AS MATERIALIZED (
       SELECT m.id, ${termScore("q", "p")} AS s, bit_or(q.bit) AS terms
       FROM missing m JOIN q ON q.step = m.step AND q.lexeme = m.lexeme
       -- One primary-key probe per (candidate, lexeme): joined plainly, the planner probes by
       -- (branch, step, term) only and filters every posting of the term on the record. One read
       -- per term for all its candidates ("recordId" = ANY(…)) was slower on PostgreSQL 15: a
       -- descent per array element all the same (640 ids: 9.7 ms against 2.5 ms), and the
       -- planner preferred the covering impact index, filtering every posting of the term.
       CROSS JOIN LATERAL (
         SELECT x.tf, x.len FROM "SearchPosting" x
         WHERE x."branchId" = ${branch} AND x.step = m.step AND x.term = q.lexeme AND x."recordId" = m.id OFFSET 0) p
       WHERE m.s + m.upto >= (SELECT floor FROM cut)
       GROUP BY m.id),
     top AS MATERIALIZED (
       SELECT c.id, c.step, c.s + COALESCE(m.s, 0) AS s, COALESCE(c.terms | m.terms, c.terms) AS terms FROM sel c LEFT JOIN com m ON m.id = c.id
       ORDER BY 3 DESC FETCH FIRST (${rescore}) ROWS WITH TIES),
     ph AS MATERIALIZED (
       SELECT x.step, a.i AS a, b.i AS b, x.tsquery::tsquery AS tq, x.bonus
       FROM jsonb_to_recordset(${phrases}) AS x(step text, lexemes jsonb, tsquery text, bonus float8)
       JOIN q a ON a.step = x.step AND a.lexeme = x.lexemes->>0 JOIN q b ON b.step = x.step AND b.lexeme = x.lexemes->>1)
     -- The phrase test reads the record's tsvector (large for a transcript): only for records holding both lexemes.
     -- Ranked first (OFFSET 0 keeps the order under the filter), then the branch check down that order until n pass.
     SELECT r.id, r.tstep AS step, r.t, r.key, r.score FROM (
       SELECT t.id, t.step AS tstep, r.step, ${args.timeExpr} AS t, ${tieKey()} AS key,
            round((t.s + COALESCE((SELECT sum(ph.bonus) FROM ph
                            WHERE ph.step = t.step AND CASE WHEN get_bit(t.terms, ph.a) = 1 AND get_bit(t.terms, ph.b) = 1 THEN r."searchVector" @@ ph.tq ELSE false END), 0))::numeric, ${SCORE_DIGITS})::float8 AS score
       FROM top t JOIN "Record" r ON r.id = t.id
       WHERE ${args.where.join(" AND ")}
       ORDER BY score DESC, key OFFSET 0) r
     ${args.branch ? `WHERE ${args.branch}` : ""}
     ORDER BY r.score DESC, r.key LIMIT ${params.add(args.n, "int")}`;
  const rows = await db.$queryRawUnsafe<ScoredRow[]>(prepared(trace("bm25", sql, params.values)), ...params.values);
  return rows.map(scored);
}

/**
 * BM25 straight from the records' tsvectors, for steps the index does not cover (a step outside
 * every search output, searched by name): idf 1 unless given, length normalised against the
 * candidates' mean. Bounded to `maxScored` candidates.
 */
export async function tsvectorScores(
  db: Db,
  args: {
    weights: TermWeight[];
    phrases: PhraseBonus[];
    bm25: Bm25Params;
    n: number;
    maxScored: number;
    selectQuery: string;
    where: string[];
    params: Params;
    timeExpr: string;
  },
): Promise<ScoredRecord[]> {
  const { params, bm25 } = args;
  const tsquery = params.add(args.selectQuery, "tsquery");
  const weights = params.add(JSON.stringify(args.weights), "jsonb");
  const phrases = params.add(JSON.stringify(args.phrases), "jsonb");
  const sql = `WITH q AS MATERIALIZED (
       SELECT x.step, x.lexeme, x.idf, x.avg FROM jsonb_to_recordset(${weights}) AS x(step text, lexeme text, idf float8, avg float8)),
     ph AS MATERIALIZED (
       SELECT x.step, x.tsquery::tsquery AS tq, x.bonus FROM jsonb_to_recordset(${phrases}) AS x(step text, tsquery text, bonus float8)),
     cand AS MATERIALIZED (
       SELECT r.id, r.step, ${args.timeExpr} AS t, ${tieKey()} AS key, r."searchVector" AS sv, length(r."searchVector") AS len
       FROM "Record" r
       WHERE r."searchVector" @@ ${tsquery} AND ${args.where.join(" AND ")}
       ORDER BY key LIMIT ${params.add(args.maxScored, "int")}),
     avglen AS (SELECT step, GREATEST(avg(len), 1)::float8 AS avg FROM cand GROUP BY step)
     SELECT c.id, c.step, c.t, c.key, round((
       (SELECT COALESCE(sum(q.idf * cardinality(u.positions) * ${bm25.k1 + 1}
                 / (cardinality(u.positions) + ${bm25.k1} * (${1 - bm25.b} + ${bm25.b} * c.len / COALESCE(NULLIF(q.avg, 0), a.avg)))), 0)
          FROM unnest(c.sv) u JOIN q ON q.lexeme = u.lexeme AND q.step = c.step)
       + COALESCE((SELECT sum(ph.bonus) FROM ph WHERE ph.step = c.step AND c.sv @@ ph.tq), 0))::numeric, ${SCORE_DIGITS})::float8 AS score
     FROM cand c JOIN avglen a ON a.step = c.step
     ORDER BY score DESC, c.key LIMIT ${params.add(args.n, "int")}`;
  const rows = await db.$queryRawUnsafe<ScoredRow[]>(trace("bm25-tsvector", sql, params.values), ...params.values);
  return rows.map(scored);
}

type ScoredRow = { id: string; step: string; t: string | null; score: number; key: string };
function scored(r: ScoredRow): ScoredRecord {
  return { id: r.id, step: r.step, time: r.t, score: Number(r.score), key: r.key };
}
