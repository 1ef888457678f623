import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashEmbedding, OfflineHashEmbedder } from "../llm/embedder";
import { OpenAICompatibleEmbedder, TransformersEmbedder, loadTransformers } from "../llm/embedders";
import { startMockOpenAIServer, type MockOpenAIServer } from "../llm/testing/mock-openai-server";
import type { Db } from "../core/db";
import { upsertProvider } from "../services/providers";
import { signUp } from "../services/users";
import { getEmbedder } from "../llm/workspace-embedder";
import { ensureVectorIndex, indexBuildMemory, INDEX_BUILD_MEMORY, storeEmbeddings, toVectorLiteral, vectorIndexName } from "./embedding-store";
import { createTestDb } from "./test-db";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-embeddings";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let mock: MockOpenAIServer;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "embed@example.com", password: "embed-password" }));
  mock = await startMockOpenAIServer({ apiKey: "sk-embed-key-0000" });
});
afterAll(async () => {
  await mock.close();
  await close();
});

// Embedding rows reference records only by id (no foreign key), so plain ids are enough here.
const at = { pipelineId: "p1", step: "notes", scope: "user:ana" };
const records = [
  { id: "r1", content: "The user waters the tomatoes every Tuesday.", ...at },
  { id: "r2", content: "A trip to Lisbon is planned for May.", ...at },
  { id: "r3", content: "Tomato plants need water twice a week in summer.", ...at },
];

/** Ensures a model's HNSW index with SYNTHEX_INDEX_BUILD_MEMORY set to `memory`: how many indexes of that name exist after. */
async function indexesBuiltWith(memory: string, model: string, dims: number): Promise<number> {
  const previous = process.env.SYNTHEX_INDEX_BUILD_MEMORY;
  process.env.SYNTHEX_INDEX_BUILD_MEMORY = memory;
  try {
    const name = await ensureVectorIndex(db, model, dims);
    const [row] = await db.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = $1`, name);
    return row!.n;
  } finally {
    if (previous === undefined) delete process.env.SYNTHEX_INDEX_BUILD_MEMORY;
    else process.env.SYNTHEX_INDEX_BUILD_MEMORY = previous;
  }
}

describe("embedding store", () => {
  it("stores embeddings per (record, model), skipping ones already stored", async () => {
    const embedder = new OfflineHashEmbedder(384, 1);
    let calls = 0;
    const counting = { id: embedder.id, dimensions: embedder.dimensions, embed: (t: string[]) => ((calls += t.length), embedder.embed(t)) };
    expect(await storeEmbeddings(db, workspaceId, counting, records)).toEqual({ stored: 3, skipped: 0 });
    expect(await storeEmbeddings(db, workspaceId, counting, [...records, records[0]!])).toEqual({ stored: 0, skipped: 3 });
    expect(calls).toBe(3);
    // Another model: its own rows.
    const small = new OfflineHashEmbedder(64, 1);
    expect(await storeEmbeddings(db, workspaceId, small, records)).toEqual({ stored: 3, skipped: 0 });
    const rows = await db.$queryRawUnsafe<Array<{ model: string; n: number }>>(`SELECT model, count(*)::int AS n FROM "Embedding" GROUP BY model ORDER BY model`);
    expect(rows).toEqual([
      { model: "offline/hash-384", n: 3 },
      { model: "offline/hash-64", n: 3 },
    ]);
    // Each row carries where its record lives (scoped KNN reads it without visiting "Record").
    const placed = await db.$queryRawUnsafe<Array<{ pipelineId: string; step: string; scope: string }>>(
      `SELECT DISTINCT "pipelineId", step, scope FROM "Embedding" WHERE "recordId" = 'r2'`,
    );
    expect(placed).toEqual([at]);
  });

  it("creates one HNSW cosine index per model/dimension, idempotently, usable by KNN", async () => {
    const name = await ensureVectorIndex(db, "offline/hash-384", 384);
    expect(await ensureVectorIndex(db, "offline/hash-384", 384)).toBe(name);
    await ensureVectorIndex(db, "it's/odd-model", 64);
    const indexes = await db.$queryRawUnsafe<Array<{ indexname: string; indexdef: string }>>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'Embedding' AND indexdef ILIKE '%hnsw%' ORDER BY indexname`,
    );
    expect(indexes).toHaveLength(2);
    const ours = indexes.find((i) => i.indexname === name)!;
    expect(ours.indexdef).toMatch(/USING hnsw \(\(\(?vector\)?::vector\(384\)\) vector_cosine_ops\) WHERE \(model = 'offline\/hash-384'/);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(vectorIndexName("a".repeat(200), 3072).length).toBeLessThanOrEqual(63);

    const query = toVectorLiteral(hashEmbedding("watering tomatoes", 384));
    const hits = await db.$queryRawUnsafe<Array<{ recordId: string }>>(
      `SELECT "recordId" FROM "Embedding" WHERE model = 'offline/hash-384' ORDER BY vector::vector(384) <=> $1::vector(384) LIMIT 2`,
      query,
    );
    expect(hits.map((h) => h.recordId)).toContain("r1");
    expect(hits.map((h) => h.recordId)).not.toContain("r2");
  });

  it("builds an index on a filled table with the configured maintenance memory, and leaves the session's own setting alone", async () => {
    const before = await db.$queryRawUnsafe<Array<{ m: string }>>(`SELECT current_setting('maintenance_work_mem') AS m`);
    expect(await indexesBuiltWith("96MB", "offline/hash-64", 64)).toBe(1);
    // SET LOCAL: the build's memory ends with its transaction.
    expect(await db.$queryRawUnsafe(`SELECT current_setting('maintenance_work_mem') AS m`)).toEqual(before);
  });

  it("keeps a 512-dimension vector in its row (no TOAST), as the migration sets the table", async () => {
    const [table] = await db.$queryRawUnsafe<Array<{ options: string[] | null }>>(`SELECT reloptions AS options FROM pg_class WHERE relname = 'Embedding'`);
    expect(table!.options).toContain("toast_tuple_target=8160");
    const wide = new OfflineHashEmbedder(512, 2);
    await storeEmbeddings(db, workspaceId, wide, [{ id: "r1", content: "watering tomatoes in the garden", ...at }]);
    const [row] = await db.$queryRawUnsafe<Array<{ toast: number }>>(
      `SELECT pg_relation_size(reltoastrelid)::int AS toast FROM pg_class WHERE relname = 'Embedding'`,
    );
    expect(row!.toast).toBe(0);
  });

  it("reads the build memory from SYNTHEX_INDEX_BUILD_MEMORY, with defaults per database and a clear error", () => {
    expect(indexBuildMemory(false, {})).toBe(INDEX_BUILD_MEMORY.postgres);
    expect(indexBuildMemory(true, {})).toBe(INDEX_BUILD_MEMORY.pglite);
    expect(indexBuildMemory(false, { SYNTHEX_INDEX_BUILD_MEMORY: "4 GB" })).toBe("4GB");
    expect(() => indexBuildMemory(false, { SYNTHEX_INDEX_BUILD_MEMORY: "lots" })).toThrow(/SYNTHEX_INDEX_BUILD_MEMORY must be a size such as 512MB or 4GB \(got "lots"\)/);
    expect(() => indexBuildMemory(false, { SYNTHEX_INDEX_BUILD_MEMORY: "1GB; DROP TABLE x" })).toThrow(/must be a size/);
    // Capped at the server's own maximum (kB), as pg_settings gives it.
    expect(indexBuildMemory(true, { SYNTHEX_INDEX_BUILD_MEMORY: "8GB" }, 2097151)).toBe("2097151kB");
    expect(indexBuildMemory(false, { SYNTHEX_INDEX_BUILD_MEMORY: "8GB" }, 2147483647)).toBe("8GB");
  });

  it("builds with a build memory above the server's maximum, capped to it (8GB on PGlite's 32-bit build)", async () => {
    expect(await indexesBuiltWith("8GB", "offline/hash-48", 48)).toBe(1);
  });
});

