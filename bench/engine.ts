/**
 * npm run bench:engine — transform throughput on the embedded database with a zero-latency model.
 * Prints numbers; asserts nothing. Usage: npm run bench:engine -- [sizes...]   (default 10000 100000)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { OfflineModel } from "../server/llm/offline-model";
import type { ModelProvider, ModelRequest } from "../server/engine/model";
import { Pipeline } from "../server/pipeline/sdk";
import { appendSourceRecords, createPipeline } from "../server/services/pipelines";
import type { SourceItem } from "../server/core/source-item";
import { runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";

const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-bench-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

// RSS includes the embedded database (PGlite's WASM heap lives in this process); the JS heap is the engine's own.
let peakRss = 0;
let peakHeap = 0;
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
}, 50);
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

/** Zero-latency model that counts calls without keeping them (ScriptedModel keeps every request). */
class CountingModel implements ModelProvider {
  private readonly inner = new OfflineModel();
  calls = { length: 0 };
  complete(request: ModelRequest) {
    this.calls.length += 1;
    return this.inner.complete(request);
  }
}

function items(from: number, count: number): SourceItem[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return {
      externalId: `c${i}`,
      content: `Conversation ${i}. The user asked about topic ${i % 97} and the assistant answered with details ${i}.`,
      scope: `user:${i % 50}`,
      metadata: { time: { created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString() } },
    };
  });
}

async function main() {
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const db = await openMigratedDb();
  const { workspace } = await signUp(db, { email: "bench@example.com", password: "bench-password" });
  for (const size of sizes.length ? sizes : [10_000, 100_000]) {
    const spec = new Pipeline(`bench-${size}`, {})
      .source("chats", { format: "jsonl" })
      .transform("summaries", { from: "chats", prompt: "Summarize: {{ record.content }}" })
      .toSpec();
    const { pipeline } = await createPipeline(db, workspace.id, { name: `bench-${size}`, spec });
    let t = Date.now();
    for (let i = 0; i < size; i += 5000) await appendSourceRecords(db, pipeline.id, "chats", items(i, Math.min(5000, size - i)));
    const loadS = (Date.now() - t) / 1000;
    await db.$executeRawUnsafe("ANALYZE");
    peakRss = process.memoryUsage().rss;
    peakHeap = process.memoryUsage().heapUsed;
    const model = new CountingModel();
    t = Date.now();
    await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id }, { model, runOptions: { batchSize: 500, concurrency: 8 } });
    const fullS = (Date.now() - t) / 1000;
    const fullPeak = peakRss;
    const fullHeap = peakHeap;
    t = Date.now();
    const noop = new CountingModel();
    await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id }, { model: noop });
    const noopS = (Date.now() - t) / 1000;
    await appendSourceRecords(db, pipeline.id, "chats", items(size, Math.ceil(size / 100)));
    t = Date.now();
    const inc = new CountingModel();
    await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id }, { model: inc, runOptions: { batchSize: 500, concurrency: 8 } });
    const incS = (Date.now() - t) / 1000;
    console.log(
      [
        `transform ${size} records:`,
        `  import ${loadS.toFixed(1)} s`,
        `  full run ${fullS.toFixed(1)} s = ${Math.round(size / fullS)} records/s (${model.calls.length} model calls), peak RSS ${mb(fullPeak)}, peak JS heap ${mb(fullHeap)}`,
        `  no-op re-run ${noopS.toFixed(2)} s (${noop.calls.length} model calls)`,
        `  +1% sources re-run ${incS.toFixed(2)} s = ${(incS / fullS).toFixed(3)}x the full run (${inc.calls.length} model calls)`,
      ].join("\n"),
    );
  }
  clearInterval(sampler);
  console.log(`peak RSS overall ${mb(peakRss)}`);
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
