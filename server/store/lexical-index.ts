/**
 * The BM25 index's SQL: a posting table per branch and step (term, record, tf, record length,
 * scope), the statistics BM25 needs (document frequency per term, record count and mean length per
 * step), kept in sync with the branch's pointers at index time; and the scoring reads.
 *
 * Why postings: scoring from each candidate's tsvector meant unnesting every lexeme of every
 * candidate (thousands of candidates × hundreds of lexemes per question at 100k records).
 * A query now reads only the postings of its own terms, through the primary key
 * (branchId, step, term, recordId), and needs no pointer probe per candidate.
 */
import type { Db, DbTx } from "../core/db";
import { likeEscape, Params, tieKey, trace } from "./record-sql";
import { prepared } from "./prepared-statements";

export interface TermStatRow {
  step: string;
  docs: number;
  avgLength: number;
  term: string | null;
  df: number | null;
}

/** Postgres' own parse of a query (so it matches the index exactly): each token and its lexemes. */
export async function parseQueryLexemes(db: Db, query: string) {
  return db.$queryRawUnsafe<Array<{ alias: string; token: string; lexemes: string[] | null }>>(
    `SELECT alias, token, lexemes FROM ts_debug('english', $1) WHERE lexemes IS NOT NULL`,
    query,
  );
}

/** Step statistics of `steps` on the branch, each joined with the document frequency of the given lexemes. */
export async function termStatRows(db: Db, branchId: string, steps: string[], lexemes: string[]): Promise<TermStatRow[]> {
  return db.$queryRawUnsafe<TermStatRow[]>(
    prepared(`SELECT s.step, s.docs, s."avgLength", t.term, t.df FROM "SearchStepStat" s
     LEFT JOIN "SearchTermStat" t ON t."branchId" = s."branchId" AND t.step = s.step AND t.term = ANY($3::text[])
     WHERE s."branchId" = $1 AND s.step = ANY($2::text[])`),
    branchId,
    steps,
    lexemes,
  );
}

/**
 * DELETE of the postings of `docs` (a query of "branchId", step, "recordId"), RETURNING their
 * "branchId", step and term. Each record's postings are found by primary key through the record's
 * own lexemes (records are immutable, and leave the index before they are deleted): no index leads
 * with the record, so a delete by record id alone read every posting (2.6 s at 1M records).
 */
function deletePostingsOf(docs: string): string {
  return `DELETE FROM "SearchPosting" p
    USING (SELECT d."branchId", d.step, d."recordId", u.lexeme FROM (${docs}) d JOIN "Record" r ON r.id = d."recordId",
             unnest(tsvector_to_array(r."searchVector")) AS u(lexeme)) g
    WHERE p."branchId" = g."branchId" AND p.step = g.step AND p.term = g.lexeme AND p."recordId" = g."recordId"
    RETURNING p."branchId", p.step, p.term`;
}

/** What one step's sync did: records that joined and left its index, its records after, and how the change was found. */
export interface LexicalSync {
  joined: number;
  left: number;
  docs: number;
  /** The whole step was compared with the branch (no window given, or the window did not account for the step's pointers). */
  full: boolean;
}

/**
 * Brings the postings and statistics of `step` on the branch in line with its pointers. Only
 * records that left or joined the step are touched, and document frequencies, the record count
 * and the length sum change by what they remove and add (a +1% run does not recount the step), so
 * the statistics equal a recount. One transaction: a search never sees postings without their
 * statistics. Returns null when the step's record set had not changed.
 *
 * How the change is found: with `changed` (the step's records whose pointers changed since the
 * branch's last index pass, server/store/index-window.ts), the joined records are those of them the
 * index lacks, read by key; that is the whole change when the step's pointers then number exactly
 * its indexed records plus them (a removed pointer leaves one indexed record too many). Otherwise
 * (no window, or the count says a record left) both sorted lists of the step are compared, skipped
 * when their signature (count and a hash of the record ids) is the one stored.
 */