describe("embedders", () => {
  it("getEmbedder defaults to the offline hashing embedder", async () => {
    const e = await getEmbedder(db, workspaceId);
    expect(e.id).toBe("offline/hash2-512");
    expect(e.dimensions).toBe(512);
    // The legacy embedder stays available under its id, so vectors stored with it stay comparable.
    const legacy = await getEmbedder(db, workspaceId, "offline/hash-128");
    expect([legacy.id, legacy.dimensions]).toEqual(["offline/hash-128", 128]);
    expect(await legacy.embed(["tomatoes"])).toEqual([hashEmbedding("tomatoes", 128)]);
  });

  it("an OpenAI-compatible endpoint (workspace credential), batched, with probing of unknown sizes", async () => {
    await upsertProvider(db, workspaceId, { name: "local-embed", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-embed-key-0000" });
    mock.reset();
    const e = await getEmbedder(db, workspaceId, "local-embed/mock-embed");
    expect(e.dimensions).toBe(64); // the mock's default size, learnt from one probe
    expect(mock.count("embeddings")).toBe(1);
    const sized = await getEmbedder(db, workspaceId, "local-embed/mock-embed@32");
    expect(sized.dimensions).toBe(32);
    const vectors = await sized.embed(records.map((r) => r.content));
    expect(vectors).toHaveLength(3);
    expect(vectors[0]).toHaveLength(32);
    expect(mock.requests.at(-1)!.body.dimensions).toBe(32);
    const stored = await storeEmbeddings(db, workspaceId, sized, records);
    expect(stored.stored).toBe(3);
    const direct = new OpenAICompatibleEmbedder({ id: "x/y", model: "y", baseUrl: mock.baseUrl, apiKey: "sk-embed-key-0000", dimensions: 64, batchSize: 2 });
    mock.reset();
    expect(await direct.embed(["a", "b", "c", "d", "e"])).toHaveLength(5);
    expect(mock.count("embeddings")).toBe(3);
  });

  it("reports auth failures without echoing the key", async () => {
    const bad = new OpenAICompatibleEmbedder({ id: "x/y", model: "y", baseUrl: mock.baseUrl, apiKey: "sk-WRONG-key-1234", dimensions: 64 });
    const err = (await bad.embed(["a"]).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/authentication failed/);
    expect(err.message).not.toContain("sk-WRONG-key-1234");
  });

  it("transformers.js: a clear error when @huggingface/transformers is not installed", async () => {
    let installed = true;
    try {
      await loadTransformers();
    } catch (err) {
      installed = false;
      expect((err as Error).message).toMatch(/@huggingface\/transformers, which is not installed/);
    }
    if (!installed) {
      const e = new TransformersEmbedder("/nonexistent/all-MiniLM-L6-v2", 384);
      expect(e.id).toBe("local/all-MiniLM-L6-v2");
      await expect(e.embed(["hello"])).rejects.toThrow(/not installed/);
    }
    await expect(getEmbedder(db, workspaceId, "local/no-such-model")).rejects.toThrow(/No local model/);
  });
});
