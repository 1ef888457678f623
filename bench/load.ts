/**
 * npm run bench:load — agents' request load on `npm start`, beside its in-process ceiling.
 *
 *   npm run bench:load -- [--clients 1,5,20,50] [--duration 10] [--surfaces search,ask,ingest1,mcp]
 *                         [--conversations 150] [--targets embedded,postgres] [--pg-port 55224] [--warmup 2]
 *                         [--rounds 3]
 *
 * Per target (the embedded defaults: PGlite owned by the server process; PostgreSQL:
 * `../shared/tools/postgres-pgvector` beside the repository, started and stopped here): a fresh data
 * directory (or database), a pipeline from the chat-memory template with a generated ChatGPT export
 * imported and run (offline model), then `ANALYZE` (the steady state: PostgreSQL's autovacuum would
 * analyze the new tables only a minute or so later, in the middle of the measurements, and the
 * embedded database has no autovacuum; plans made without statistics cost the database twice the CPU
 * per search). Then, for each client level, each surface runs for `duration` seconds with that many
 * concurrent clients, one surface at a time, each after `--warmup` seconds of the same calls that are
 * not counted (a fresh app server's first seconds of compiling code otherwise land in the first row).
 * REST and its in-process ceiling are measured interleaved: `--rounds` rounds of `duration / rounds`
 * seconds each, REST first in one round and in-process first in the next, pooled into one row per
 * path (the machine's other load drifts over a minute; measured one after the other, whichever path
 * ran in a busier stretch lost, and the ratio of one run swung from 0.55 to 0.82 on unchanged code):
 * - REST over HTTP with an API key: search (GET …/search, hybrid, k=10), ask (POST …/ask, offline
 *   extractive, k=5), ingest1 (POST …/messages, one message per call; a session per client, 20
 *   messages each, then a new one); MCP search (POST /api/mcp, tools/call search);
 * - in-process: the same service functions (search, ask, ingestMessages) called directly by this
 *   process, against the same database and data, at the same concurrency. That is the ceiling of
 *   the HTTP path; the ratio REST / in-process says what the request path costs.
 * Each row gives the load average (1 min) at its end and the CPU of the app and of the database
 * during it (% of one core, sampled every 200 ms, see `cpuMeter`; embedded: the database is the
 * process owning PGlite, the app is Next; in-process rows: the app is this process), and the CPU
 * this process — the clients — used per call
 * (REST and MCP clients are undici `Pool.request()` calls over keep-alive connections, see `http`). After the runs the ingested messages are counted in
 * the database (nothing lost). The output ends with one line per target and surface, at 20 clients
 * (or the highest level below), for scripts (ratio: of the pooled throughputs; each round's ratio is
 * printed above it):
 *   SUMMARY <target> <surface> clients=<n> rest=<req/s> inprocess=<req/s> ratio=<r> p99_ms=<ms> errors=<n>
 * The per-key and per-workspace request limits are raised for the run (it would otherwise measure 429s).
 *
 * `--log` and/or `--shadow <branch>` (issue 37) measure instead what the query log and shadow traffic
 * add to the live response: per client level and REST/MCP read surface (search, ask, mcp), `--rounds`
 * rounds (default 3) each run the surface with nothing on (base), with the query log on (log) and
 * with `<branch>` (made from main if missing) shadowing main (shadow), interleaved so the machine's
 * other load falls on all alike; the latencies of a variant are pooled over its rounds. Lines:
 *   OVERHEAD <target> <surface> clients=<n> p95_base=<ms> p95_log=<ms> (+x%; paired median +x'%) p95_shadow=<ms> (+y%; …) … load=<1 min>
 * (+x% compares the p95s of the latencies pooled over the rounds; the paired median is the median
 * over rounds of each round's p95 against the base p95 of the same round)
 * and the shadow's counters (answered, dropped: the queue was full) as the server stored them, and
 * how many query log entries were written of the calls the log rounds served (log_written=<n>/<calls>).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { type Answer, cpuMeter, descendants, http, percentile, type Probe, waitFor } from "./load-probe";

type Surface = "search" | "ask" | "ingest1" | "mcp";
const SURFACES: Surface[] = ["search", "ask", "ingest1", "mcp"];

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const durationS = Number(flag("duration", "10"));
const levels = flag("clients", "1,5,20,50").split(",").map(Number);
const surfaces = flag("surfaces", "search,ask,ingest1,mcp").split(",") as Surface[];
const conversations = Number(flag("conversations", "150"));
const targets = flag("targets", "embedded,postgres").split(",");
const pgPort = flag("pg-port", "55224");
const withLog = args.includes("--log");
const shadowBranch = args.includes("--shadow") ? flag("shadow", "") : null;
if (shadowBranch !== null && (!shadowBranch || shadowBranch.startsWith("--"))) throw new Error("--shadow: name the branch that shadows main, e.g. --shadow candidate.");
const warmupS = Number(flag("warmup", "2"));
if (!Number.isFinite(warmupS) || warmupS < 0) throw new Error(`--warmup: "${flag("warmup", "")}" must be a number of seconds, 0 or more.`);
const rounds = Number(flag("rounds", "3"));
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: "${flag("rounds", "")}" must be a whole number, 1 or more.`);
const PG_TOOL = process.env.SYNTHEX_PG_TOOL ?? path.resolve(import.meta.dirname, "../../shared/tools/postgres-pgvector");
const root = process.cwd();
for (const l of levels) if (!Number.isInteger(l) || l < 1) throw new Error(`--clients: "${flag("clients", "")}" must list positive whole numbers, e.g. 1,5,20,50.`);
for (const s of surfaces) if (!SURFACES.includes(s)) throw new Error(`--surfaces: "${s}" is not one of ${SURFACES.join(", ")}.`);

const TOPICS = ["lighthouse key", "sourdough starter", "tokio runtime", "balcony herbs", "train to Lyon", "borrow checker", "vector index", "tax return", "marathon plan", "piano scales"];

function generatedExport(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const topic = TOPICS[i % TOPICS.length]!;
    const t0 = 1_704_067_200 + i * 86_400;
    const turns = [
      ["user", `About the ${topic}: I tried approach ${i % 7} on day ${i} and it went ${i % 2 ? "well" : "badly"}.`],
      ["assistant", `Noted for the ${topic}: approach ${i % 7}. Next time check step ${i % 5} first.`],
      ["user", `My reference for the ${topic} is ${1000 + i}; remind me in ${1 + (i % 9)} weeks.`],
      ["assistant", `Reference ${1000 + i} saved; reminder set for ${1 + (i % 9)} weeks about the ${topic}.`],
    ];
    const mapping: Record<string, unknown> = { root: { id: "root", message: null, parent: null, children: ["m0"] } };
    turns.forEach(([role, text], k) => {
      mapping[`m${k}`] = {
        id: `m${k}`,
        parent: k === 0 ? "root" : `m${k - 1}`,
        children: k < turns.length - 1 ? [`m${k + 1}`] : [],
        message: { id: `m${k}`, author: { role, name: null, metadata: {} }, create_time: t0 + k * 60, content: { content_type: "text", parts: [text] }, status: "finished_successfully", weight: 1, metadata: {}, recipient: "all" },
      };
    });
    return { id: `load-${i}`, conversation_id: `load-${i}`, title: `${topic} #${i}`, create_time: t0, update_time: t0 + 600, current_node: "m3", mapping };
  });
}

interface Row {
  target: string;
  surface: Surface;
  path: "REST" | "MCP" | "in-process";
  clients: number;
  requests: number;
  /** Seconds measured (summed over the rounds). */
  seconds: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  /** Successful latencies, sorted (pooled over rounds). */
  latencies: number[];
  errors: number;
  appCpu: number;
  dbCpu: number;
  /** CPU this process (the clients) used per call, ms; for in-process rows that is the app's. */
  clientMs: number;
  load: number;
}

