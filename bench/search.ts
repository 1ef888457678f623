/**
 * npm run bench:search — search latency on the embedded database, through the app's own
 * connection path (getDb: pg + @prisma/adapter-pg to the PGlite owner over loopback).
 *
 * ~100k records across 4 steps (chats → transcripts → summaries → monthly) and 50 scopes, bulk
 * generated in SQL (INSERT … SELECT), embeddings for the 3 indexed steps, HNSW built, ANALYZE.
 * Then p50/p95 of: fts / semantic / hybrid with step + scope filters, unscoped search, semantic
 * without filters (HNSW path), and leaves() of a monthly record (~100 leaves). Prints EXPLAIN
 * plans of the queries the service actually ran. Asserts nothing.
 *
 * Usage: npm run bench:search -- [conversations=33200] [iterations=60]
 * SEARCH_BENCH_DIR=/some/dir keeps the loaded database there and reuses it on the next run (the
 * load takes minutes; a change to the query path then costs only the measurements).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { randomEmbeddingsSql } from "./random-embeddings";

const conversations = Number(process.argv[2] ?? 33_200);
const iterations = Number(process.argv[3] ?? 60);
const SCOPES = 50;
const PER_MONTH = 100;
/** The default offline embedder's id and size (what a search output without `embedder` uses). */
const DIMS = 512;
const MODEL = `offline/hash2-${DIMS}`;

const keptDir = process.env.SEARCH_BENCH_DIR;
if (keptDir) mkdirSync(keptDir, { recursive: true });
const dataDir = keptDir ?? mkdtempSync(path.join(tmpdir(), "synthex-search-bench-"));
const loadedMarker = path.join(dataDir, "bench-loaded.json");
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

/** A pronounceable vocabulary; word i is drawn with a skewed (roughly Zipf-like) distribution. */
function vocabulary(size: number): string[] {
  const c = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"];
  const v = ["a", "e", "i", "o", "u"];
  const out = new Set<string>();
  let seed = 7;
  // mulberry32
  const rnd = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  while (out.size < size) {
    const syl = 2 + Math.floor(rnd() * 2);
    let w = "";
    for (let i = 0; i < syl; i++) w += c[Math.floor(rnd() * c.length)]! + v[Math.floor(rnd() * v.length)]!;
    out.add(w);
  }
  return [...out];
}

