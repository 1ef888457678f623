/**
 * Every benchmark of docs/benchmarks.md, run the way that page shows it
 * (`npm run bench:x -- …`, a real child process) at the smallest sizes its own arguments allow:
 * it must exit 0 and print its headings and numbers. The figures themselves are not judged (a
 * bench asserts nothing about speed); what is asserted is what the bench promises to print, and the
 * counts that follow from the inputs (records made, model calls, questions scored, errors 0).
 *
 * Each test gets a fresh temp directory as TMPDIR (the benches' own mkdtemp data directories land
 * in it) and SYNTHEX_DATA_DIR, removed afterwards. The child's environment is a user's shell, not
 * Vitest's: no DATABASE_URL/TEST_DATABASE_URL (the PostgreSQL parts of bench:scale and bench:load
 * are left out: `--pg 0`, `--targets embedded`), and none of the outbound allowances this config
 * sets for the tests.
 *
 * The LoCoMo benches read the project's LoCoMo test file (server/eval/testing/locomo-fixture.ts:
 * two conversations with every anomaly of the real file), written to the test's temp directory; the
 * counts they must print come from the eval's own loader. The dev split is not needed here.
 *
 * bench:load starts `npm start`, which builds first when there is no `.next/BUILD_ID`: `npm test`
 * builds before Vitest, but this file run alone on a clean clone builds, hence that test's timeout.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { freePort } from "../server/http/testing/free-port";
import { parseLocomo } from "../server/eval/locomo";
import { locomoFixture } from "../server/eval/testing/locomo-fixture";

const ROOT = path.resolve(import.meta.dirname, "..");
const NUM = String.raw`\d+(?:\.\d+)?`;

/**
 * A bench smoke run is judged by what it prints, never by how long it took: these limits only stop
 * a bench that hangs. They are far above what a loaded 2-core laptop needs (soak:crash: 70 s quiet,
 * over 110 s at load 14; every bench starts tsx and the embedded database, 10–25 s at load 10).
 */
const BENCH_LIMIT_MS = 900_000;
const TEST_LIMIT_MS = BENCH_LIMIT_MS + 30_000;

interface BenchResult {
  code: number | null;
  /** Set when the bench was killed at its limit. */
  killedAfterMs?: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

let tmp = "";
beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), "synthex-benches-"));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** What a user's shell would hand the bench: Vitest's own settings and any database URL removed. */
function benchEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp, SYNTHEX_DATA_DIR: path.join(tmp, "data"), NEXT_TELEMETRY_DISABLED: "1", ...extra };
  for (const key of [
    "DATABASE_URL",
    "TEST_DATABASE_URL",
    "SEARCH_BENCH_DIR",
    "SCALE_BENCH_KEEP",
    "SYNTHEX_BENCH_IMPORT_DIR",
    "SYNTHEX_ALLOW_HTTP_HOSTS",
    "SYNTHEX_ALLOW_PRIVATE_NETWORKS",
    "BENCH_LOAD_PORT",
    "PROFILE",
    "SOAK_DEBUG",
    "NODE_ENV",
    "TEST",
  ]) {
    if (!(key in extra)) delete env[key];
  }
  for (const key of Object.keys(env)) if (key.startsWith("VITEST")) delete env[key];
  return env;
}

/** `npm run <script> -- <args>` in the repository, in a process group of its own (killed whole on timeout). */
function runBench(script: string, args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<BenchResult> {
  const timeoutMs = options.timeoutMs ?? BENCH_LIMIT_MS;
  let killedAfterMs: number | undefined;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", script, "--", ...args], { cwd: ROOT, env: benchEnv(options.env), stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      killedAfterMs = timeoutMs;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      console.log(`npm run ${script} -- ${args.join(" ")}: exit ${code} in ${seconds.toFixed(1)} s`);
      resolve({ code, stdout, stderr, seconds, killedAfterMs });
    });
  });
}

