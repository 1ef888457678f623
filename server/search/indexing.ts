/**
 * Incremental indexing. Full text: "Record"."searchVector" is a generated column with a GIN
 * index (migration search_fts); the BM25 statistics (document frequencies per step) are
 * recomputed for steps whose record set changed (server/search/lexical.ts). Embeddings: for every search output, the records its
 * steps show on the branch that have no embedding for the output's embedder yet (anti-join,
 * batched) are embedded and stored, and the embedder's HNSW index is ensured.
 *
 * The run service's `afterRun` (server/services/after-run.ts) calls `indexPipeline` when a run ends.
 */
import { getEmbedder } from "../llm/workspace-embedder";
import { storeDateMentions, unscannedForDates } from "../store/date-mentions";
import { ensureVectorIndex, missingEmbeddingIds, recordsToEmbed, storeEmbeddings } from "../store/embedding-store";
import type { Db } from "../core/db";
import { indexedSteps, resolveBranch } from "./context";
import { refreshLexicalStats } from "./lexical";
import { resolveRelativeDates } from "./relative-dates";

/** Records embedded and stored per batch. */
const BATCH = 256;
/** Missing ids found per pass (one anti-join over the branch's pointers). */
const PAGE = 20_000;
/**
 * Batches in flight: one is embedded while another's vectors go into the HNSW index (each insert
 * walks the graph: about 2 ms at 1M vectors, on the database's own core).
 */
const IN_FLIGHT = 2;

export interface IndexResult {
  embedded: number;
  byModel: Record<string, number>;
  /** Steps whose BM25 statistics were recomputed (their record set changed). */
  lexicalStats?: string[];
  /** Timed records scanned for relative dates ("last night") this time; their mentions are in `metadata.time.mentions`. */
  dateScanned?: number;
}

/** Embeds the records of covered steps on the branch that lack an embedding for their output's embedder. */
export async function indexPipeline(
  db: Db,
  pipelineId: string,
  branch = "main",
  options: { workspaceId?: string; batchSize?: number; pageSize?: number } = {},
): Promise<IndexResult> {
  const { batchSize = BATCH, pageSize = PAGE } = options;
  const p = await db.pipeline.findUnique({ where: { id: pipelineId }, select: { workspaceId: true } });
  if (!p || (options.workspaceId && options.workspaceId !== p.workspaceId)) return { embedded: 0, byModel: {} };
  const ctx = await resolveBranch(db, p.workspaceId, pipelineId, branch);
  const stepsByModel = new Map<string, string[]>();
  for (const [step, model] of indexedSteps(ctx.spec)) stepsByModel.set(model, [...(stepsByModel.get(model) ?? []), step]);
  const result: IndexResult = { embedded: 0, byModel: {} };
  for (const [model, steps] of stepsByModel) {
    const embedder = await getEmbedder(db, ctx.workspaceId, model);
    await ensureVectorIndex(db, embedder.id, embedder.dimensions);
    let after = "";
    let count = 0;
    for (;;) {
      const ids = await missingEmbeddingIds(db, { branchId: ctx.branchId, steps, model: embedder.id, after, limit: pageSize });
      if (ids.length === 0) break;
      const batches = Array.from({ length: Math.ceil(ids.length / batchSize) }, (_, i) => ids.slice(i * batchSize, (i + 1) * batchSize));
      for (let i = 0; i < batches.length; i += IN_FLIGHT) {
        const stored = await Promise.all(
          batches.slice(i, i + IN_FLIGHT).map(async (batch) => (await storeEmbeddings(db, ctx.workspaceId, embedder, await recordsToEmbed(db, batch))).stored),
        );
        count += stored.reduce((a, b) => a + b, 0);
      }
      after = ids.at(-1)!;
      if (ids.length < pageSize) break;
    }
    result.byModel[embedder.id] = count;
    result.embedded += count;
  }
  result.lexicalStats = await refreshLexicalStats(db, ctx.workspaceId, ctx.branchId, [...indexedSteps(ctx.spec).keys()]);
  result.dateScanned = await indexDateMentions(db, ctx.workspaceId, ctx.branchId, [...indexedSteps(ctx.spec).keys()], batchSize);
  return result;
}

/**
 * Resolves the relative time phrases of each timed record of the steps ("last night" in a session
 * of 2 May 2022 → 1 May 2022) and stores them in its `metadata.time.mentions`, so a question that
 * names 1 May finds it (search.ts, date windows). Records already scanned are skipped.
 */
export async function indexDateMentions(db: Db, workspaceId: string, branchId: string, steps: string[], batchSize = BATCH): Promise<number> {
  let after = "";
  let scanned = 0;
  for (;;) {
    const rows = await unscannedForDates(db, { workspaceId, branchId, steps, after, limit: batchSize });
    if (rows.length === 0) break;
    await storeDateMentions(db, workspaceId, rows.map((r) => ({ id: r.id, mentions: resolveRelativeDates(r.content, new Date(r.createdAt)) })));
    scanned += rows.length;
    after = rows.at(-1)!.id;
    if (rows.length < batchSize) break;
  }
  return scanned;
}
