/**
 * The BM25 index's SQL: a posting table per branch and step (term, record, tf, record length,
 * scope), the statistics BM25 needs (document frequency per term, record count and mean length per
 * step), kept in sync with the branch's pointers at index time. The scoring reads over it are in
 * `lexical-scores.ts`.
 *
 * Why postings: scoring from each candidate's tsvector meant unnesting every lexeme of every
 * candidate (thousands of candidates × hundreds of lexemes per question at 100k records).
 * A query now reads only the postings of its own terms, through the primary key
 * (branchId, step, term, recordId), and needs no pointer probe per candidate.
 */
import type { Db, DbTx } from "../core/db";
import { prepared } from "./prepared-statements";
import type { Bm25Params } from "./lexical-scores";

export interface TermStatRow {
  step: string;
  docs: number;
  avgLength: number;
  term: string | null;
  df: number | null;
}

/**
 * Step statistics of `steps` on the branch, each joined with the document frequency of the given
 * lexemes; by step name (search takes the largest step's statistics, the first of equal ones).
 */
export async function termStatRows(db: Db, branchId: string, steps: string[], lexemes: string[]): Promise<TermStatRow[]> {
  return db.$queryRawUnsafe<TermStatRow[]>(
    prepared(`SELECT s.step, s.docs, s."avgLength", t.term, t.df FROM "SearchStepStat" s
     LEFT JOIN "SearchTermStat" t ON t."branchId" = s."branchId" AND t.step = s.step AND t.term = ANY($3::text[])
     WHERE s."branchId" = $1 AND s.step = ANY($2::text[])
     ORDER BY s.step, t.term`),
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
 * Fresh planner statistics, after an index pass changed a large share of a step, for the tables a
 * search reads: the index's own and the records, pointers, embeddings and edges it joins. PGlite has
 * no autovacuum, and with none the planner guesses a term's postings are a handful: it then probes
 * one record's posting through an index that does not lead with the record and reads every posting
 * of the term. On PostgreSQL autovacuum analyzes a freshly imported table about a minute later;
 * until then a search cost the database twice the CPU (14–15 against 7 ms, bench:load).
 */
export async function analyzeSearchIndex(db: Db): Promise<void> {
  await db.$executeRawUnsafe(`ANALYZE "SearchPosting", "SearchTermStat", "SearchDoc", "Record", "BranchPointer", "Embedding", "RecordEdge"`);
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