type Call = (client: number, n: number) => Promise<Answer | void>;

/** Warm-up: the same calls at the same concurrency for `--warmup` seconds, not counted (a failing call fails the measured ones too). */
async function warmUp(clients: number, call: Call) {
  const warmEnd = performance.now() + warmupS * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let n = 0; performance.now() < warmEnd; n++) {
        const res = await call(c, 1_000_000 + n).catch(() => undefined);
        if (res) await res.text();
      }
    }),
  );
}

/**
 * `clients` loops calling `call` for `seconds`; a call that throws or answers ≥ 400 is an error.
 * `first` numbers the calls (a round goes on where the previous one stopped, so no query repeats).
 */
async function measure(target: string, surface: Surface, kind: Row["path"], clients: number, probe: Probe, call: Call, seconds: number, first = 0): Promise<Row> {
  const latencies: number[] = [];
  let errors = 0;
  const self0 = process.cpuUsage();
  const appMeter = cpuMeter(probe.app);
  const dbMeter = cpuMeter(probe.db);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let n = first; performance.now() < deadline; n++) {
        const t = performance.now();
        try {
          const res = await call(c, n);
          if (res) {
            const body = await res.text();
            // MCP reports a failed tool inside a 200 answer.
            if (res.status >= 400 || (kind === "MCP" && /"isError":\s*true/.test(body))) {
              errors++;
              if (errors <= 3) console.error(`${target} ${kind} ${surface}: ${res.status} ${body.slice(0, 300)}`);
              continue;
            }
          }
          latencies.push(performance.now() - t);
        } catch (err) {
          errors++;
          if (errors <= 3) console.error(`${target} ${kind} ${surface}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  const selfUsed = process.cpuUsage(self0);
  const selfS = (selfUsed.user + selfUsed.system) / 1e6;
  // Read (and so stopped) on every row: an in-process row reports this process's CPU instead.
  const serverApp = appMeter();
  const appCpu = kind === "in-process" ? selfS : serverApp;
  const sorted = latencies.sort((x, y) => x - y);
  return {
    target, surface, path: kind, clients,
    requests: latencies.length + errors,
    seconds: elapsedS,
    rps: latencies.length / elapsedS,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    latencies: sorted,
    errors,
    appCpu: (100 * appCpu) / elapsedS,
    dbCpu: (100 * dbMeter()) / elapsedS,
    clientMs: (1000 * selfS) / Math.max(1, latencies.length + errors),
    load: loadavg()[0]!,
  };
}

/** Warm-up, then `--duration` seconds of calls. */
async function phase(target: string, surface: Surface, kind: Row["path"], clients: number, probe: Probe, call: Call): Promise<Row> {
  await warmUp(clients, call);
  return measure(target, surface, kind, clients, probe, call, durationS);
}

/** Rounds of one path as one row: counts and seconds summed, latencies pooled, CPU shares weighted by time. */
function pooled(rows: Row[]): Row {
  const seconds = rows.reduce((s, r) => s + r.seconds, 0);
  const requests = rows.reduce((s, r) => s + r.requests, 0);
  const latencies = rows.flatMap((r) => r.latencies).sort((x, y) => x - y);
  const weighted = (k: "appCpu" | "dbCpu") => rows.reduce((s, r) => s + r[k] * r.seconds, 0) / seconds;
  return {
    ...rows[rows.length - 1]!,
    requests,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    latencies,
    errors: rows.reduce((s, r) => s + r.errors, 0),
    appCpu: weighted("appCpu"),
    dbCpu: weighted("dbCpu"),
    clientMs: rows.reduce((s, r) => s + r.clientMs * r.requests, 0) / Math.max(1, requests),
  };
}

/**
 * REST beside the in-process ceiling, interleaved: both warm up, then `--rounds` rounds each run
 * REST and in-process for `--duration / --rounds` seconds, the order alternating (REST first in
 * even rounds), so that the machine's other load drifting over a minute falls on both paths alike
 * rather than on whichever ran second. Returns the pooled rows and each round's ratio.
 */
async function interleaved(target: string, surface: Surface, clients: number, probe: Probe, rest: Call, inProcess: Call) {
  await warmUp(clients, rest);
  await warmUp(clients, inProcess);
  const rounds_: Array<{ rest: Row; inProcess: Row }> = [];
  let next = 0;
  for (let r = 0; r < rounds; r++) {
    const one = (kind: "REST" | "in-process") => measure(target, surface, kind, clients, probe, kind === "REST" ? rest : inProcess, durationS / rounds, next);
    const pair = r % 2 ? { inProcess: await one("in-process"), rest: await one("REST") } : { rest: await one("REST"), inProcess: await one("in-process") };
    next += 100_000;
    rounds_.push(pair);
  }
  return { rest: pooled(rounds_.map((p) => p.rest)), inProcess: pooled(rounds_.map((p) => p.inProcess)), ratios: rounds_.map((p) => p.rest.rps / p.inProcess.rps) };
}

function printRow(r: Row) {
  console.log(`| ${r.target} | ${r.surface} | ${r.path} | ${r.clients} | ${r.requests} | ${r.rps.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${r.errors} | ${r.appCpu.toFixed(0)} | ${r.dbCpu.toFixed(0)} | ${r.clientMs.toFixed(2)} | ${r.load.toFixed(1)} |`);
}

async function benchTarget(target: string, port: number): Promise<Row[]> {
  const dir = mkdtempSync(path.join(tmpdir(), `synthex-load-${target}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    SYNTHEX_DATA_DIR: path.join(dir, "data"),
    SYNTHEX_DB_PORT: "0",
    SYNTHEX_API_RATE_PER_KEY: "100000000",
    SYNTHEX_API_RATE_PER_WORKSPACE: "100000000",
    NEXTAUTH_URL: `http://localhost:${port}`,
  };
  delete env.DATABASE_URL;
  let pgDir: string | null = null;
  let server: ChildProcess | null = null;
  let closeDb: (() => Promise<void>) | null = null;
  try {
    if (target === "postgres") {
      pgDir = path.join(dir, "pg");
      const out = execFileSync(PG_TOOL, ["start", pgPort, pgDir], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
      env.DATABASE_URL = /DATABASE_URL=(\S+)/.exec(out)![1]!;
      env.NEXTAUTH_SECRET = "bench-load-secret-not-for-production-0123456789";
      env.SYNTHEX_ENCRYPTION_KEY = env.NEXTAUTH_SECRET;
    }
    server = spawn(process.execPath, ["--import", "tsx", path.join(root, "scripts/start.ts")], { cwd: root, env, stdio: ["ignore", "ignore", "inherit"], detached: true });
    await waitFor(`http://127.0.0.1:${port}/signin`, 600_000);
    const serverPid = server.pid!;
    const postmaster = pgDir ? Number(readFileSync(path.join(pgDir, "data/postmaster.pid"), "utf8").split("\n")[0]) : 0;
    // Embedded: the server process owns PGlite (the database), Next is its child (the app).
    const probe: Probe = pgDir
      ? { app: () => descendants(serverPid), db: () => descendants(postmaster) }
      : { app: () => descendants(serverPid).filter((p) => p !== serverPid), db: () => [serverPid] };

    // Setup through the services, connected to the server's database like the CLI (no HTTP: a
    // person's session would need the sign-in form); this connection also makes the in-process calls.
    Object.assign(process.env, { SYNTHEX_DATA_DIR: env.SYNTHEX_DATA_DIR, NEXTAUTH_SECRET: env.NEXTAUTH_SECRET ?? process.env.NEXTAUTH_SECRET });
    if (env.DATABASE_URL) process.env.DATABASE_URL = env.DATABASE_URL;
    else delete process.env.DATABASE_URL;
    const { openMigratedDb } = await import("../server/store/runtime-env");
    closeDb = (await import("../server/store/db")).closeDb;
    const { signUp } = await import("../server/services/users");
    const { createApiKey } = await import("../server/services/api-keys");
    const { createPipeline, templateSpec } = await import("../server/services/pipelines");
    const { importFile } = await import("../server/services/imports");
    const { runPipeline } = await import("../server/services/runs");
    const { search } = await import("../server/search/search");
    const { ask } = await import("../server/services/ask");
    const { ingestMessages } = await import("../server/services/ingest");
    const db = await openMigratedDb();
    const { user, workspace } = await signUp(db, { email: `load-${target}@example.com`, password: "load-password-1" });
    const key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "load", role: "editor" })).secret;
    const { pipeline } = await createPipeline(db, workspace.id, { name: "load", spec: templateSpec("chat-memory") });
    const file = path.join(dir, "export.json");
    writeFileSync(file, JSON.stringify(generatedExport(conversations)));
    await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: file });
    const run = await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id });
    if (run.status !== "completed") throw new Error(`setup run ${run.status}: ${run.error}`);
    // Statistics for the planner now, as a database in use has them (see the file comment).
    await db.$executeRawUnsafe("ANALYZE");
    const records = await db.record.count({ where: { pipelineId: pipeline.id } });
    console.log(`[bench:load] ${target}: ${records} records; load on ${levels.join(", ")} clients, ${durationS} s per surface and path`);

    const base = `http://127.0.0.1:${port}/api/v1/pipelines/${pipeline.id}`;
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const query = (c: number, n: number) => `${TOPICS[(c + n) % TOPICS.length]} ${n % 50}`;
    const question = (c: number, n: number) => `What did I say about the ${TOPICS[(c + n) % TOPICS.length]}?`;
    const scoped = { workspaceId: workspace.id, pipelineId: pipeline.id, branch: "main" };
    const target1 = { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats" };
    let accepted = 0;
    // A live session per client, 20 messages each, then a new one (sessions stay open: no run per message).
    const message = (tag: string, c: number, n: number) => ({
      sessionId: `load-${tag}-${c}-${Math.floor(n / 20)}`,
      scope: `client-${c}`,
      messages: [{ role: n % 2 ? "assistant" : "user", content: `load message ${n} from client ${c} about the ${TOPICS[n % TOPICS.length]}` }],
    });
    const counted = async (res: Answer) => {
      if (res.status === 200) accepted++;
      return res;
    };

    // Warm-up: the first requests compile routes and fill caches.
    for (let i = 0; i < 5; i++) await (await http(`${base}/search?query=warm`, { headers })).text();
    await (await http(`${base}/ask`, { method: "POST", headers, body: JSON.stringify({ question: "warm?" }) })).text();

    const rows: Row[] = [];
    if (withLog || shadowBranch) {
      const rest = {
        search: (c: number, n: number) => http(`${base}/search?query=${encodeURIComponent(query(c, n))}&limit=10`, { headers }),
        ask: (c: number, n: number) => http(`${base}/ask`, { method: "POST", headers, body: JSON.stringify({ question: question(c, n), k: 5 }) }),
        mcp: (c: number, n: number) =>
          http(`http://127.0.0.1:${port}/api/mcp`, {
            method: "POST",
            headers: { ...headers, accept: "application/json, text/event-stream" },
            body: JSON.stringify({ jsonrpc: "2.0", id: n, method: "tools/call", params: { name: "search", arguments: { pipeline: pipeline.id, query: query(c, n), limit: 10 } } }),
          }),
      };
      await overheadComparison({ db, target, workspaceId: workspace.id, pipelineId: pipeline.id, probe, rest });
      return rows;
    }
    for (const clients of levels) {
      for (const surface of surfaces) {
        const tag = `${clients}`;
        const rest: Record<Surface, (c: number, n: number) => Promise<Answer>> = {
          search: (c, n) => http(`${base}/search?query=${encodeURIComponent(query(c, n))}&limit=10`, { headers }),
          ask: (c, n) => http(`${base}/ask`, { method: "POST", headers, body: JSON.stringify({ question: question(c, n), k: 5 }) }),
          ingest1: (c, n) => http(`${base}/sources/chats/messages`, { method: "POST", headers, body: JSON.stringify(message(`rest${tag}`, c, n)) }).then(counted),
          mcp: (c, n) =>
            http(`http://127.0.0.1:${port}/api/mcp`, {
              method: "POST",
              headers: { ...headers, accept: "application/json, text/event-stream" },
              body: JSON.stringify({ jsonrpc: "2.0", id: n, method: "tools/call", params: { name: "search", arguments: { pipeline: pipeline.id, query: query(c, n), limit: 10 } } }),
            }),
        };
        const inProcess: Partial<Record<Surface, (c: number, n: number) => Promise<void>>> = {
          search: async (c, n) => void (await search(db, { ...scoped, query: query(c, n), mode: "hybrid", limit: 10, exact: false, dedupe: true, dates: "boost", snippets: true })),
          ask: async (c, n) => void (await ask(db, { ...scoped, question: question(c, n), k: 5, minConfidence: 0.2, restrictions: null })),
          ingest1: async (c, n) => {
            await ingestMessages(db, target1, message(`inproc${tag}`, c, n));
            accepted++;
          },
        };
        const direct = inProcess[surface];
        if (!direct) {
          const row = await phase(target, surface, "MCP", clients, probe, rest[surface]);
          rows.push(row);
          printRow(row);
          continue;
        }
        const pair = await interleaved(target, surface, clients, probe, rest[surface], direct);
        rows.push(pair.rest, pair.inProcess);
        printRow(pair.rest);
        printRow(pair.inProcess);
        if (rounds > 1) console.log(`[bench:load] ${target} ${surface} ${clients} clients: REST / in-process per round ${pair.ratios.map((r) => r.toFixed(2)).join(" ")}`);
      }
    }
    const stored = await db.ingestMessage.count({ where: { workspaceId: workspace.id } });
    console.log(`[bench:load] ${target}: ingest check — ${accepted} messages accepted, ${stored} stored, ${accepted - stored} lost`);
    return rows;
  } finally {
    await closeDb?.().catch(() => undefined);
    if (server?.pid) {
      try {
        process.kill(-server.pid, "SIGTERM");
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 3000));
      try {
        process.kill(-server.pid, "SIGKILL");
      } catch {
        // stopped
      }
    }
    if (pgDir && existsSync(pgDir)) execFileSync(PG_TOOL, ["stop", pgDir], { stdio: "inherit" });
    rmSync(dir, { recursive: true, force: true });
  }
}