export async function syncLexicalIndex(db: Db, workspaceId: string, branchId: string, step: string, bm25: Bm25Params, changed?: string[]): Promise<LexicalSync | null> {
  return db.$transaction(async (tx) => {
    // One sync of a (branch, step) at a time: two index passes at once (two runs of the branch
    // ending together) would find the same joined records and insert their postings twice. The
    // second waits here, then reads the first's committed documents and finds nothing left to add.
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${LEXICAL_SYNC_LOCK}, hashtext($1 || '/' || $2))`, branchId, step);
    if (changed) {
      const windowed = await windowDiff(tx, branchId, step, changed);
      if (windowed && windowed.joined === 0) return null;
      if (windowed) {
        await applyDiff(tx, workspaceId, branchId, step, bm25, { docs: windowed.docs, lenSum: windowed.lenSum });
        const docs = windowed.docs + windowed.joined;
        // The exact sum over the step's lengths, over its count: what avg(len) computes (int8_avg divides the same numerics).
        await tx.$executeRawUnsafe(
          `UPDATE "SearchStepStat" SET docs = $3, "avgLength" = CASE WHEN $3::int = 0 THEN 0 ELSE ($4::bigint::numeric / $3::bigint::numeric)::float8 END,
             signature = '', "updatedAt" = now()
           WHERE "branchId" = $1 AND step = $2`,
          branchId,
          step,
          docs,
          String(BigInt(windowed.lenSum) + BigInt(windowed.joinedLenSum)),
        );
        return { joined: windowed.joined, left: 0, docs, full: false };
      }
    }
    const [sig] = await tx.$queryRawUnsafe<Array<{ n: number; h: string | null }>>(
      `SELECT count(*)::int AS n, md5(string_agg(p."recordId", ',' ORDER BY p."recordId")) AS h
       FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = $2`,
      branchId,
      step,
    );
    const signature = `${sig?.n ?? 0}:${sig?.h ?? ""}`;
    const [current] = await tx.$queryRawUnsafe<Array<{ signature: string }>>(
      `SELECT signature FROM "SearchStepStat" WHERE "branchId" = $1 AND step = $2`,
      branchId,
      step,
    );
    if (current?.signature === signature) return null;
    // The step's change, found once in one pass over both sorted lists: records the branch shows
    // that the index lacks (joined) and indexed records it no longer shows (gone). Every statement
    // below reads this small table instead of probing all the step's records again.
    await tx.$executeRawUnsafe(
      `CREATE TEMP TABLE lexical_diff ON COMMIT DROP AS
       SELECT COALESCE(p."recordId", d."recordId") AS "recordId", p."recordId" IS NOT NULL AS joined
       FROM (SELECT "recordId" FROM "BranchPointer" WHERE "branchId" = $1 AND step = $2) p
       FULL JOIN (SELECT "recordId" FROM "SearchDoc" WHERE "branchId" = $1 AND step = $2) d ON d."recordId" = p."recordId"
       WHERE p."recordId" IS NULL OR d."recordId" IS NULL`,
      branchId,
      step,
    );
    const [diff] = await tx.$queryRawUnsafe<Array<{ joined: number; left: number }>>(
      `SELECT count(*) FILTER (WHERE joined)::int AS joined, count(*) FILTER (WHERE NOT joined)::int AS "left" FROM lexical_diff`,
    );
    if (diff!.joined + diff!.left > 0) await applyDiff(tx, workspaceId, branchId, step, bm25, null);
    const [stat] = await tx.$queryRawUnsafe<Array<{ docs: number }>>(
      `INSERT INTO "SearchStepStat" ("workspaceId", "branchId", step, docs, "avgLength", signature, "updatedAt")
       SELECT $3, $1, $2, count(*)::int, COALESCE(avg(len), 0)::float8, $4, now() FROM "SearchDoc" WHERE "branchId" = $1 AND step = $2
       ON CONFLICT ("branchId", step) DO UPDATE SET docs = EXCLUDED.docs, "avgLength" = EXCLUDED."avgLength",
         signature = EXCLUDED.signature, "updatedAt" = now()
       RETURNING docs`,
      branchId,
      step,
      workspaceId,
      signature,
    );
    if (diff!.joined + diff!.left === 0 && current) return null;
    return { joined: diff!.joined, left: diff!.left, docs: stat!.docs, full: true };
  }, INDEX_TX);
}

/**
 * The window's change as `lexical_diff` (joined records only), when it is the step's whole change
 * (see syncLexicalIndex): then the step's statistics before it (records and their exact length
 * sum), and the joined records' length sum. Null (and no table) otherwise.
 */
async function windowDiff(tx: DbTx, branchId: string, step: string, changed: string[]) {
  await tx.$executeRawUnsafe(
    `CREATE TEMP TABLE lexical_diff ON COMMIT DROP AS
     SELECT DISTINCT u.id AS "recordId", true AS joined FROM unnest($3::text[]) AS u(id)
     WHERE EXISTS (SELECT 1 FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = $2 AND p."recordId" = u.id)
       AND NOT EXISTS (SELECT 1 FROM "SearchDoc" d WHERE d."branchId" = $1 AND d.step = $2 AND d."recordId" = u.id)`,
    branchId,
    step,
    changed,
  );
  const [row] = await tx.$queryRawUnsafe<Array<{ pointers: number; joined: number; docs: number | null; lenSum: string | null; joinedLenSum: string }>>(
    `SELECT (SELECT count(*)::int FROM "BranchPointer" WHERE "branchId" = $1 AND step = $2) AS pointers,
       (SELECT count(*)::int FROM lexical_diff) AS joined,
       s.docs, round(s.docs * s."avgLength")::bigint::text AS "lenSum",
       (SELECT COALESCE(sum(length(r."searchVector")), 0)::bigint::text FROM lexical_diff x JOIN "Record" r ON r.id = x."recordId") AS "joinedLenSum"
     FROM (SELECT 1) one LEFT JOIN "SearchStepStat" s ON s."branchId" = $1 AND s.step = $2`,
    branchId,
    step,
  );
  if (row && row.docs !== null && row.lenSum !== null && row.docs + row.joined === row.pointers) {
    return { joined: row.joined, docs: row.docs, lenSum: row.lenSum, joinedLenSum: row.joinedLenSum };
  }
  await tx.$executeRawUnsafe(`DROP TABLE lexical_diff`);
  return null;
}

/**
 * Applies `lexical_diff` to the step's postings, term statistics and documents. Impacts of joined
 * records are weighted against the step's mean length with them: from `before` (the step's
 * records and length sum before the change, when it only adds) or by reading the step's documents.
 */
async function applyDiff(tx: DbTx, workspaceId: string, branchId: string, step: string, bm25: Bm25Params, before: { docs: number; lenSum: string } | null) {
  const { k1, b } = bm25;
  const [sum, count] = before
    ? [`$4::bigint`, `$5::int`]
    : [`COALESCE((SELECT sum(len) FROM "SearchDoc" WHERE "branchId" = $1 AND step = $2), 0)`, `(SELECT count(*) FROM "SearchDoc" WHERE "branchId" = $1 AND step = $2)`];
  const statements: Array<[string, unknown[]]> = [
    [`ANALYZE lexical_diff`, []],
    // Records that left: their postings go, and each term's df drops by them.
    [`WITH gone AS (${deletePostingsOf(`SELECT $1::text AS "branchId", $2::text AS step, x."recordId" FROM lexical_diff x WHERE NOT x.joined`)})
     UPDATE "SearchTermStat" t SET df = t.df - g.n
     FROM (SELECT term, count(*)::int AS n FROM gone GROUP BY term) g
     WHERE t."branchId" = $1 AND t.step = $2 AND t.term = g.term`, [branchId, step]],
    [`DELETE FROM "SearchTermStat" WHERE "branchId" = $1 AND step = $2 AND df <= 0`, [branchId, step]],
    [`DELETE FROM "SearchDoc" d USING lexical_diff x
     WHERE NOT x.joined AND d."branchId" = $1 AND d.step = $2 AND d."recordId" = x."recordId"`, [branchId, step]],
    // Records that joined. Impacts are weighted against the step's mean length with them; each
    // term's df grows by them.
    [`WITH n AS MATERIALIZED (
       SELECT r.id, r.scope, r."searchVector" AS sv, length(r."searchVector") AS len FROM lexical_diff x JOIN "Record" r ON r.id = x."recordId" WHERE x.joined),
     mean AS MATERIALIZED (
       SELECT GREATEST(1, (${sum} + COALESCE((SELECT sum(len) FROM n), 0))::float8 / GREATEST(1, ${count} + (SELECT count(*) FROM n))) AS avg),
     ins AS (
       INSERT INTO "SearchPosting" ("workspaceId", "branchId", step, term, "recordId", tf, len, scope, impact)
       SELECT $3, $1, $2, u.lexeme, n.id, f.tf, n.len, n.scope, f.tf * ${k1 + 1} / (f.tf + ${k1} * (${1 - b} + ${b} * n.len / (SELECT avg FROM mean)))
       FROM n, unnest(n.sv) u, LATERAL (SELECT GREATEST(1, COALESCE(cardinality(u.positions), 1)) AS tf) f
       -- In key order: each term's postings go into neighbouring index pages, not one random page each.
       ORDER BY u.lexeme, n.id
       RETURNING term)
     INSERT INTO "SearchTermStat" ("workspaceId", "branchId", step, term, df)
     SELECT $3, $1, $2, term, count(*)::int FROM ins GROUP BY term
     ON CONFLICT ("branchId", step, term) DO UPDATE SET df = "SearchTermStat".df + EXCLUDED.df`, before ? [branchId, step, workspaceId, before.lenSum, before.docs] : [branchId, step, workspaceId]],
    [`INSERT INTO "SearchDoc" ("workspaceId", "branchId", step, "recordId", len)
     SELECT $3, $1, $2, r.id, length(r."searchVector") FROM lexical_diff x JOIN "Record" r ON r.id = x."recordId" WHERE x.joined`, [branchId, step, workspaceId]],
  ];
  for (const [sql, params] of statements) await tx.$executeRawUnsafe(sql, ...params);
}

/**
 * Fresh planner statistics for the index tables after they changed. PGlite has no autovacuum, and
 * with none the planner guesses a term's postings are a handful: it then probes one record's
 * posting through an index that does not lead with the record and reads every posting of the term.
 */
export async function analyzeSearchIndex(db: Db): Promise<void> {
  await db.$executeRawUnsafe(`ANALYZE "SearchPosting", "SearchTermStat", "SearchDoc"`);
}

/**
 * Takes records out of every branch's BM25 index at once (purge, garbage collection): their
 * postings and documents go, and each term's document frequency drops by them, so statistics stay
 * equal to a recount without one. Call it before the records are deleted (`deletePostingsOf`
 * reads their lexemes), for every (branch, step) whose docs hold them.
 */
export async function removeFromSearchIndex(db: DbTx, recordIds: string[]): Promise<void> {
  if (recordIds.length === 0) return;
  const touched = await db.$queryRawUnsafe<Array<{ branchId: string }>>(
    `WITH gone AS (${deletePostingsOf(`SELECT "branchId", step, "recordId" FROM "SearchDoc" WHERE "recordId" = ANY($1::text[])`)}),
     counts AS (SELECT "branchId", step, term, count(*)::int AS n FROM gone GROUP BY 1, 2, 3),
     updated AS (
       UPDATE "SearchTermStat" t SET df = t.df - c.n FROM counts c
       WHERE t."branchId" = c."branchId" AND t.step = c.step AND t.term = c.term RETURNING t."branchId")
     SELECT DISTINCT "branchId" FROM updated`,
    recordIds,
  );
  if (touched.length) {
    await db.$executeRawUnsafe(`DELETE FROM "SearchTermStat" WHERE "branchId" = ANY($1::text[]) AND df <= 0`, touched.map((t) => t.branchId));
  }
  await db.$executeRawUnsafe(`DELETE FROM "SearchDoc" WHERE "recordId" = ANY($1::text[])`, recordIds);
}

/** Indexing a large step is a few big statements: far beyond Prisma's default 5 s transaction limit on a busy machine. */
const INDEX_TX = { timeout: 600_000, maxWait: 60_000 };
/** First key of the advisory lock a (branch, step) sync holds for its transaction (the second is the pair's hash). */
const LEXICAL_SYNC_LOCK = 5_316_001;

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
