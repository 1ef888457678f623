/**
 * Embeddings in Postgres (pgvector): one row per (record, embedding model), so a branch can try
 * another embedder. The column is an untyped `vector`; each model/dimension gets its own HNSW
 * cosine expression index (`vector::vector(D)`, partial on the model), created on demand.
 */
import { createHash } from "node:crypto";
import type { Db, DbTx } from "../core/db";

/** What storing needs of an embedder (server/llm/embedder.ts implements it). */
export interface EmbeddingModel {
  id: string;
  dimensions: number;
  embed(texts: string[]): Promise<number[][]>;
}

const INSERT_BATCH = 100;
const EMBED_BATCH = 64;

/** pgvector's text form. Non-finite numbers are rejected by Postgres, so they become 0. */
export function toVectorLiteral(vector: number[]): string {
  return `[${vector.map((v) => (Number.isFinite(v) ? v : 0)).join(",")}]`;
}

function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Index name for a model/dimension: readable prefix + hash, within Postgres' 63 characters. */
export function vectorIndexName(model: string, dims: number): string {
  const slug = model.toLowerCase().replace(/[^a-z0-9]+/g, "_").slice(0, 30);
  const hash = createHash("sha256").update(`${model}\u0000${dims}`).digest("hex").slice(0, 8);
  return `Embedding_hnsw_${slug}_${dims}_${hash}`;
}

/**
 * Memory for one HNSW build (`maintenance_work_mem`, for that transaction only). pgvector builds
 * the graph in memory while it fits and falls back to inserting page by page after, which is many
 * times slower (at 1M vectors of 512 dimensions: the graph needs about 2.5 GB). Set
 * SYNTHEX_INDEX_BUILD_MEMORY (e.g. "4GB") to what the database server can spare; the defaults
 * suit a small managed Postgres and PGlite's 32-bit WebAssembly heap.
 */
export const INDEX_BUILD_MEMORY = { postgres: "1GB", pglite: "256MB" } as const;

const KB_PER_UNIT = { kB: 1, MB: 1024, GB: 1024 ** 2, TB: 1024 ** 3 };

export function indexBuildMemory(embedded: boolean, env: Record<string, string | undefined> = process.env, serverMaxKb = Infinity): string {
  const configured = env.SYNTHEX_INDEX_BUILD_MEMORY?.trim();
  if (!configured) return embedded ? INDEX_BUILD_MEMORY.pglite : INDEX_BUILD_MEMORY.postgres;
  const size = /^(\d+)\s*(kB|MB|GB|TB)$/.exec(configured);
  if (!size) {
    throw new Error(`SYNTHEX_INDEX_BUILD_MEMORY must be a size such as 512MB or 4GB (got "${configured}").`);
  }
  // Never above what the server accepts (PGlite's 32-bit build stops at 2 GB): one setting can
  // then serve a big server and the embedded database alike.
  const kb = Number(size[1]) * KB_PER_UNIT[size[2] as keyof typeof KB_PER_UNIT];
  return kb > serverMaxKb ? `${serverMaxKb}kB` : `${size[1]}${size[2]}`;
}

/** A build can run for many minutes on a large table: far beyond Prisma's default transaction limit. */
const INDEX_BUILD_TX = { timeout: 6 * 3600_000, maxWait: 60_000 };

/**
 * HNSW cosine index for one embedding model and dimension (idempotent). Search must filter
 * `model = '<model>'` and order by `vector::vector(D) <=> $1::vector(D)` to use it. Built with
 * `indexBuildMemory` of maintenance memory when it does not exist yet.
 */
export async function ensureVectorIndex(db: Db, model: string, dims: number): Promise<string> {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) throw new Error(`Invalid embedding dimension ${dims}.`);
  const name = vectorIndexName(model, dims);
  const [found] = await db.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM pg_class WHERE relname = $1 AND relkind = 'i'`, name);
  if (found?.n) return name;
  const [server] = await db.$queryRawUnsafe<Array<{ v: string; max: string }>>(
    `SELECT version() AS v, (SELECT max_val FROM pg_settings WHERE name = 'maintenance_work_mem') AS max`,
  );
  const memory = indexBuildMemory(/PGlite/.test(server?.v ?? ""), process.env, Number(server?.max ?? Infinity));
  await db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SET LOCAL maintenance_work_mem = '${memory}'`);
    await tx.$executeRawUnsafe(
      `CREATE INDEX IF NOT EXISTS "${name}" ON "Embedding" USING hnsw ((vector::vector(${dims})) vector_cosine_ops) WHERE model = ${sqlString(model)}`,
    );
  }, INDEX_BUILD_TX);
  return name;
}