type ReadSurface = "search" | "ask" | "mcp";
type Variant = "base" | "log" | "shadow";

/**
 * What the query log and shadow traffic add to the live response (issue 37): each variant in turn,
 * `rounds` times, per client level and read surface; the server picks a change up within its 1 s
 * settings caches, so each switch waits 2.5 s before measuring (the log's last batch is written by then).
 */
async function overheadComparison(o: {
  db: Awaited<ReturnType<typeof import("../server/store/runtime-env").openMigratedDb>>;
  target: string;
  workspaceId: string;
  pipelineId: string;
  probe: Probe;
  rest: Record<ReadSurface, (c: number, n: number) => Promise<Answer>>;
}) {
  const { setQueryLogConfig } = await import("../server/services/query-log");
  const { startShadow, stopShadow } = await import("../server/services/shadow");
  const { createBranch } = await import("../server/services/branches");
  const ref = { workspaceId: o.workspaceId, pipelineId: o.pipelineId };
  if (shadowBranch && !(await o.db.branch.findFirst({ where: { pipelineId: o.pipelineId, name: shadowBranch } }))) await createBranch(o.db, o.pipelineId, { name: shadowBranch });
  const variants: Variant[] = ["base", ...(withLog ? (["log"] as const) : []), ...(shadowBranch ? (["shadow"] as const) : [])];
  const apply = async (v: Variant) => {
    await setQueryLogConfig(o.db, o.workspaceId, o.pipelineId, { enabled: v === "log" });
    const open = shadowBranch ? await o.db.shadowTraffic.findFirst({ where: { pipelineId: o.pipelineId, branch: shadowBranch, stoppedAt: null } }) : null;
    if (v === "shadow" && !open) await startShadow(o.db, { ...ref, branch: shadowBranch!, actor: "bench", minutes: 24 * 60 });
    if (v !== "shadow" && open) await stopShadow(o.db, { ...ref, branch: shadowBranch! });
    await new Promise((r) => setTimeout(r, 2500));
  };
  const readSurfaces = surfaces.filter((s): s is ReadSurface => s === "search" || s === "ask" || s === "mcp");
  console.log(`[bench:load] ${o.target}: overhead of ${variants.slice(1).join(" and ")} — ${rounds} interleaved rounds of ${durationS} s per variant, surfaces ${readSurfaces.join(", ")}`);
  for (const clients of levels) {
    for (const surface of readSurfaces) {
      const pooled: Record<Variant, number[]> = { base: [], log: [], shadow: [] };
      // Each round's p95 per variant: the paired ratio (variant / base of the same round) follows the machine's load less than pooled p95s.
      const perRound: Array<Partial<Record<Variant, number>>> = [];
      const errors: Record<Variant, number> = { base: 0, log: 0, shadow: 0 };
      const loads: number[] = [];
      const loggedBefore = await o.db.queryLogEntry.count({ where: { pipelineId: o.pipelineId } });
      const before = shadowBranch ? await o.db.shadowTraffic.aggregate({ where: { pipelineId: o.pipelineId, branch: shadowBranch }, _sum: { answered: true, dropped: true, failed: true } }) : null;
      for (let r = 0; r < rounds; r++) {
        for (const v of r % 2 ? [...variants].reverse() : variants) {
          await apply(v);
          const row = await phase(o.target, surface, surface === "mcp" ? "MCP" : "REST", clients, o.probe, o.rest[surface]);
          printRow({ ...row, surface: `${surface} [${v}]` as Surface });
          pooled[v].push(...row.latencies);
          (perRound[r] ??= {})[v] = row.p95;
          errors[v] += row.errors;
          loads.push(row.load);
        }
      }
      await apply("base");
      const p95 = (v: Variant) => percentile([...pooled[v]].sort((a, b) => a - b), 95);
      const p50 = (v: Variant) => percentile([...pooled[v]].sort((a, b) => a - b), 50);
      const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;
      const paired = (v: Variant) => {
        const ratios = perRound.map((p) => p[v]! / p.base! - 1).sort((a, b) => a - b);
        return ratios.length % 2 ? ratios[(ratios.length - 1) / 2]! : (ratios[ratios.length / 2 - 1]! + ratios[ratios.length / 2]!) / 2;
      };
      const vs = (v: Variant) => `p95_${v}=${p95(v).toFixed(1)} (${pct(p95(v) / p95("base") - 1)}; paired median ${pct(paired(v))}) p50_${v}=${p50(v).toFixed(1)} n_${v}=${pooled[v].length} errors_${v}=${errors[v]}`;
      // Every successful call of the log rounds is logged (written in batches after the response).
      let counters = withLog ? ` log_written=${(await o.db.queryLogEntry.count({ where: { pipelineId: o.pipelineId } })) - loggedBefore}/${pooled.log.length}` : "";
      if (before) {
        const after = await o.db.shadowTraffic.aggregate({ where: { pipelineId: o.pipelineId, branch: shadowBranch! }, _sum: { answered: true, dropped: true, failed: true } });
        const d = (k: "answered" | "dropped" | "failed") => (after._sum[k] ?? 0) - (before._sum[k] ?? 0);
        counters += ` shadow_answered=${d("answered")} shadow_dropped=${d("dropped")} shadow_failed=${d("failed")}`;
      }
      const mean = loads.reduce((s, x) => s + x, 0) / loads.length;
      console.log(`OVERHEAD ${o.target} ${surface} clients=${clients} p95_base=${p95("base").toFixed(1)} p50_base=${p50("base").toFixed(1)} n_base=${pooled.base.length} ${variants.slice(1).map(vs).join(" ")}${counters} load=${mean.toFixed(1)}`);
    }
  }
}