const ms = (t: number) => `${t.toFixed(2)} ms`;
function pct(samples: number[], p: number) {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function main() {
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb: getDb } = await import("../server/store/runtime-env");
  const { signUp } = await import("../server/services/users");
  const { createPipeline, getBranch } = await import("../server/services/pipelines");
  const { Pipeline } = await import("../server/pipeline/sdk");
  const { search } = await import("../server/search/search");
  const { leaves } = await import("../server/search/provenance");
  const { sqlTrace } = await import("../server/search/context");
  const { ensureVectorIndex } = await import("../server/store/embedding-store");

  const t0 = performance.now();
  const db = await getDb();
  const vocab = vocabulary(3000);
  const reused = existsSync(loadedMarker) ? (JSON.parse(readFileSync(loadedMarker, "utf8")) as { ws: string; pid: string }) : null;
  const { ws, pid } = reused ?? (await loadCorpus());
  if (reused) console.log(`reusing the corpus loaded in ${dataDir}`);

  async function loadCorpus() {
    const { workspace } = await signUp(db, { email: "search-bench@example.com", password: "bench-password-1" });
    const spec = new Pipeline("search-bench")
      .source("chats", { format: "jsonl" })
      .transform("transcripts", { from: "chats", operator: { kind: "identity" } })
      .transform("summaries", { from: "transcripts", operator: { kind: "extractive-summary", sentences: 1 } })
      .aggregate("monthly", { from: "summaries", period: "month", operator: { kind: "extractive-summary", sentences: 5 } })
      .output("search", { from: ["transcripts", "summaries", "monthly"], surface: "search" })
      .toSpec();
    const { pipeline } = await createPipeline(db, workspace.id, { name: "search-bench", spec });
    const { branch } = await getBranch(db, pipeline.id);
    const ws = workspace.id;
    const pid = pipeline.id;

    // ---- bulk load (one statement per step) -------------------------------------------------
    const load = async (label: string, sql: string, ...params: unknown[]) => {
      const t = performance.now();
      const n = await db.$executeRawUnsafe(sql, ...params);
      console.log(`  ${label}: ${n} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    };
    console.log(`loading ${conversations} conversations × 3 steps + monthly aggregates, ${SCOPES} scopes…`);
    const insertRecord = `INSERT INTO "Record" (id, "workspaceId", "pipelineId", step, "stepVersionHash", "workKey", "materializationKey", "contentFingerprint", content, scope, metadata, "createdAt")`;
    // Conversation i: scope i % 50, k = i / 50 its index inside the scope, month k / 100.
    await load(
      "chats",
      `${insertRecord}
       SELECT 'c' || i, $1, $2, 'chats', 'v1', 'c' || i, 'c' || i, md5(x.content), x.content, 'org:team' || (i % ${SCOPES}),
              jsonb_build_object('time', jsonb_build_object('created_at',
                to_char(timestamp '2024-01-01' + ((i / ${SCOPES}) / ${PER_MONTH}) * interval '1 month' + ((i / ${SCOPES}) % ${PER_MONTH}) * interval '6 hours', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
                'chat', jsonb_build_object('conversation_id', 'conv-' || i)),
              now() - (${conversations} - i) * interval '1 minute'
       FROM generate_series(0, $4 - 1) AS i,
       LATERAL (SELECT string_agg(($3::text[])[1 + floor(power(random(), 2.5) * array_length($3::text[], 1))::int], ' ') || '.' AS content
                FROM generate_series(1, 40 + (i % 2)) g) x`,
      ws,
      pid,
      vocab,
      conversations,
    );
    await load(
      "transcripts",
      `${insertRecord}
       SELECT 't' || substr(id, 2), "workspaceId", "pipelineId", 'transcripts', 'v1', 't' || substr(id, 2), 't' || substr(id, 2), "contentFingerprint",
              'User: ' || content, scope, metadata, "createdAt" FROM "Record" WHERE "pipelineId" = $1 AND step = 'chats'`,
      pid,
    );
    await load(
      "summaries",
      `${insertRecord}
       SELECT 's' || substr(id, 2), "workspaceId", "pipelineId", 'summaries', 'v1', 's' || substr(id, 2), 's' || substr(id, 2), md5(left(content, 90)),
              left(content, 90), scope, metadata, "createdAt" FROM "Record" WHERE "pipelineId" = $1 AND step = 'transcripts'`,
      pid,
    );
    await load(
      "monthly",
      `${insertRecord}
       SELECT 'm' || scope || '_' || period, $2, $1, 'monthly', 'v1', 'm' || scope || '_' || period, 'm' || scope || '_' || period, md5(string_agg(content, ' ')),
              'Monthly reflection ' || period || ': ' || left(string_agg(content, ' ' ORDER BY id), 2000), scope,
              jsonb_build_object('time', jsonb_build_object('created_at', max(metadata #>> '{time,created_at}'), 'period', period)), max("createdAt")
       FROM (SELECT *, left(metadata #>> '{time,created_at}', 7) AS period FROM "Record" WHERE "pipelineId" = $1 AND step = 'summaries') s
       GROUP BY scope, period`,
      pid,
      ws,
    );
    await load(
      "edges",
      `INSERT INTO "RecordEdge" ("workspaceId", "parentId", "childId", position)
       SELECT "workspaceId", 'c' || substr(id, 2), id, 0 FROM "Record" WHERE "pipelineId" = $1 AND step = 'transcripts'
       UNION ALL SELECT "workspaceId", 't' || substr(id, 2), id, 0 FROM "Record" WHERE "pipelineId" = $1 AND step = 'summaries'
       UNION ALL SELECT "workspaceId", id, 'm' || scope || '_' || left(metadata #>> '{time,created_at}', 7), 0 FROM "Record" WHERE "pipelineId" = $1 AND step = 'summaries'`,
      pid,
    );
    await load(
      "pointers",
      `INSERT INTO "BranchPointer" ("workspaceId", "branchId", step, "groupKey", "recordId", "updatedAt")
       SELECT "workspaceId", $2, step, id, id, now() FROM "Record" WHERE "pipelineId" = $1`,
      pid,
      branch.id,
    );
    await load("embeddings", randomEmbeddingsSql(DIMS, `r.step <> 'chats'`), pid, MODEL);
    {
      const t = performance.now();
      // Built the way indexing builds it: SYNTHEX_INDEX_BUILD_MEMORY of maintenance memory (PGlite default 256MB).
      await ensureVectorIndex(db, MODEL, DIMS);
      console.log(`  HNSW index: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    {
      // BM25 statistics, as indexing computes them after a run.
      const t = performance.now();
      const { refreshLexicalStats } = await import("../server/search/lexical");
      await refreshLexicalStats(db, ws, branch.id, ["transcripts", "summaries", "monthly"]);
      console.log(`  BM25 statistics: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    await db.$executeRawUnsafe(`VACUUM ANALYZE`);
    const counts = await db.$queryRawUnsafe<Array<{ step: string; n: number }>>(`SELECT step, count(*)::int AS n FROM "Record" GROUP BY step ORDER BY step`);
    const total = counts.reduce((a, c) => a + c.n, 0);
    console.log(`loaded ${total} records in ${((performance.now() - t0) / 1000).toFixed(0)} s:`, counts.map((c) => `${c.step} ${c.n}`).join(", "));
    if (keptDir) writeFileSync(loadedMarker, JSON.stringify({ ws, pid }));
    return { ws, pid };
  }

  // ---- queries -------------------------------------------------------------------------------
  // Mid-frequency words (the vocabulary is skewed: low indices are common).
  const words = Array.from({ length: 30 }, (_, i) => vocab[40 + i * 17]!);
  const queries = words.map((w, i) => (i % 3 === 0 ? `${w} ${vocab[100 + i]!}` : w));
  // Questions: a few common words and a couple of rarer ones, the shape agents send (OR semantics).
  const questions = Array.from({ length: 30 }, (_, i) => `what did ${vocab[i % 20]!} ${vocab[60 + i * 7]!} say about ${vocab[5 + (i % 30)]!} ${vocab[300 + i * 11]!} and ${vocab[900 + i]!}?`);
  const base = { workspaceId: ws, pipelineId: pid };
  const monthlyIds = (await db.$queryRawUnsafe<Array<{ id: string }>>(`SELECT id FROM "Record" WHERE step = 'monthly' AND "pipelineId" = $1 ORDER BY id LIMIT 50`, pid)).map((r) => r.id);

  const cases: Array<{ name: string; run: (i: number) => Promise<number> }> = [
    { name: "fts, step+scope", run: (i) => search(db, { ...base, query: queries[i % queries.length]!, mode: "fts", step: "summaries", scope: `org:team${i % SCOPES}` }).then((r) => r.hits.length) },
    { name: "semantic, step+scope", run: (i) => search(db, { ...base, query: queries[i % queries.length]!, mode: "semantic", step: "summaries", scope: `org:team${i % SCOPES}` }).then((r) => r.hits.length) },
    { name: "hybrid, step+scope", run: (i) => search(db, { ...base, query: queries[i % queries.length]!, mode: "hybrid", step: "transcripts", scope: `org:team${i % SCOPES}` }).then((r) => r.hits.length) },
    { name: "fts, unscoped (all indexed steps, dedupe)", run: (i) => search(db, { ...base, query: queries[i % queries.length]!, mode: "fts" }).then((r) => r.hits.length) },
    { name: "hybrid, unscoped (all indexed steps, dedupe)", run: (i) => search(db, { ...base, query: queries[i % queries.length]!, mode: "hybrid" }).then((r) => r.hits.length) },
    { name: "hybrid, unscoped, 6-word questions", run: (i) => search(db, { ...base, query: questions[i % questions.length]!, mode: "hybrid" }).then((r) => r.hits.length) },
    { name: "fts, unscoped, 6-word questions", run: (i) => search(db, { ...base, query: questions[i % questions.length]!, mode: "fts" }).then((r) => r.hits.length) },
    { name: "semantic, step only (HNSW path)", run: (i) => search(db, { ...base, query: queries[i % queries.length]!, mode: "semantic", step: "transcripts" }).then((r) => r.hits.length) },
    { name: "leaves(monthly record)", run: (i) => leaves(db, ws, monthlyIds[i % monthlyIds.length]!).then((r) => r.leaves.length) },
  ];
  console.log(`\n${iterations} iterations each (after 5 warm-up), limit 20:`);
  const results: Array<{ name: string; p50: number; p95: number; avgHits: number }> = [];
  for (const c of cases) {
    for (let i = 0; i < 5; i++) await c.run(i + 1000);
    const samples: number[] = [];
    let hits = 0;
    for (let i = 0; i < iterations; i++) {
      const t = performance.now();
      hits += await c.run(i);
      samples.push(performance.now() - t);
    }
    const r = { name: c.name, p50: pct(samples, 50), p95: pct(samples, 95), avgHits: hits / iterations };
    results.push(r);
    console.log(`  ${r.name.padEnd(46)} p50 ${ms(r.p50).padStart(10)}  p95 ${ms(r.p95).padStart(10)}  (avg ${r.avgHits.toFixed(1)} results)`);
  }

  // ---- EXPLAIN of the queries the service ran -----------------------------------------------
  const explain = async (label: string, run: () => Promise<unknown>, wanted: string[]) => {
    const seen: Array<{ label: string; sql: string; params: unknown[] }> = [];
    sqlTrace.fn = (l, sql, params) => seen.push({ label: l, sql, params });
    await run();
    sqlTrace.fn = null;
    for (const q of seen.filter((s) => wanted.includes(s.label))) {
      const stmt = `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${q.sql}`;
      const rows =
        q.label === "semantic-hnsw"
          ? ((
              await db.$transaction([
                db.$executeRawUnsafe(`SET LOCAL hnsw.iterative_scan = relaxed_order`),
                db.$executeRawUnsafe(`SET LOCAL hnsw.ef_search = 40`),
                db.$queryRawUnsafe<Array<Record<string, string>>>(stmt, ...q.params),
              ])
            )[2] as Array<Record<string, string>>)
          : await db.$queryRawUnsafe<Array<Record<string, string>>>(stmt, ...q.params);
      console.log(`\n-- EXPLAIN ${label} [${q.label}]`);
      for (const r of rows) console.log(`   ${Object.values(r)[0]}`);
    }
  };
  await explain("fts, step+scope", () => search(db, { ...base, query: queries[1]!, mode: "fts", step: "summaries", scope: "org:team7" }), ["bm25"]);
  await explain("semantic, step+scope", () => search(db, { ...base, query: queries[1]!, mode: "semantic", step: "summaries", scope: "org:team7" }), ["semantic-exact", "semantic-hnsw"]);
  await explain("semantic, step only", () => search(db, { ...base, query: queries[1]!, mode: "semantic", step: "transcripts" }), ["semantic-exact", "semantic-hnsw"]);
  await explain("unscoped fts", () => search(db, { ...base, query: queries[1]!, mode: "fts" }), ["bm25", "dedupe"]);
  await explain("unscoped fts, 6-word question", () => search(db, { ...base, query: questions[1]!, mode: "fts" }), ["bm25"]);
  await explain("leaves(monthly)", () => leaves(db, ws, monthlyIds[0]!), ["leaves"]);

  console.log("\nsummary (goals: fts p95 ≤ 10 ms, semantic/hybrid ≤ 30 ms, unscoped ≤ 50 ms, leaves ≤ 10 ms):");
  for (const r of results) console.log(`  ${r.name.padEnd(46)} p50 ${ms(r.p50).padStart(10)}  p95 ${ms(r.p95).padStart(10)}`);
  await closeDb();
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    if (!keptDir) rmSync(dataDir, { recursive: true, force: true });
    // Exit once stdout is written: to a pipe it is asynchronous, and an immediate exit can cut the summary off.
    process.stdout.write("", () => process.exit());
  });