/** A record to embed: its text, and where it lives (copied into its embedding row). */
export interface RecordToEmbed {
  id: string;
  content: string;
  pipelineId: string;
  step: string;
  scope: string;
}

/**
 * Embed and store records that have no embedding for `embedder.id` yet (records already embedded
 * are skipped without calling the embedder). Batched INSERT … ON CONFLICT DO NOTHING.
 */
export async function storeEmbeddings(
  db: DbTx,
  workspaceId: string,
  embedder: EmbeddingModel,
  records: RecordToEmbed[],
): Promise<{ stored: number; skipped: number }> {
  if (records.length === 0) return { stored: 0, skipped: 0 };
  const unique = [...new Map(records.map((r) => [r.id, r])).values()];
  const existing = await db.$queryRawUnsafe<Array<{ recordId: string }>>(
    `SELECT "recordId" FROM "Embedding" WHERE model = $1 AND "recordId" = ANY($2::text[])`,
    embedder.id,
    unique.map((r) => r.id),
  );
  const have = new Set(existing.map((e) => e.recordId));
  const todo = unique.filter((r) => !have.has(r.id));
  let stored = 0;
  for (let i = 0; i < todo.length; i += EMBED_BATCH) {
    const chunk = todo.slice(i, i + EMBED_BATCH);
    const vectors = await embedder.embed(chunk.map((r) => r.content));
    if (vectors.length !== chunk.length) throw new Error(`${embedder.id} returned ${vectors.length} vectors for ${chunk.length} texts.`);
    for (let j = 0; j < chunk.length; j += INSERT_BATCH) {
      const rows = chunk.slice(j, j + INSERT_BATCH);
      const params: unknown[] = [workspaceId, embedder.id, embedder.dimensions];
      const values = rows.map((r, k) => {
        const v = vectors[j + k]!;
        if (v.length !== embedder.dimensions) throw new Error(`${embedder.id} returned ${v.length} dimensions, expected ${embedder.dimensions}.`);
        params.push(r.id, r.pipelineId, r.step, r.scope, toVectorLiteral(v));
        const n = params.length;
        return `($1, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $2, $3, $${n}::vector)`;
      });
      stored += await db.$executeRawUnsafe(
        `INSERT INTO "Embedding" ("workspaceId", "recordId", "pipelineId", step, scope, model, dimensions, vector)
         VALUES ${values.join(", ")} ON CONFLICT DO NOTHING`,
        ...params,
      );
    }
  }
  return { stored, skipped: unique.length - todo.length };
}

/**
 * Ids (ascending, after `after`) of records a branch shows for these steps that have no embedding
 * by `model` yet: what indexing still has to embed. Ask in large pages: the planner then takes one
 * hash anti-join over the branch's pointers and the model's embeddings (half a second at 1M
 * records) instead of one embedding probe per pointer (5 s at 1M, for a page of a few hundred).
 */
export async function missingEmbeddingIds(
  db: DbTx,
  args: { branchId: string; steps: string[]; model: string; after: string; limit: number },
): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT p."recordId" AS id FROM "BranchPointer" p
     WHERE p."branchId" = $1 AND p.step = ANY($2::text[]) AND p."recordId" > $3
       AND NOT EXISTS (SELECT 1 FROM "Embedding" e WHERE e."recordId" = p."recordId" AND e.model = $4)
     ORDER BY p."recordId" LIMIT $5`,
    args.branchId,
    args.steps,
    args.after,
    args.model,
    args.limit,
  );
  return rows.map((r) => r.id);
}

/**
 * Of `ids` (records the branch shows, changed since its last index pass), those with no embedding
 * by `model` yet, ascending: one primary-key probe per id, nothing read of the rest of the branch.
 */
export async function missingEmbeddingsAmong(db: DbTx, ids: string[], model: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT u.id FROM unnest($1::text[]) AS u(id)
     WHERE NOT EXISTS (SELECT 1 FROM "Embedding" e WHERE e."recordId" = u.id AND e.model = $2)
     ORDER BY u.id`,
    ids,
    model,
  );
  return rows.map((r) => r.id);
}

/** The records to embed, by id (what `storeEmbeddings` needs of each). */
export async function recordsToEmbed(db: DbTx, ids: string[]): Promise<RecordToEmbed[]> {
  return db.$queryRawUnsafe(`SELECT id, content, "pipelineId", step, scope FROM "Record" WHERE id = ANY($1::text[]) ORDER BY id`, ids);
}
