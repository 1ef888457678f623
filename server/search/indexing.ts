/**
 * Incremental indexing. Full text: "Record"."searchVector" is a generated column with a GIN
 * index (migration search_fts); the BM25 index and statistics (document frequencies per step) are
 * brought up to date by the records that joined and left (server/search/lexical.ts). Embeddings:
 * for every search output, the records its steps show on the branch that have no embedding for
 * the output's embedder yet are embedded and stored, and the embedder's HNSW index is ensured.
 * Relative dates: timed records not scanned yet get their resolved mentions.
 *
 * What a pass reads is what changed (server/store/index-window.ts): the pointers of the indexed
 * steps changed since the branch's last complete pass (`SearchIndexState`), so the pass after a +1%
 * run reads about 1% of the branch. A full pass (every pointer of the steps: the anti-join over
 * the branch, the date scan, each step's lists compared whole) runs when the branch has no state
 * yet, when its indexed steps or embedders changed since, when more than WINDOW_MAX pointers
 * changed, or on request (`full`). Records a crashed run or pass left unindexed are in the next
 * window: a pass that does not complete stores no new mark.
 *
 * The run service's `afterRun` (server/services/after-run.ts) calls `indexPipeline` when a run ends.
 */
import { getEmbedder } from "../llm/workspace-embedder";
import { storeDateMentions, unscannedAmong, unscannedForDates, type UnscannedRecord } from "../store/date-mentions";
import { ensureVectorIndex, missingEmbeddingIds, missingEmbeddingsAmong, recordsToEmbed, storeEmbeddings, type EmbeddingModel } from "../store/embedding-store";
import { changedPointers, indexMark, readIndexState, saveIndexState } from "../store/index-window";
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
/** More changed pointers than this since the last pass: a full pass (its anti-joins cost about as much, and hold no id list in memory). */
export const WINDOW_MAX = 200_000;
/** Bump when what a pass writes changes: every branch's next pass is then a full one. */
const INDEX_FORMAT = 1;

export interface IndexResult {
  embedded: number;
  byModel: Record<string, number>;
  /** Steps whose BM25 statistics were recomputed (their record set changed). */
  lexicalStats?: string[];
  /** Timed records scanned for relative dates ("last night") this time; their mentions are in `metadata.time.mentions`. */
  dateScanned?: number;
  /** Pointers changed since the branch's last index pass (what this pass looked at); null: a full pass. */
  window?: number | null;
  /** Milliseconds per phase: finding the window, embeddings, BM25, relative dates. */
  ms?: { window: number; embeddings: number; lexical: number; dates: number };
}

/**
 * Indexes what the branch shows of the steps its search outputs cover: embeddings, BM25 index and
 * statistics, relative dates. Reads only what changed since the branch's last pass, unless `full`.
 */
