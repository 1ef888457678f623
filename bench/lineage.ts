/**
 * npm run bench:lineage — what the record page's lineage graph costs for a record with N sources
 * (default 1,000, each with its own chain to a raw record: 2N+2 records), on embedded PGlite.
 *
 * Prints p50/p95 of: the neighbourhood the graph opens on (grouped parents/children), the ancestry
 * counts per step it loads next, one page of a group (what a click loads), and, for comparison, the whole lineage tree
 * (`lineage`, what a full graph would have to load and lay out) with its node count. Asserts nothing.
 *
 * Usage: npm run bench:lineage -- [sources=1000] [iterations=30]
 */
import { performance } from "node:perf_hooks";
import { Pipeline } from "../server/pipeline/sdk";
import { appendSourceRecords, createPipeline, getBranch } from "../server/services/pipelines";
import { runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";
import { createTestDb } from "../server/store/test-db";
import { ancestorsByStep, neighbourhood } from "../server/search/neighbourhood";
import { lineage } from "../server/search/provenance";

const sources = Number(process.argv[2] ?? 1000);
const iterations = Number(process.argv[3] ?? 30);

async function time(label: string, fn: () => Promise<unknown>) {
  const ms: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const p = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(1);
  console.log(`${label.padEnd(44)} p50 ${p(0.5).padStart(7)} ms   p95 ${p(0.95).padStart(7)} ms`);
}

const { db, close } = await createTestDb();
try {
  const { workspace } = await signUp(db, { email: "bench@example.com", password: "bench-password-1" });
  const spec = new Pipeline("lineage-bench", { agent: "bench" })
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", operator: { kind: "identity" } })
    .aggregate("all", { from: "summaries", every: Math.max(2, sources), operator: { kind: "extractive-summary" } })
    .output("context", { from: "all", surface: "projection" })
    .toSpec();
  const { pipeline } = await createPipeline(db, workspace.id, { name: "lineage-bench", spec });
  await appendSourceRecords(
    db,
    pipeline.id,
    "chats",
    Array.from({ length: sources }, (_, i) => ({ externalId: `c-${i}`, content: `Conversation ${i} about item ${i}.`, metadata: {} })),
  );
  const t0 = performance.now();
  await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id }, { afterRun: false, runOptions: { batchSize: 500 } });
  console.log(`fixture: ${sources} sources → ${sources} summaries → 1 record (${2 * sources + 1} records) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const { branch } = await getBranch(db, pipeline.id, "main");
  const root = (await db.branchPointer.findFirstOrThrow({ where: { branchId: branch.id, step: "all" } })).recordId;
  const ref = { pipelineId: pipeline.id, branch: "main" };

  const hood = await neighbourhood(db, workspace.id, root, {}, ref);
  const ancestors = await ancestorsByStep(db, workspace.id, root, ref);
  console.log(`neighbourhood: ${hood.groups.map((g) => `${g.direction} ${g.step} ×${g.count}`).join(", ")}; ancestors ${ancestors.map((a) => `${a.step} ×${a.count}`).join(", ")}`);
  await time("neighbourhood (the graph opens on it)", () => neighbourhood(db, workspace.id, root, {}, ref));
  await time("ancestry counts per step (loaded after)", () => ancestorsByStep(db, workspace.id, root, ref));
  await time("one group page of 25 (a click)", () => neighbourhood(db, workspace.id, root, { direction: "parents", step: "summaries", offset: 500, limit: 25 }, ref));
  const full = await lineage(db, workspace.id, root, { maxNodes: 5000 }, ref);
  await time(`whole lineage tree (${full.nodes.length} nodes, for comparison)`, () => lineage(db, workspace.id, root, { maxNodes: 5000 }, ref));
} finally {
  await close();
}
