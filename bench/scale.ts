/**
 * npm run bench:scale — the production path at scale: records made by the real engine (no model:
 * operator steps), vectors loaded in bulk and indexed by the real indexing (HNSW, GIN, BM25
 * statistics), then the run figures and search latency, on a real PostgreSQL (`DATABASE_URL`)
 * and on the embedded PGlite.
 *
 *   npm run bench:scale -- [--pg 100000,1000000] [--pglite 100000] [--iterations 40]
 *
 * Each (database, size) runs in a child process of its own (a fresh database: on Postgres a new
 * database created beside the one DATABASE_URL names, dropped after; on PGlite a temp directory),
 * so one figure never warms another's cache. Records = sources + 2 derived steps (all searchable,
 * all embedded): `--pg 1000000` loads 333,334 conversations. Prints one table, then EXPLAIN
 * ANALYZE of the slowest search at the largest size. Asserts nothing.
 *
 * SCALE_BENCH_PROFILE=1 adds, per search case, a third pass split by statement (p50 / p95 of each
 * statement's time, and of the time outside them), printed after the timed passes.
 *
 * SCALE_BENCH_KEEP=1 keeps each PostgreSQL database (named synthex_scale_<size>) instead of
 * dropping it, and a later run with the same setting reuses it: it measures the searches only (the
 * load, run and index figures print as "-"), so a change to the query path is re-measured at 1M
 * in minutes instead of the half hour a load takes. With SCALE_BENCH_INCREMENTAL=1 as well, it first
 * indexes the kept pipeline, then adds 1% more conversations and times that run and its indexing
 * (the kept database keeps them).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import type { Db } from "../server/core/db";
import { randomEmbeddingsSql } from "./random-embeddings";

interface Figures {
  db: "postgres" | "pglite";
  records: number;
  loadS: number;
  fullRunS: number;
  indexS: number;
  noopS: number;
  incrementalS: number;
  /** Of incrementalS: the +1% run's indexing (afterRun). */
  incrementalIndexS: number;
  /** Per case: the first pass over its queries (pages not yet in shared_buffers) and the same queries again. */
  search: Record<string, { cold: { p50: number; p95: number }; warm: { p50: number; p95: number } }>;
  /** 1-minute load average when the searches started and when they ended (the machine is shared). */
  load?: [number, number];
  /** The server's memory settings: the figures depend on them (docs/operations.md, "Sizing the database"). */
  memory?: string;
  /** Seconds the server had been up when the searches started: "cold" means shared_buffers empty only right after a start. */
  serverUpS?: number;
  explain?: { name: string; plan: string[] };
}

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const sizes = (s: string) => (s === "" || s === "0" ? [] : s.split(",").map(Number).filter((n) => n > 0));

// ------------------------------------------------------------------------------ one measurement

function conversations(from: number, count: number) {
  const topics = ["budget", "kayak", "sourdough", "rust", "garden", "hiring", "travel", "invoice", "launch", "piano", "marathon", "roadmap"];
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const a = topics[i % topics.length]!;
    const b = topics[(i * 7 + 3) % topics.length]!;
    return {
      externalId: `c${i}`,
      content: `User: we talked about the ${a} plan number ${i} and the ${b} notes. Assistant: the ${a} item ${i % 997} is due in week ${i % 52}; ${b} follow-up ${i % 89} is open.`,
      scope: `org:team${i % 50}`,
      metadata: { time: { created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString() } },
    };
  });
}

const pct = (samples: number[], p: number) => [...samples].sort((x, y) => x - y)[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))]!;

