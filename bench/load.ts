/**
 * npm run bench:load — HTTP load on `npm start`: 20 concurrent clients searching and 5 ingesting
 * messages through REST `/api/v1` with an API key, for 30 s, against the embedded defaults (PGlite
 * owned by the server process) and against PostgreSQL (`../shared/tools/postgres-pgvector` beside the repository,
 * started and stopped here). Prints throughput, p50/p99 latency, errors and the server's RSS.
 *
 *   npm run bench:load -- [--duration 30] [--search 20] [--ingest 5] [--conversations 150] [--targets embedded,postgres] [--pg-port 55224]
 *
 * Each target gets a fresh data directory (or database), a pipeline from the chat-memory template
 * with a generated ChatGPT export imported and run (offline model), then the load. The server's RSS
 * is the sum over its process tree (start.ts, which owns PGlite on the embedded path, and Next),
 * sampled every 250 ms; PostgreSQL's own processes are not in it. The per-key and per-workspace
 * request limits are raised for the run (the load would otherwise measure 429s).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const durationS = Number(flag("duration", "30"));
const searchClients = Number(flag("search", "20"));
const ingestClients = Number(flag("ingest", "5"));
const conversations = Number(flag("conversations", "150"));
const targets = flag("targets", "embedded,postgres").split(",");
const pgPort = flag("pg-port", "55224");
const PG_TOOL = process.env.SYNTHEX_PG_TOOL ?? path.resolve(import.meta.dirname, "../../shared/tools/postgres-pgvector");
const root = process.cwd();

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

/** RSS in bytes of `pid` and all its descendants (Linux /proc). */
function treeRss(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, "utf8"));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      continue;
    }
    stack.push(...(children.get(p) ?? []));
  }
  return total;
}

async function waitFor(url: string, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
}

interface Stats {
  latencies: number[];
  errors: number;
  statuses: Record<string, number>;
}

function percentile(sorted: number[], p: number) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function clientLoop(deadline: number, stats: Stats, request: (n: number) => Promise<Response>) {
  for (let n = 0; performance.now() < deadline; n++) {
    const t = performance.now();
    try {
      const res = await request(n);
      await res.arrayBuffer();
      stats.statuses[res.status] = (stats.statuses[res.status] ?? 0) + 1;
      if (res.status >= 400) stats.errors++;
      else stats.latencies.push(performance.now() - t);
    } catch {
      stats.errors++;
      stats.statuses.network = (stats.statuses.network ?? 0) + 1;
    }
  }
}

interface Row {
  target: string;
  endpoint: string;
  clients: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rssPeakMb: number;
  rssMeanMb: number;
  records: number;
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