const HEADER = "| database | surface | path | clients | requests | throughput (req/s) | p50 (ms) | p99 (ms) | errors | app CPU (%) | db CPU (%) | client CPU (ms/call) | load (1 min) |";

async function main() {
  if (!existsSync(path.join(root, ".next/BUILD_ID"))) console.log("(no production build yet: npm start builds once first)");
  console.log(`bench:load — ${durationS} s per surface, path and level; clients ${levels.join(", ")}; ${conversations} conversations imported${withLog || shadowBranch ? `; overhead of${withLog ? " the query log" : ""}${withLog && shadowBranch ? " and" : ""}${shadowBranch ? ` shadow traffic on ${shadowBranch}` : ""}` : ""}`);
  console.log(HEADER);
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  const rows: Row[] = [];
  let port = Number(process.env.BENCH_LOAD_PORT ?? 3290);
  for (const target of targets) {
    console.log(`[bench:load] ${target}: starting the server, importing ${conversations} conversations, running the pipeline …`);
    rows.push(...(await benchTarget(target, port++)));
  }
  console.log("");
  console.log("| database | surface | clients | REST (req/s) | in-process (req/s) | ratio | REST p99 (ms) | load (1 min) |");
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  const find = (t: string, s: Surface, p: Row["path"], c: number) => rows.find((r) => r.target === t && r.surface === s && r.path === p && r.clients === c);
  for (const r of rows.filter((x) => x.path === "REST")) {
    const ip = find(r.target, r.surface, "in-process", r.clients);
    console.log(`| ${r.target} | ${r.surface} | ${r.clients} | ${r.rps.toFixed(1)} | ${ip ? ip.rps.toFixed(1) : "-"} | ${ip ? (r.rps / ip.rps).toFixed(2) : "-"} | ${r.p99.toFixed(0)} | ${r.load.toFixed(1)} |`);
  }
  console.log("");
  const at = levels.includes(20) ? 20 : Math.max(...levels.filter((l) => l <= 20), Math.min(...levels));
  for (const target of targets) {
    for (const surface of surfaces.filter((s) => s !== "mcp")) {
      const r = find(target, surface, "REST", at);
      const ip = find(target, surface, "in-process", at);
      if (!r || !ip) continue;
      console.log(`SUMMARY ${target} ${surface} clients=${at} rest=${r.rps.toFixed(1)} inprocess=${ip.rps.toFixed(1)} ratio=${(r.rps / ip.rps).toFixed(2)} p99_ms=${r.p99.toFixed(0)} errors=${r.errors + ip.errors}`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