/** Exit 0, or the end of what the bench printed. */
function expectSuccess(r: BenchResult) {
  const how = r.killedAfterMs ? `killed at its ${r.killedAfterMs / 1000} s limit (a hang, not slowness)` : `exit ${r.code}`;
  expect(r.code, `${how}\n--- stdout (end) ---\n${r.stdout.slice(-4000)}\n--- stderr (end) ---\n${r.stderr.slice(-4000)}`).toBe(0);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `name … p50 <n> ms … p95 <n> ms` on one line. */
function expectLatencyLine(out: string, name: string) {
  expect(out).toMatch(new RegExp(`${escape(name)}\\s+p50\\s+${NUM} ms\\s+p95\\s+${NUM} ms`));
}

/** The LoCoMo test file in the test's temp dir, and the questions the eval loader keeps from it (all, per sample, scored). */
function locomoFile() {
  const file = path.join(tmp, "locomo-fixture.json");
  const text = JSON.stringify(locomoFixture());
  writeFileSync(file, text);
  const { questions } = parseLocomo(text, file).dataset;
  const scored = questions.filter((q) => !q.apart);
  return { file, questions: questions.length, scored: scored.length, scoredIn: (sample: string) => scored.filter((q) => q.sample === sample).length };
}

describe("the benchmark commands of docs/benchmarks.md", () => {
  it("bench:engine — transform throughput, no-op and +1% re-runs", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:engine", ["200"]);
    expectSuccess(r);
    expect(r.stdout).toContain("transform 200 records:");
    expect(r.stdout).toMatch(new RegExp(`import ${NUM} s`));
    expect(r.stdout).toMatch(new RegExp(`full run ${NUM} s = \\d+ records/s \\(200 model calls\\), peak RSS \\d+ MB, peak JS heap \\d+ MB`));
    expect(r.stdout).toMatch(new RegExp(`no-op re-run ${NUM} s \\(0 model calls\\)`));
    expect(r.stdout).toMatch(new RegExp(`\\+1% sources re-run ${NUM} s = ${NUM}x the full run \\(2 model calls\\)`));
    expect(r.stdout).toMatch(/peak RSS overall \d+ MB/);
  });

  it("bench:models — records/s per run concurrency against the mock provider", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:models", ["--latency", "5", "--limit", "4", "--levels", "1,4"]);
    expectSuccess(r);
    expect(r.stdout).toContain("mock latency 5 ms, provider concurrency limit 4");
    expect(r.stdout).toContain("concurrency  records  seconds  records/s  ideal/s  max in flight");
    const rows = [...r.stdout.matchAll(new RegExp(`^\\s+(\\d+)\\s+(\\d+)\\s+(${NUM})\\s+(${NUM})\\s+(${NUM})\\s+(\\d+)$`, "gm"))].map((m) => ({
      concurrency: Number(m[1]),
      records: Number(m[2]),
      perSecond: Number(m[4]),
      ideal: Number(m[5]),
      maxInFlight: Number(m[6]),
    }));
    expect(rows.map((x) => [x.concurrency, x.records, x.ideal])).toEqual([
      [1, 24, 200],
      [4, 32, 800],
    ]);
    for (const row of rows) {
      expect(row.perSecond).toBeGreaterThan(0);
      expect(row.maxInFlight).toBeGreaterThanOrEqual(1);
      expect(row.maxInFlight).toBeLessThanOrEqual(Math.min(row.concurrency, 4));
    }
  });

  it("bench:facts-commit — a split step over long sessions: its time, commits and audit bytes per fact", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:facts-commit", ["2", "6"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`facts step: 2 sessions x 6 turns -> [1-9]\\d* facts, run completed in ${NUM} s, commits ~${NUM} s; audit \\d+ B/fact \\(${NUM} MB\\) vs content \\d+ B/fact · load ${NUM} ${NUM} ${NUM}`));
  });

  it("bench:import — a generated ChatGPT export imported, re-imported, peak RSS", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:import", ["5"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`generated 5 conversations: \\d+ MB JSON in ${NUM} s`));
    expect(r.stdout).toMatch(new RegExp(`import: 5 conversations, 5 added, 0 skipped, 0 warnings in ${NUM} s \\(${NUM} MB/s, \\d+ conv/s\\)`));
    expect(r.stdout).toMatch(/peak RSS during the first import: \d+ MB/);
    expect(r.stdout).toMatch(new RegExp(`re-import: 5 received, 0 added in ${NUM} s`));
    expect(r.stdout).toMatch(/importer peak RSS \d+ MB \(heap limit 256 MB\) .*peak JS heap \d+ MB; goal < 400 MB: (OK|OVER)/);
    expect(r.stdout).toMatch(/database owner process \(PGlite\) peak RSS \d+ MB/);
  });

  it("bench:search — search latency per query shape, EXPLAIN plans, summary", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:search", ["500", "5"]);
    expectSuccess(r);
    expect(r.stdout).toContain("loading 500 conversations × 3 steps + monthly aggregates, 50 scopes…");
    expect(r.stdout).toMatch(/loaded 1550 records in \d+ s: chats 500, monthly 50, summaries 500, transcripts 500/);
    expect(r.stdout).toContain("5 iterations each (after 5 warm-up), limit 20:");
    const cases = [
      "fts, step+scope",
      "semantic, step+scope",
      "hybrid, step+scope",
      "fts, unscoped (all indexed steps, dedupe)",
      "hybrid, unscoped (all indexed steps, dedupe)",
      "hybrid, unscoped, 6-word questions",
      "fts, unscoped, 6-word questions",
      "semantic, step only (HNSW path)",
      "leaves(monthly record)",
    ];
    const [measured, summary] = r.stdout.split("summary (goals:");
    expect(summary, "no summary").toBeDefined();
    for (const c of cases) {
      expect(measured).toMatch(new RegExp(`${escape(c)}\\s+p50\\s+${NUM} ms\\s+p95\\s+${NUM} ms\\s+\\(avg ${NUM} results\\)`));
      expectLatencyLine(summary!, c);
    }
    expect(r.stdout).toContain("-- EXPLAIN fts, step+scope [bm25]");
    expect(r.stdout).toMatch(/-- EXPLAIN leaves\(monthly\) \[leaves\]/);
    expect(r.stdout).toMatch(new RegExp(`Execution Time: ${NUM} ms`));
  });

  it("bench:branch -- [records] [conversations] — branch creation and a run on a changed branch", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:branch", ["200", "20"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`branch create with 200 records on main \\(import took ${NUM} s\\):`));
    for (const b of ["b1", "b2", "b3"]) expect(r.stdout).toMatch(new RegExp(`create ${b}: \\d+ ms \\(200 pointers copied, 0 records computed\\)`));
    expect(r.stdout).toContain("records in the store after 3 branches: 200 (unchanged)");
    expect(r.stdout).toMatch(/delete b1: \d+ ms/);
    expect(r.stdout).toContain("run on a branch, 20 conversations (chats → summaries → monthly → world):");
    // 20 summaries + 1 month + 1 world state; an unchanged branch reuses everything.
    expect(r.stdout).toMatch(new RegExp(`main, full run: 22 model calls, [\\d,]+ tokens, ${NUM} s`));
    expect(r.stdout).toMatch(new RegExp(`unchanged branch: 0 model calls, 0 tokens, ${NUM} s`));
    expect(r.stdout).toContain("plan on the branch (summaries prompt changed): summaries 20/20, monthly 1/1, world 1/1");
    expect(r.stdout).toMatch(new RegExp(`branch run vs main's full run: 1\\.00× the model calls, 1\\.00× the tokens, ${NUM}× the time`));
    expect(r.stdout).toMatch(/branch, monthly prompt changed: 2 model calls/);
    expect(r.stdout).toMatch(/^\s+summaries\s+0 calls\s+0 made\s+20 reused$/m);
  });

  it("bench:locomo-search -- <file> --only conv-a — retrieval quality per mode and category", { timeout: TEST_LIMIT_MS }, async () => {
    const locomo = locomoFile();
    const r = await runBench("bench:locomo-search", [locomo.file, "--only", "conv-a", "--modes", "fts,hybrid", "--limit", "20"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`imported and ran 1 conversations in ${NUM} s`));
    expect(r.stdout).toContain("questions per mode: categories 1-4 with evidence; unscoped search over the default chat-memory pipeline");
    for (const mode of ["fts", "hybrid"]) {
      const m = new RegExp(
        `^${mode}\\s+hit@1 (${NUM})\\s+hit@5 (${NUM})\\s+recall@2k (${NUM})\\s+ctx \\d+\\s+n (\\d+)\\s+p50 ${NUM} ms\\s+p95 ${NUM} ms$`,
        "m",
      ).exec(r.stdout);
      expect(m, `no ${mode} row`).not.toBeNull();
      const [hit1, hit5, recall] = [Number(m![1]), Number(m![2]), Number(m![3])];
      expect(hit1).toBeLessThanOrEqual(hit5);
      expect(hit5).toBeLessThanOrEqual(1);
      expect(recall).toBeGreaterThanOrEqual(0);
      expect(recall).toBeLessThanOrEqual(1);
      expect(Number(m![4])).toBeGreaterThan(0);
      expect(Number(m![4])).toBeLessThanOrEqual(locomo.scoredIn("conv-a"));
    }
    expect(r.stdout).toMatch(new RegExp(`^  cat [1-4]\\s+hit@1 ${NUM}\\s+hit@5 ${NUM}`, "m"));
  });

  it("bench:graph-search -- [file] [--repeat n] — synapsis eval in hybrid and graph mode, per-question latency", { timeout: TEST_LIMIT_MS }, async () => {
    const locomo = locomoFile();
    const r = await runBench("bench:graph-search", [locomo.file, "--repeat", "1"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`dataset locomo-fixture\\.json: 2 conversations, ${locomo.questions} questions \\(imported ${NUM} s\\)`));
    for (const mode of ["hybrid", "graph"]) {
      expect(r.stdout).toMatch(
        new RegExp(
          `eval synapsis --mode ${mode}\\s+completed in ${NUM} s · ${locomo.scored} questions · hit@1 ${NUM} hit@5 ${NUM} recall@2k ${NUM} mrr ${NUM} · eval search p50 ${NUM} ms p95 ${NUM} ms`,
        ),
      );
    }
    expect(r.stdout).toMatch(new RegExp(`${locomo.questions} questions × 1: \\d+ name an entity of the graph; graph hits with an evidence path \\d+ \\(of ${locomo.questions * 10} max\\)`));
    for (const name of ["hybrid", "graph", "graph retrieval alone"]) {
      expect(r.stdout).toMatch(new RegExp(`^${escape(name)}\\s+p50 ${NUM} ms\\s+p95 ${NUM} ms\\s+max ${NUM} ms\\s+\\(n=${locomo.questions}\\)$`, "m"));
    }
    expect(r.stdout).toMatch(new RegExp(`total ${NUM} s`));
  });

  it("bench:eval -- [file] [templates] — import, build, every question; the second eval builds nothing", { timeout: TEST_LIMIT_MS }, async () => {
    const locomo = locomoFile();
    const r = await runBench("bench:eval", [locomo.file, "chat-memory"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`dataset locomo-fixture\\.json: 2 conversations, ${locomo.questions} questions, imported in ${NUM} s`));
    const line = (pass: string) =>
      new RegExp(
        `chat-memory\\s+${pass}\\s+completed in ${NUM} s \\(.*build ${NUM} s.*\\) · ${locomo.scored} questions · hit@1 ${NUM} hit@5 ${NUM} recall@2k ${NUM} · ` +
          `search p50 ${NUM} ms p95 ${NUM} ms · model calls (\\d+) · build tokens \\d+`,
      );
    expect(r.stdout).toMatch(line("first"));
    expect(Number(line("again").exec(r.stdout)?.[1])).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`total ${NUM} s · peak memory \\(RSS, this process incl\\. the embedded database\\) \\d+ MB`));
  });

  it("bench:compare -- [questions] [runs] — the compare call against the leaderboard", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:compare", ["20", "2,3"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`seeded 3 runs × 20 questions in ${NUM} ms`));
    expect(r.stdout).toMatch(new RegExp(`one-time backfill\\)\\s+${NUM} ms`));
    for (const n of [2, 3]) expect(r.stdout).toMatch(new RegExp(`${n} runs × 20 questions\\s+compare \\(every case\\) ${NUM} ms\\s+leaderboard median of 3 ${NUM} ms`));
  });

  it("bench:scale -- --pg 0 --pglite … — the PGlite column of the scale table", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:scale", ["--pg", "0", "--pglite", "300", "--iterations", "3"]);
    expectSuccess(r);
    // A failed child also exits 1 (checked above); its column is what the table must show.
    expect(r.stdout).toMatch(/^\s+pglite 300$/m);
    expect(r.stdout).toMatch(/^shared_buffers \/ effective_cache_size\s+\d+[kMG]B \/ \d+[kMG]B$/m);
    expect(r.stdout).toMatch(/^load average \(searches start \/ end\)\s+\d+\.\d\d \/ \d+\.\d\d$/m);
    for (const row of ["load sources (s)", "full run (s)", "vectors (bulk) + HNSW + BM25 stats (s)", "no-op re-run (s)", "+1% run + index (s)", "+1% / (full run + index)"]) {
      expect(r.stdout).toMatch(new RegExp(`^${escape(row)}\\s+${NUM}$`, "m"));
    }
    for (const c of ["fts scoped", "semantic scoped", "hybrid scoped", "fts unscoped", "semantic unscoped", "hybrid unscoped"]) {
      for (const pass of ["cold", "warm"]) expect(r.stdout).toMatch(new RegExp(`^${escape(c)} p50 / p95 ${pass} \\(ms\\)\\s+${NUM} / ${NUM}$`, "m"));
    }
    expect(r.stdout).toContain("goals at 1M on PostgreSQL:");
  });

  it("bench:cli -- 1 — --help, status, search and get wall times beside node -e 0", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:cli", ["1"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(/load average before: \d+\.\d\d \d+\.\d\d \d+\.\d\d {3}\(1 runs each, median wall time\)/);
    for (const label of ["node -e 0", "synthex --help", "synthex status", 'synthex search "that rust conversation"', "synthex get <id>"]) {
      expect(r.stdout).toMatch(new RegExp(`^${escape(label)}\\s+${NUM} s {3}\\(min ${NUM}, max ${NUM}\\)$`, "m"));
    }
    expect(r.stdout).toMatch(/load average after: {2}\d+\.\d\d/);
  });

  it("bench:lineage — neighbourhood, ancestry, a group page and the whole tree", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:lineage", ["20", "3"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(new RegExp(`fixture: 20 sources → 20 summaries → 1 record \\(41 records\\) in ${NUM} s`));
    expect(r.stdout).toContain("neighbourhood: parents summaries ×20; ancestors chats ×20");
    expectLatencyLine(r.stdout, "neighbourhood (the graph opens on it)");
    expectLatencyLine(r.stdout, "ancestry counts per step (loaded after)");
    expectLatencyLine(r.stdout, "one group page of 25 (a click)");
    expectLatencyLine(r.stdout, "whole lineage tree (41 nodes, for comparison)");
  });

  it("bench:api — ingest throughput and search/ask latency over real HTTP", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("bench:api", ["20", "10"]);
    expectSuccess(r);
    expect(r.stdout).toMatch(/bench:api — 20 ingest calls per phase, 10 queries; server http:\/\/127\.0\.0\.1:\d+ \(real HTTP\), embedded database/);
    const ingest = (name: string, messages: number) =>
      new RegExp(`ingest  ${escape(name)}\\s+${messages} messages in ${NUM} s: \\d+ messages/s, \\d+ req/s; per call p50 ${NUM} ms p95 ${NUM} ms`);
    expect(r.stdout).toMatch(ingest("1 client, 1 message/call", 20));
    expect(r.stdout).toMatch(ingest("1 client, 50 messages/call", 1000));
    expect(r.stdout).toMatch(ingest("20 concurrent clients, 1 message/call", 20));
    expect(r.stdout).toMatch(new RegExp(`search  GET …/search \\(hybrid, k=10\\)\\s+10 requests, 1 client: p50 ${NUM} ms p95 ${NUM} ms, ${NUM} req/s`));
    expect(r.stdout).toMatch(new RegExp(`ask     POST …/ask \\(offline extractive, k=5\\)\\s+10 requests, 1 client: p50 ${NUM} ms p95 ${NUM} ms, ${NUM} req/s`));
    expect(r.stdout).toMatch(new RegExp(`search  20 concurrent clients\\s+20 requests: ${NUM} req/s, p50 ${NUM} ms p95 ${NUM} ms`));
    // 10 warm-up + 20 + 20 × 50 + 20 messages.
    expect(r.stdout).toMatch(/memory: \d+ records, 1050 ingested messages/);
  });

  it("bench:load -- --targets embedded — REST beside the in-process ceiling on `npm start` (PGlite)", { timeout: 2 * TEST_LIMIT_MS }, async () => {
    const port = await freePort();
    const r = await runBench("bench:load", ["--duration", "2", "--clients", "2", "--conversations", "5", "--targets", "embedded"], {
      env: { BENCH_LOAD_PORT: String(port) },
      timeoutMs: 2 * BENCH_LIMIT_MS,
    });
    expectSuccess(r);
    expect(r.stdout).toContain("[bench:load] embedded: starting the server, importing 5 conversations, running the pipeline …");
    expect(r.stdout).toContain("bench:load — 2 s per surface, path and level; clients 2; 5 conversations imported");
    expect(r.stdout).toContain("| database | surface | path | clients | requests | throughput (req/s) | p50 (ms) | p99 (ms) | errors | app CPU (%) | db CPU (%) | client CPU (ms/call) | load (1 min) |");
    for (const [surface, kind] of [
      ["search", "REST"],
      ["search", "in-process"],
      ["ask", "REST"],
      ["ask", "in-process"],
      ["ingest1", "REST"],
      ["ingest1", "in-process"],
      ["mcp", "MCP"],
    ] as const) {
      const m = new RegExp(`^\\| embedded \\| ${surface} \\| ${escape(kind)} \\| 2 \\| (\\d+) \\| (${NUM}) \\| \\d+ \\| \\d+ \\| (\\d+) \\| \\d+ \\| \\d+ \\| ${NUM} \\| ${NUM} \\|$`, "m").exec(r.stdout);
      expect(m, `no ${surface} ${kind} row`).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(0); // requests
      expect(Number(m![2])).toBeGreaterThan(0); // throughput
      expect(Number(m![3])).toBe(0); // errors
    }
    expect(r.stdout).toMatch(/\[bench:load\] embedded: ingest check — (\d+) messages accepted, \1 stored, 0 lost/);
    for (const surface of ["search", "ask", "ingest1"]) {
      expect(r.stdout).toMatch(new RegExp(`^SUMMARY embedded ${surface} clients=2 rest=${NUM} inprocess=${NUM} ratio=${NUM} p99_ms=\\d+ errors=0$`, "m"));
    }
  });

  // Four process starts (clean run, killed run, restart, exit): 70 s on a quiet 2-core machine, over 110 s at load 14.
  it("soak:crash -- --trials 1 — kill -9 mid-run, restart, same records as a clean run", { timeout: TEST_LIMIT_MS }, async () => {
    const r = await runBench("soak:crash", ["--trials", "1", "--conversations", "3"]);
    expectSuccess(r);
    const clean = new RegExp(`clean run: (\\d+) records on main in ${NUM} s \\(run and process exit\\); duplicates 0`).exec(r.stdout);
    expect(clean, "no clean-run line").not.toBeNull();
    expect(r.stdout).toContain("trial  kill at (ms after run start)  killed mid-run  records at restart  records after  duplicates  missing  extra");
    expect(r.stdout).toMatch(new RegExp(`^\\s+1\\s+\\d+\\s+(yes|yes \\(resumed\\)|no \\(run ended first\\))\\s+\\d+\\s+${clean![1]}\\s+0\\s+0\\s+0$`, "m"));
    expect(r.stdout).toMatch(new RegExp(`soak:crash  trials 1  killed mid-run [01]  records compared ${clean![1]}  duplicates 0  losses 0  extra 0`));
  });
});
