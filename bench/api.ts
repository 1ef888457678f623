/**
 * npm run bench:api — the agent API over real HTTP (node's HTTP server in front of the app's own
 * route handlers, server/api/testing/route-server.ts; the embedded database through the app's
 * connection path). Prints, and asserts nothing:
 * - ingest throughput (messages/s): one client sending one message per call, one client sending
 *   50 per call, and 20 concurrent clients sending one per call;
 * - search (GET …/search, hybrid) and ask (POST …/ask, offline extractive) latency p50/p95 for one
 *   client, and search requests/s with 20 concurrent clients.
 *
 * Usage: npm run bench:api -- [calls=300] [queries=100]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const calls = Number(process.argv[2] ?? 300);
const queries = Number(process.argv[3] ?? 100);
const CONCURRENCY = 20;

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-api-bench-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;
// The bench measures the server, not the rate limiter.
process.env.SYNTHEX_API_RATE_PER_KEY = "100000000";
process.env.SYNTHEX_API_RATE_PER_WORKSPACE = "100000000";

function pct(samples: number[], p: number) {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (t: number) => `${t.toFixed(1)} ms`;

const QUESTIONS = [
  "Where is the spare key for the lighthouse cabin?",
  "When should I sow tomato seeds indoors?",
  "Which novels for winter evenings?",
  "Is a bike commute realistic in February?",
  "What is on the team offsite agenda?",
  "What did I say about the red canoe?",
];

async function main() {
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const { signUp } = await import("../server/services/users");
  const { createApiKey } = await import("../server/services/api-keys");
  const { createPipeline, templateSpec } = await import("../server/services/pipelines");
  const { importFile } = await import("../server/services/imports");
  const { runPipeline } = await import("../server/services/runs");
  const { settleBackgroundWork } = await import("../server/services/background");
  const { startRouteServer } = await import("../server/api/testing/route-server");

  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "bench@example.com", password: "bench-password-1" });
  const key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "bench" })).secret;
  const { pipeline } = await createPipeline(db, workspace.id, { name: "memory", spec: templateSpec("chat-memory") });
  await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: path.resolve("e2e/fixtures/chatgpt-export.json") });
  await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id });
  await settleBackgroundWork();
  const server = await startRouteServer();
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const base = `${server.url}/api/v1/pipelines/memory`;

  const ingest = async (sessionId: string, n: number, i: number) => {
    const res = await fetch(`${base}/sources/chats/messages`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        sessionId,
        scope: `bench:user-${sessionId}`,
        messages: Array.from({ length: n }, (_, j) => ({ role: j % 2 ? "assistant" : "user", content: `Message ${i}.${j}: the red canoe named Pelican needs new paint before the spring trip ${i}.` })),
      }),
    });
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  };

  console.log(`bench:api — ${calls} ingest calls per phase, ${queries} queries; server ${server.url} (real HTTP), embedded database`);

  // Warm-up (route modules, prepared statements).
  for (let i = 0; i < 10; i++) await ingest("warm", 1, i);

  const phases: Array<{ name: string; clients: number; perCall: number }> = [
    { name: "1 client, 1 message/call", clients: 1, perCall: 1 },
    { name: "1 client, 50 messages/call", clients: 1, perCall: 50 },
    { name: `${CONCURRENCY} concurrent clients, 1 message/call`, clients: CONCURRENCY, perCall: 1 },
  ];
  for (const phase of phases) {
    const latencies: number[] = [];
    const perClient = Math.ceil(calls / phase.clients);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: phase.clients }, async (_, c) => {
        for (let i = 0; i < perClient; i++) {
          const t = performance.now();
          await ingest(`${phase.perCall}-${phase.clients}-${c}-${i % 10}`, phase.perCall, i);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const messages = perClient * phase.clients * phase.perCall;
    console.log(
      `ingest  ${phase.name.padEnd(36)} ${String(messages).padStart(6)} messages in ${seconds.toFixed(2)} s: ${(messages / seconds).toFixed(0)} messages/s, ${(latencies.length / seconds).toFixed(0)} req/s; per call p50 ${ms(pct(latencies, 50))} p95 ${ms(pct(latencies, 95))}`,
    );
  }

  const timed = async (name: string, one: (i: number) => Promise<Response>) => {
    for (let i = 0; i < 5; i++) await (await one(i)).arrayBuffer();
    const latencies: number[] = [];
    const started = performance.now();
    for (let i = 0; i < queries; i++) {
      const t = performance.now();
      const res = await one(i);
      if (res.status !== 200) throw new Error(`${name} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      latencies.push(performance.now() - t);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(`${name.padEnd(44)} ${queries} requests, 1 client: p50 ${ms(pct(latencies, 50))} p95 ${ms(pct(latencies, 95))}, ${(queries / seconds).toFixed(1)} req/s`);
  };
  const search = (i: number) => fetch(`${base}/search?query=${encodeURIComponent(QUESTIONS[i % QUESTIONS.length]!)}&limit=10`, { headers });
  const ask = (i: number) => fetch(`${base}/ask`, { method: "POST", headers, body: JSON.stringify({ question: QUESTIONS[i % QUESTIONS.length] }) });
  await timed("search  GET …/search (hybrid, k=10)", search);
  await timed("ask     POST …/ask (offline extractive, k=5)", ask);

  const started = performance.now();
  const latencies: number[] = [];
  const perClient = Math.ceil(queries / CONCURRENCY);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        const t = performance.now();
        await (await search(c + i)).arrayBuffer();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(`search  ${CONCURRENCY} concurrent clients${" ".repeat(24)} ${latencies.length} requests: ${(latencies.length / seconds).toFixed(1)} req/s, p50 ${ms(pct(latencies, 50))} p95 ${ms(pct(latencies, 95))}`);
  const records = await db.record.count({ where: { pipelineId: pipeline.id } });
  const messages = await db.ingestMessage.count();
  console.log(`memory: ${records} records, ${messages} ingested messages`);

  await server.close();
  await settleBackgroundWork();
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
}

await main();