export async function indexPipeline(
  db: Db,
  pipelineId: string,
  branch = "main",
  options: { workspaceId?: string; batchSize?: number; pageSize?: number; full?: boolean } = {},
): Promise<IndexResult> {
  const { batchSize = BATCH, pageSize = PAGE } = options;
  const p = await db.pipeline.findUnique({ where: { id: pipelineId }, select: { workspaceId: true } });
  if (!p || (options.workspaceId && options.workspaceId !== p.workspaceId)) return { embedded: 0, byModel: {} };
  const ctx = await resolveBranch(db, p.workspaceId, pipelineId, branch);
  const indexed = indexedSteps(ctx.spec);
  const steps = [...indexed.keys()];
  const stepsByModel = new Map<string, string[]>();
  for (const [step, model] of indexed) stepsByModel.set(model, [...(stepsByModel.get(model) ?? []), step]);
  const embedders: Array<{ embedder: EmbeddingModel; steps: string[] }> = [];
  for (const [model, own] of stepsByModel) embedders.push({ embedder: await getEmbedder(db, ctx.workspaceId, model), steps: own });
  // What the stored mark vouches for: these steps, each embedded by this embedder.
  const coverage = JSON.stringify({ format: INDEX_FORMAT, steps: embedders.flatMap((e) => e.steps.map((s) => `${s} ${e.embedder.id}`)).sort() });

  let t = performance.now();
  const lap = () => {
    const now = performance.now();
    const elapsed = Math.round(now - t);
    t = now;
    return elapsed;
  };
  const mark = await indexMark(db);
  const state = options.full ? null : await readIndexState(db, ctx.branchId);
  const changed = state?.coverage === coverage ? await changedPointers(db, { branchId: ctx.branchId, steps, since: state.indexedThrough, limit: WINDOW_MAX }) : null;

  const ms = { window: lap(), embeddings: 0, lexical: 0, dates: 0 };
  const result: IndexResult = { embedded: 0, byModel: {}, window: changed ? [...changed.values()].reduce((n, ids) => n + ids.length, 0) : null, ms };
  for (const { embedder, steps: own } of embedders) {
    await ensureVectorIndex(db, embedder.id, embedder.dimensions);
    const store = async (ids: string[]) => {
      let stored = 0;
      const batches = Array.from({ length: Math.ceil(ids.length / batchSize) }, (_, i) => ids.slice(i * batchSize, (i + 1) * batchSize));
      for (let i = 0; i < batches.length; i += IN_FLIGHT) {
        const counts = await Promise.all(
          batches.slice(i, i + IN_FLIGHT).map(async (batch) => (await storeEmbeddings(db, ctx.workspaceId, embedder, await recordsToEmbed(db, batch))).stored),
        );
        stored += counts.reduce((a, b) => a + b, 0);
      }
      return stored;
    };
    let count = 0;
    if (changed) {
      const ids = [...new Set(own.flatMap((s) => changed.get(s) ?? []))].sort();
      for (let i = 0; i < ids.length; i += pageSize) count += await store(await missingEmbeddingsAmong(db, ids.slice(i, i + pageSize), embedder.id));
    } else {
      let after = "";
      for (;;) {
        const ids = await missingEmbeddingIds(db, { branchId: ctx.branchId, steps: own, model: embedder.id, after, limit: pageSize });
        if (ids.length === 0) break;
        count += await store(ids);
        after = ids.at(-1)!;
        if (ids.length < pageSize) break;
      }
    }
    result.byModel[embedder.id] = count;
    result.embedded += count;
  }
  ms.embeddings = lap();
  result.lexicalStats = await refreshLexicalStats(db, ctx.workspaceId, ctx.branchId, steps, changed ?? undefined);
  ms.lexical = lap();
  const among = changed ? [...new Set([...changed.values()].flat())].sort() : undefined;
  result.dateScanned = await indexDateMentions(db, ctx.workspaceId, ctx.branchId, steps, batchSize, among);
  ms.dates = lap();
  await saveIndexState(db, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, coverage, indexedThrough: mark });
  return result;
}

/**
 * Resolves the relative time phrases of each timed record of the steps ("last night" in a session
 * of 2 May 2022 → 1 May 2022) and stores them in its `metadata.time.mentions`, so a question that
 * names 1 May finds it (search.ts, date windows). Records already scanned are skipped. With
 * `among` (records changed since the branch's last pass) only those are read; without, the
 * steps' records on the branch.
 */
export async function indexDateMentions(db: Db, workspaceId: string, branchId: string, steps: string[], batchSize = BATCH, among?: string[]): Promise<number> {
  const scan = async (rows: UnscannedRecord[]) => {
    for (let i = 0; i < rows.length; i += batchSize) {
      const batch = rows.slice(i, i + batchSize);
      await storeDateMentions(db, workspaceId, batch.map((r) => ({ id: r.id, mentions: resolveRelativeDates(r.content, new Date(r.createdAt)) })));
    }
    return rows.length;
  };
  let scanned = 0;
  if (among) {
    for (let i = 0; i < among.length; i += batchSize * 8) scanned += await scan(await unscannedAmong(db, workspaceId, among.slice(i, i + batchSize * 8)));
    return scanned;
  }
  let after = "";
  for (;;) {
    const rows = await unscannedForDates(db, { workspaceId, branchId, steps, after, limit: batchSize });
    if (rows.length === 0) break;
    scanned += await scan(rows);
    after = rows.at(-1)!.id;
    if (rows.length < batchSize) break;
  }
  return scanned;
}