    // Setup through the services, connected to the server's database like the CLI (no HTTP: a
    // person's session would need the sign-in form); the load itself is HTTP only.
    Object.assign(process.env, { SYNTHEX_DATA_DIR: env.SYNTHEX_DATA_DIR, NEXTAUTH_SECRET: env.NEXTAUTH_SECRET ?? process.env.NEXTAUTH_SECRET });
    if (env.DATABASE_URL) process.env.DATABASE_URL = env.DATABASE_URL;
    else delete process.env.DATABASE_URL;
    const { openMigratedDb } = await import("../server/store/runtime-env");
    const { closeDb } = await import("../server/store/db");
    const { signUp } = await import("../server/services/users");
    const { createApiKey } = await import("../server/services/api-keys");
    const { createPipeline, templateSpec } = await import("../server/services/pipelines");
    const { importFile } = await import("../server/services/imports");
    const { runPipeline } = await import("../server/services/runs");
    const db = await openMigratedDb();
    const { user, workspace } = await signUp(db, { email: `load-${target}@example.com`, password: "load-password-1" });
    const key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "load", role: "editor" })).secret;
    const { pipeline } = await createPipeline(db, workspace.id, { name: "load", spec: templateSpec("chat-memory") });
    const file = path.join(dir, "export.json");
    writeFileSync(file, JSON.stringify(generatedExport(conversations)));
    await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: file });
    const run = await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id });
    if (run.status !== "completed") throw new Error(`setup run ${run.status}: ${run.error}`);
    const records = await db.record.count({ where: { pipelineId: pipeline.id } });
    await closeDb();

    const base = `http://127.0.0.1:${port}/api/v1/pipelines/${pipeline.id}`;
    const headers = { authorization: `Bearer ${key}` };
    // Warm-up: the first requests compile routes and fill caches.
    for (let i = 0; i < 5; i++) await (await fetch(`${base}/search?query=warm`, { headers })).arrayBuffer();

    const search: Stats = { latencies: [], errors: 0, statuses: {} };
    const ingest: Stats = { latencies: [], errors: 0, statuses: {} };
    const rss: number[] = [];
    const sampler = setInterval(() => rss.push(treeRss(server!.pid!)), 250);
    const started = performance.now();
    const deadline = started + durationS * 1000;
    await Promise.all([
      ...Array.from({ length: searchClients }, (_, c) =>
        clientLoop(deadline, search, (n) => fetch(`${base}/search?query=${encodeURIComponent(`${TOPICS[(c + n) % TOPICS.length]} ${n % 50}`)}&limit=10`, { headers })),
      ),
      ...Array.from({ length: ingestClients }, (_, c) =>
        clientLoop(deadline, ingest, (n) =>
          fetch(`${base}/sources/chats/messages`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            // A live session per client, 20 messages each, then a new one (sessions stay open: no run per message).
            body: JSON.stringify({ sessionId: `load-${c}-${Math.floor(n / 20)}`, scope: `client-${c}`, messages: [{ role: n % 2 ? "assistant" : "user", content: `load message ${n} from client ${c} about the ${TOPICS[n % TOPICS.length]}` }] }),
          }),
        ),
      ),
    ]);
    const elapsedS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const mb = (b: number) => Math.round(b / 1024 / 1024);
    const rssPeakMb = mb(Math.max(...rss));
    const rssMeanMb = mb(rss.reduce((a, b) => a + b, 0) / Math.max(1, rss.length));
    return [
      ["search (GET …/search)", searchClients, search],
      ["ingest (POST …/messages)", ingestClients, ingest],
    ].map(([endpoint, clients, s]) => {
      const st = s as Stats;
      const sorted = [...st.latencies].sort((a, b) => a - b);
      if (st.errors) console.error(`${target} ${String(endpoint)}: statuses ${JSON.stringify(st.statuses)}`);
      return { target, endpoint: String(endpoint), clients: Number(clients), requests: st.latencies.length + st.errors, rps: st.latencies.length / elapsedS, p50: percentile(sorted, 50), p99: percentile(sorted, 99), errors: st.errors, rssPeakMb, rssMeanMb, records };
    });
  } finally {
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

async function main() {
  if (!existsSync(path.join(root, ".next/BUILD_ID"))) console.log("(no production build yet: npm start builds once first)");
  const rows: Row[] = [];
  let port = Number(process.env.BENCH_LOAD_PORT ?? 3290);
  for (const target of targets) {
    console.log(`[bench:load] ${target}: starting the server, importing ${conversations} conversations, running the pipeline …`);
    rows.push(...(await benchTarget(target, port++)));
  }
  console.log("");
  console.log(`bench:load — ${durationS} s, ${searchClients} search clients + ${ingestClients} ingest clients over HTTP (REST, API key), ${conversations} conversations imported`);
  console.log("| database | endpoint | clients | requests | throughput (req/s) | p50 (ms) | p99 (ms) | errors | server RSS peak / mean (MB) | records |");
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of rows) {
    console.log(`| ${r.target} | ${r.endpoint} | ${r.clients} | ${r.requests} | ${r.rps.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${r.errors} | ${r.rssPeakMb} / ${r.rssMeanMb} | ${r.records} |`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
