/**
 * npm run bench:models — model-call throughput through the whole stack (engine → workspace model
 * resolver → AI SDK → real HTTP) against the mock OpenAI-compatible server answering after
 * 200 ms. A transform over N records at run concurrency 1, 4, 16, 64, with the provider's
 * concurrency limit set to LIMIT (default 32). Prints records/s; asserts nothing.
 * Usage: npm run bench:models -- [--latency 200] [--limit 32] [--levels 1,4,16,64]
 */
import { Pipeline } from "../server/pipeline/sdk";
import { appendSourceRecords, createPipeline } from "../server/services/pipelines";
import type { SourceItem } from "../server/core/source-item";
import { upsertProvider } from "../server/services/providers";
import { runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";
import { createTestDb } from "../server/store/test-db";
import { startMockOpenAIServer } from "../server/llm/testing/mock-openai-server";

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const latencyMs = Number(arg("latency", "200"));
const limit = Number(arg("limit", "32"));
const levels = arg("levels", "1,4,16,64").split(",").map(Number).filter(Boolean);
process.env.SYNTHEX_ENCRYPTION_KEY ??= "bench-encryption-secret";
// The mock provider listens on 127.0.0.1 over http: allowed here, as an operator would for a
// development server (server/http/outbound.ts refuses plain http and loopback otherwise).
process.env.SYNTHEX_ALLOW_HTTP_HOSTS ??= "127.0.0.1,localhost";
process.env.SYNTHEX_ALLOW_PRIVATE_NETWORKS ??= "127.0.0.1/32";

function items(prefix: string, count: number): SourceItem[] {
  return Array.from({ length: count }, (_, i) => ({
    externalId: `${prefix}-${i}`,
    content: `Conversation ${i}: the user asked about topic ${i % 17}, their garden and a trip planned for May. The assistant suggested a watering schedule.`,
    metadata: { time: { created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString() } },
  }));
}

async function main() {
  const mock = await startMockOpenAIServer({ latencyMs });
  const { db, close } = await createTestDb();
  const { workspace } = await signUp(db, { email: "bench-models@example.com", password: "bench-password" });
  await upsertProvider(db, workspace.id, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-bench", maxConcurrency: limit, timeoutMs: 30_000 });
  console.log(`mock latency ${latencyMs} ms, provider concurrency limit ${limit}`);
  console.log("concurrency  records  seconds  records/s  ideal/s  max in flight");
  const results: Array<{ concurrency: number; records: number; seconds: number; perSecond: number }> = [];
  for (const concurrency of levels) {
    // Enough records for ~8 rounds at this concurrency (at least 24) so the ramp-up does not dominate.
    const records = Math.max(24, concurrency * 8);
    const spec = new Pipeline(`bench-models-${concurrency}`, {})
      .source("chats", { format: "jsonl" })
      .transform("summaries", { from: "chats", prompt: "Summarize: {{ record.content }}", model: "mock/gpt-4o-mini" })
      .toSpec();
    const { pipeline } = await createPipeline(db, workspace.id, { name: `bench-models-${concurrency}`, spec });
    await appendSourceRecords(db, pipeline.id, "chats", items(`c${concurrency}`, records));
    mock.reset();
    const started = performance.now();
    const run = await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id }, { runOptions: { concurrency, batchSize: Math.max(200, records) } });
    const seconds = (performance.now() - started) / 1000;
    const made = (run.stats as { steps: Array<{ output: number }> }).steps[0]!.output;
    if (run.status !== "completed" || made !== records) throw new Error(`run ${run.status}: ${made}/${records} records`);
    const perSecond = records / seconds;
    const ideal = (Math.min(concurrency, limit) * 1000) / latencyMs;
    results.push({ concurrency, records, seconds, perSecond });
    console.log(
      `${String(concurrency).padStart(11)}  ${String(records).padStart(7)}  ${seconds.toFixed(2).padStart(7)}  ${perSecond.toFixed(1).padStart(9)}  ${ideal.toFixed(1).padStart(7)}  ${String(mock.maxInFlight).padStart(13)}`,
    );
  }
  await mock.close();
  await close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