async function measure(kind: "postgres" | "pglite", records: number, iterations: number, withExplain: boolean): Promise<Figures> {
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const { signUp } = await import("../server/services/users");
  const { appendSourceRecords, createPipeline } = await import("../server/services/pipelines");
  const { runPipeline } = await import("../server/services/runs");
  const { settleBackgroundWork } = await import("../server/services/background");
  const { indexPipeline } = await import("../server/search/indexing");
  const { Pipeline } = await import("../server/pipeline/sdk");
  const { OfflineModel } = await import("../server/llm/offline-model");

  const db = await openMigratedDb();
  const kept = await db.pipeline.findFirst({ where: { name: "scale" }, select: { id: true, workspaceId: true } });
  if (kept) {
    const base = { workspaceId: kept.workspaceId, pipelineId: kept.id };
    const figures = { loadS: NaN, fullRunS: NaN, indexS: NaN, noopS: NaN, incrementalS: NaN, incrementalIndexS: NaN };
    if (process.env.SCALE_BENCH_INCREMENTAL === "1") {
      // The kept database grows by 1%: a pass first (a full one when the branch has no index mark yet), then the +1% run.
      const log = (s: string) => console.error(`[${kind} ${records}] ${s}`);
      const t = performance.now();
      const first = await indexPipeline(db, kept.id);
      log(`index pass before the +1% run in ${((performance.now() - t) / 1000).toFixed(0)} s (${first.window === null ? "full pass" : `${first.window} changed pointers`})`);
      const n = await db.record.count({ where: { pipelineId: kept.id, step: "chats" } });
      Object.assign(figures, await plusOnePercent(db, base, n, log));
    }
    return measureSearches(kind, records, iterations, withExplain, base, figures);
  }
  const { workspace } = await signUp(db, { email: "scale@example.com", password: "scale-password-1" });
  const spec = new Pipeline("scale", { agent: "bench" })
    .source("chats", { format: "jsonl" })
    .transform("transcripts", { from: "chats", operator: { kind: "identity" } })
    .transform("summaries", { from: "transcripts", operator: { kind: "extractive-summary", sentences: 1 } })
    .output("search", { from: ["chats", "transcripts", "summaries"], surface: "search" })
    .toSpec();
  const { pipeline } = await createPipeline(db, workspace.id, { name: "scale", spec });
  const base = { workspaceId: workspace.id, pipelineId: pipeline.id };
  const n = Math.ceil(records / 3);
  const model = new OfflineModel();
  const seconds = (t: number) => (performance.now() - t) / 1000;
  const log = (s: string) => console.error(`[${kind} ${records}] ${s}`);

  let t = performance.now();
  for (let from = 0; from < n; from += 5000) await appendSourceRecords(db, pipeline.id, "chats", conversations(from, Math.min(5000, n - from)));
  const loadS = seconds(t);
  log(`sources appended: ${n} in ${loadS.toFixed(0)} s`);

  // Full run, indexing apart (afterRun off) so the two figures are separate.
  t = performance.now();
  const full = await runPipeline(db, base, { model, afterRun: false, runOptions: { batchSize: 1000 } });
  const fullRunS = seconds(t);
  log(`full run ${full.status} in ${fullRunS.toFixed(0)} s`);
  // Embeddings loaded in bulk (one INSERT … SELECT of random unit-free vectors: KNN latency does not
  // depend on what they mean, and the offline embedder in JS would take hours at 1M), then the
  // real indexing builds the HNSW index on the filled table, embeds anything missing (nothing)
  // and computes the BM25 statistics. The +1% run below embeds its records with the real embedder.
  t = performance.now();
  const { getEmbedder } = await import("../server/llm/workspace-embedder");
  const embedder = await getEmbedder(db, workspace.id);
  await db.$executeRawUnsafe(randomEmbeddingsSql(embedder.dimensions), pipeline.id, embedder.id);
  const vectorsS = seconds(t);
  const indexed = await indexPipeline(db, pipeline.id);
  await db.$executeRawUnsafe(`VACUUM ANALYZE`);
  const indexS = seconds(t);
  log(`vectors in ${vectorsS.toFixed(0)} s; index (HNSW, BM25 stats, ${indexed.embedded} embedded by the embedder) in ${indexS.toFixed(0)} s`);

  t = performance.now();
  await runPipeline(db, base, { model, runOptions: { batchSize: 1000 } });
  await settleBackgroundWork();
  const noopS = seconds(t);
  log(`no-op re-run in ${noopS.toFixed(1)} s`);

  const { incrementalS, incrementalIndexS } = await plusOnePercent(db, base, n, log);
  return measureSearches(kind, records, iterations, withExplain, base, { loadS, fullRunS, indexS, noopS, incrementalS, incrementalIndexS });
}

/** Appends 1% more conversations (after the first `n`), runs, then indexes as finishRun does (afterRun), timed apart. */
async function plusOnePercent(db: Db, base: { workspaceId: string; pipelineId: string }, n: number, log: (s: string) => void) {
  const { appendSourceRecords } = await import("../server/services/pipelines");
  const { runPipeline } = await import("../server/services/runs");
  const { afterRun } = await import("../server/services/after-run");
  const { settleBackgroundWork } = await import("../server/services/background");
  const { OfflineModel } = await import("../server/llm/offline-model");
  const extra = Math.max(1, Math.round(n / 100));
  await appendSourceRecords(db, base.pipelineId, "chats", conversations(n, extra));
  const t = performance.now();
  const plus = await runPipeline(db, base, { model: new OfflineModel(), afterRun: false, runOptions: { batchSize: 1000 } });
  const incrementalRunS = (performance.now() - t) / 1000;
  const after = await afterRun(db, plus, { deliver: "await" });
  await settleBackgroundWork();
  const incrementalS = (performance.now() - t) / 1000;
  const incrementalIndexS = incrementalS - incrementalRunS;
  const ix = after.indexed;
  log(
    `+1% (${extra} conversations) run + index in ${incrementalS.toFixed(1)} s (run ${incrementalRunS.toFixed(1)} s, index ${incrementalIndexS.toFixed(1)} s: ` +
      `${ix?.embedded ?? 0} embedded, ${ix?.dateScanned ?? 0} date-scanned, BM25 statistics of ${ix?.lexicalStats?.length ?? 0} steps, ` +
      `${ix?.window === null || ix?.window === undefined ? "full pass" : `${ix.window} changed pointers`}${ix?.ms ? `; ms ${JSON.stringify(ix.ms)}` : ""})`,
  );
  return { incrementalS, incrementalIndexS };
}

