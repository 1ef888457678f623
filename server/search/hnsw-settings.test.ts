/**
 * The HNSW read's settings (iterative scan, ef_search) reach the index scan although they are made
 * inside the one statement that reads (server/store/search-reads.ts, nearestHnsw): a small workspace
 * whose records are far from the query, beside a large one that shares the model's index, still gets
 * its n nearest. Without the settings the index hands out its 40 nearest of all workspaces, and the
 * workspace filter leaves almost none of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { getEmbedder } from "../llm/workspace-embedder";
import { Pipeline } from "../pipeline/sdk";
import { appendSourceRecords, createPipeline, getBranch } from "../services/pipelines";
import { signUp } from "../services/users";
import { toVectorLiteral } from "../store/embedding-store";
import { nearestHnsw } from "../store/search-reads";
import { createTestDb } from "../store/test-db";
import { sqlTrace } from "./context";
import { indexPipeline } from "./indexing";

let db: Db;
let close: () => Promise<void>;

const spec = () => new Pipeline("notes").source("notes", { format: "jsonl" }).output("search", { from: ["notes"], surface: "search" }).toSpec();

async function workspaceWith(email: string, texts: string[]) {
  const { workspace } = await signUp(db, { email, password: "hnsw-password-1" });
  const { pipeline } = await createPipeline(db, workspace.id, { name: "notes", spec: spec() });
  await appendSourceRecords(db, pipeline.id, "notes", texts.map((content, i) => ({ externalId: `n${i}`, content, scope: "team" })));
  await indexPipeline(db, pipeline.id);
  const { branch } = await getBranch(db, pipeline.id, "main");
  return { workspaceId: workspace.id, branchId: branch.id };
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
});
afterAll(async () => {
  await close();
});

describe("nearestHnsw", () => {
  it("applies its iterative scan and ef_search to the index scan of the same statement", async () => {
    await workspaceWith("crowd@example.com", Array.from({ length: 400 }, (_, i) => `Harbour crane shift ${i}: containers unloaded at berth ${i % 17}, cargo manifest ${1000 + i}.`));
    const few = await workspaceWith("few@example.com", Array.from({ length: 8 }, (_, i) => `Sourdough starter day ${i}: feed with rye flour and keep it warm.`));
    const embedder = await getEmbedder(db, few.workspaceId);
    const [vector] = await embedder.embed(["harbour crane containers unloaded at berth, cargo manifest"]);
    const read = (client: Db) =>
      nearestHnsw(client, { ...few, steps: ["notes"], filters: {}, vector: toVectorLiteral(vector!), dims: embedder.dimensions, model: embedder.id, n: 5 });
    // For a table this small the planner sorts the workspace's few rows: without sorting it takes the index, as it does at scale.
    let statement: { sql: string; params: unknown[] } | null = null;
    sqlTrace.fn = (label, sql, params) => void (label === "semantic-hnsw" && (statement = { sql, params }));
    const { viaIndex, plan } = await db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SET LOCAL enable_sort = off`);
      const rows = await read(tx as unknown as Db);
      const [explained] = await tx.$queryRawUnsafe<Array<{ "QUERY PLAN": unknown }>>(`EXPLAIN (FORMAT JSON) ${statement!.sql}`, ...statement!.params);
      return { viaIndex: rows, plan: JSON.stringify(explained) };
    });
    sqlTrace.fn = null;
    expect(viaIndex).toHaveLength(5);
    // The read went through the HNSW index, below the one-time filter that makes the settings.
    expect(plan).toMatch(/"Index Name":"Embedding_hnsw_/);
    expect(plan).toContain("One-Time Filter");
    // The settings are local to that statement: nothing stays on the connection.
    const [setting] = await db.$queryRawUnsafe<Array<{ s: string }>>(`SELECT current_setting('hnsw.iterative_scan') AS s`);
    expect(setting!.s).toBe("off");
    // And the same five as the exact order (the sequential scan the planner picks here).
    expect((await read(db)).map((r) => r.id)).toEqual(viaIndex.map((r) => r.id));
  });
});