/** Search latency per case (and EXPLAIN ANALYZE of the slowest) on a loaded pipeline. */
async function measureSearches(
  kind: "postgres" | "pglite",
  records: number,
  iterations: number,
  withExplain: boolean,
  base: { workspaceId: string; pipelineId: string },
  figures: Pick<Figures, "loadS" | "fullRunS" | "indexS" | "noopS" | "incrementalS" | "incrementalIndexS">,
): Promise<Figures> {
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const { search } = await import("../server/search/search");
  const { sqlTrace } = await import("../server/search/context");
  const db = await openMigratedDb();
  const log = (s: string) => console.error(`[${kind} ${records}] ${s}`);
  const words = ["budget plan", "kayak", "sourdough notes", "rust follow-up", "garden item", "hiring roadmap", "invoice week", "launch", "piano", "marathon plan"];
  const cases: Record<string, (i: number) => Promise<unknown>> = {
    "fts scoped": (i) => search(db, { ...base, query: words[i % words.length]!, mode: "fts", step: "summaries", scope: `org:team${i % 50}` }),
    "semantic scoped": (i) => search(db, { ...base, query: words[i % words.length]!, mode: "semantic", step: "summaries", scope: `org:team${i % 50}` }),
    "hybrid scoped": (i) => search(db, { ...base, query: words[i % words.length]!, mode: "hybrid", step: "transcripts", scope: `org:team${i % 50}` }),
    "fts unscoped": (i) => search(db, { ...base, query: words[i % words.length]! + ` ${i}`, mode: "fts" }),
    "semantic unscoped": (i) => search(db, { ...base, query: words[i % words.length]!, mode: "semantic" }),
    "hybrid unscoped": (i) => search(db, { ...base, query: words[i % words.length]! + ` ${i}`, mode: "hybrid" }),
  };
  const searchFigures: Figures["search"] = {};
  const serverUpS =
    kind === "postgres"
      ? (await db.$queryRawUnsafe<Array<{ s: number }>>(`SELECT extract(epoch FROM now() - pg_postmaster_start_time())::float8 AS s`))[0]!.s
      : undefined;
  const loadBefore = loadavg()[0]!;
  // Cold: the first pass over the case's queries (each scope's pages read for the first time by this
  // case, from the OS cache or disk unless an earlier case read them); warm: the same queries again.
  // One search of another case first, so connection set-up is in neither.
  await cases["fts unscoped"]!(1000);
  for (const [name, run] of Object.entries(cases)) {
    const pass = async () => {
      const samples: number[] = [];
      for (let i = 0; i < iterations; i++) {
        const s = performance.now();
        await run(i);
        samples.push(performance.now() - s);
      }
      return { p50: pct(samples, 50), p95: pct(samples, 95) };
    };
    const cold = await pass();
    const warm = await pass();
    searchFigures[name] = { cold, warm };
    log(`${name}: cold p50 ${cold.p50.toFixed(1)} ms, p95 ${cold.p95.toFixed(1)} ms; warm p50 ${warm.p50.toFixed(1)} ms, p95 ${warm.p95.toFixed(1)} ms`);
  }
  const load: [number, number] = [loadBefore, loadavg()[0]!];
  // SCALE_BENCH_PROFILE=1: a third pass per case, apart from the timed ones, split by statement.
  if (process.env.SCALE_BENCH_PROFILE === "1") {
    for (const [name, run] of Object.entries(cases)) log(`${name} by statement (a third pass): ${await byStatement(db, run, iterations, sqlTrace)}`);
  }

  let explain: Figures["explain"];
  if (withExplain) {
    const [slowest] = Object.entries(searchFigures).sort((x, y) => y[1].warm.p95 - x[1].warm.p95);
    const seen: Array<{ label: string; sql: string; params: unknown[] }> = [];
    sqlTrace.fn = (label, sql, params) => seen.push({ label, sql, params });
    await cases[slowest![0]]!(7);
    sqlTrace.fn = null;
    const plan: string[] = [];
    for (const q of seen) {
      const rows = await db.$queryRawUnsafe<Array<Record<string, string>>>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${q.sql}`, ...q.params);
      plan.push(`-- [${q.label}]`, ...rows.map((r) => `   ${Object.values(r)[0]}`));
    }
    explain = { name: slowest![0], plan };
  }
  const [{ n }] = await db.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM "Record" WHERE "pipelineId" = $1`, base.pipelineId);
  const [settings] = await db.$queryRawUnsafe<Array<{ sb: string; ecs: string }>>(
    `SELECT current_setting('shared_buffers') AS sb, current_setting('effective_cache_size') AS ecs`,
  );
  const memory = `${settings!.sb} / ${settings!.ecs}`;
  await closeDb();
  return { db: kind, records: Number.isFinite(figures.loadS) ? records : n, ...figures, search: searchFigures, memory, serverUpS, load, explain };
}

/**
 * Each statement's wall time over `iterations` searches (p50 / p95 per search, by trace label or
 * the statement's first words), and the rest of the search's time (JS, waits). Statements that run
 * at once (hybrid's two lists) overlap, so their times may add up to more than the search's.
 */
async function byStatement(db: Db, run: (i: number) => Promise<unknown>, iterations: number, sqlTrace: { fn: ((label: string, sql: string, params: unknown[]) => void) | null }) {
  const labels = new Map<string, string>();
  sqlTrace.fn = (label, sql) => labels.set(sql, label);
  const raw = db.$queryRawUnsafe.bind(db);
  let current: Map<string, number> | null = null;
  const timed = async (sql: string, ...values: unknown[]) => {
    const s = performance.now();
    try {
      return await raw(sql, ...values);
    } finally {
      const label = labels.get(sql) ?? sql.replace(/\s+/g, " ").split(" ").slice(0, 4).join(" ");
      current?.set(label, (current.get(label) ?? 0) + performance.now() - s);
    }
  };
  Object.assign(db, { $queryRawUnsafe: timed });
  const per = new Map<string, number[]>();
  const outside: number[] = [];
  try {
    for (let i = 0; i < iterations; i++) {
      current = new Map();
      const s = performance.now();
      await run(i);
      const total = performance.now() - s;
      let inDb = 0;
      for (const [label, ms] of current) {
        per.set(label, [...(per.get(label) ?? []), ms]);
        inDb += ms;
      }
      outside.push(Math.max(0, total - inDb));
    }
  } finally {
    Object.assign(db, { $queryRawUnsafe: raw });
    sqlTrace.fn = null;
  }
  const fmt = (a: number[]) => `${pct(a, 50).toFixed(1)} / ${pct(a, 95).toFixed(1)}`;
  return [...[...per].map(([label, a]) => `${label} ${fmt(a)}${a.length < iterations ? ` (${a.length} of ${iterations})` : ""}`), `outside the statements ${fmt(outside)}`].join("; ");
}

// ------------------------------------------------------------------------------ orchestration

async function child() {
  const [kind, size, iterations, explain] = [args[1] as "postgres" | "pglite", Number(args[2]), Number(args[3]), args[4] === "1"];
  const figures = await measure(kind, size, iterations, explain);
  console.log(`SCALE-RESULT ${JSON.stringify(figures)}`);
}

async function withDatabase<T>(adminUrl: string, size: number, fn: (url: string) => T): Promise<T> {
  const keep = process.env.SCALE_BENCH_KEEP === "1";
  const name = keep ? `synthex_scale_${size}` : `synthex_scale_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = (await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name])).rowCount;
  if (!exists) await admin.query(`CREATE DATABASE ${name}`);
  try {
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    return fn(u.toString());
  } finally {
    if (!keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

function runChild(kind: "postgres" | "pglite", size: number, iterations: number, explain: boolean, env: NodeJS.ProcessEnv): Figures | null {
  const res = spawnSync(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), "bench/scale.ts", "--child", kind, String(size), String(iterations), explain ? "1" : "0"], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = res.stdout.split("\n").find((l) => l.startsWith("SCALE-RESULT "));
  if (!line) {
    console.error(`[${kind} ${size}] failed (exit ${res.status}):\n${res.stdout}`);
    return null;
  }
  return JSON.parse(line.slice("SCALE-RESULT ".length)) as Figures;
}

async function main() {
  if (args[0] === "--child") return child();
  const iterations = Number(flag("iterations", "40"));
  const pgSizes = sizes(flag("pg", "100000,1000000"));
  const pgliteSizes = sizes(flag("pglite", "100000"));
  const adminUrl = process.env.DATABASE_URL?.trim();
  if (pgSizes.length && !adminUrl) throw new Error("bench:scale needs DATABASE_URL (a PostgreSQL with pgvector whose user may create databases) for --pg sizes; --pg 0 skips them.");
  const results: Figures[] = [];
  for (const size of pgliteSizes) {
    const dir = mkdtempSync(path.join(tmpdir(), "synthex-scale-"));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, SYNTHEX_DATA_DIR: dir, SYNTHEX_DB_PORT: "0" };
      delete env.DATABASE_URL;
      const r = runChild("pglite", size, iterations, false, env);
      if (r) results.push(r);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  for (const size of pgSizes) {
    const largest = size === Math.max(...pgSizes);
    const r = await withDatabase(adminUrl!, size, (url) => runChild("postgres", size, iterations, largest, { ...process.env, DATABASE_URL: url, NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? "bench" }));
    if (r) results.push(r);
  }
  printTable(results);
  // A size whose child failed is missing from the table: say so in the exit code too.
  const failedSizes = pgliteSizes.length + pgSizes.length - results.length;
  if (failedSizes > 0) {
    console.error(`${failedSizes} of ${pgliteSizes.length + pgSizes.length} sizes failed (see above)`);
    process.exitCode = 1;
  }
}

/** A reused database has no load, run or index figures: "-". */
const fixed = (v: number, digits: number) => (Number.isFinite(v) ? v.toFixed(digits) : "-");

function printTable(results: Figures[]) {
  const cols = results.map((r) => `${r.db} ${r.records.toLocaleString("en-US")}`);
  const rows: Array<[string, (r: Figures) => string]> = [
    ["shared_buffers / effective_cache_size", (r) => r.memory ?? "-"],
    ["load average (searches start / end)", (r) => (r.load ? `${r.load[0].toFixed(2)} / ${r.load[1].toFixed(2)}` : "-")],
    ["server up when the searches started (s)", (r) => (r.serverUpS === undefined ? "-" : r.serverUpS.toFixed(0))],
    ["load sources (s)", (r) => fixed(r.loadS, 0)],
    ["full run (s)", (r) => fixed(r.fullRunS, 0)],
    ["vectors (bulk) + HNSW + BM25 stats (s)", (r) => fixed(r.indexS, 0)],
    ["no-op re-run (s)", (r) => fixed(r.noopS, 1)],
    ["+1% run + index (s)", (r) => fixed(r.incrementalS, 1)],
    ["+1% / (full run + index)", (r) => fixed(r.incrementalS / (r.fullRunS + r.indexS), 3)],
    ["+1%: its index phase (s, share)", (r) => (Number.isFinite(r.incrementalIndexS) ? `${r.incrementalIndexS.toFixed(1)} (${((100 * r.incrementalIndexS) / r.incrementalS).toFixed(0)}%)` : "-")],
    ...Object.keys(results[0]?.search ?? {}).flatMap((name) =>
      (["cold", "warm"] as const).map(
        (pass) => [`${name} p50 / p95 ${pass} (ms)`, (r: Figures) => `${r.search[name]![pass].p50.toFixed(1)} / ${r.search[name]![pass].p95.toFixed(1)}`] as [string, (r: Figures) => string],
      ),
    ),
  ];
  const width = Math.max(...rows.map(([n]) => n.length)) + 2;
  console.log(`\n${"".padEnd(width)}${cols.map((c) => c.padStart(20)).join("")}`);
  for (const [name, cell] of rows) console.log(`${name.padEnd(width)}${results.map((r) => cell(r).padStart(20)).join("")}`);
  console.log("\ngoals at 1M on PostgreSQL: fts p95 ≤ 20 ms, semantic/hybrid p95 ≤ 40 ms, unscoped ≤ 60 ms, no-op ≤ 10 s, +1% ≤ 0.03 × full");
  console.log(
    "cold: each case's first pass over its queries (its pages not yet in shared_buffers: a server started just before; up longer, earlier searches may have read them); warm: the same queries again. " +
      "Pages not in shared_buffers come from the OS cache, or from disk after a reboot (seconds at 1M).",
  );
  for (const r of results.filter((x) => x.explain)) {
    console.log(`\nEXPLAIN ANALYZE of the slowest search (${r.explain!.name}, ${r.db} ${r.records.toLocaleString("en-US")}):`);
    for (const line of r.explain!.plan) console.log(line);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
