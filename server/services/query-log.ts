/**
 * The query log (issue 37), opt-in per pipeline: every served search, ask, brief and walk — over
 * REST, MCP, tRPC and the compatibility APIs, which all reach the same procedures — is written
 * AFTER the response is on its way: `recordServedQuery` returns at once, the entry is built on a
 * later tick and buffered, and the buffer is written in one multi-row INSERT every 250 ms
 * (services/batch-writer.ts; bounded, drops counted; settling and a normal stop write it at once). An entry keeps who asked, scope, mode and
 * parameters, the query, the served record ids with ranks and scores, ask's citations and
 * confidence, latency, and the branch and version that answered — never record content. Retention
 * and a size cap prune it; a purge deletes the entries naming what it purges (server/services/purge.ts).
 */
import type { Db } from "../core/db";
import type { SearchResult } from "../search/search";
import type { WalkResult } from "../search/walk";
import type { AnswerPacket } from "./ask";
import { badRequest } from "../core/errors";
import {
  DEFAULT_QUERY_LOG,
  insertQueryLogEntries,
  listQueryLogEntries,
  pruneQueryLog,
  queryLogWhere,
  readQueryLogConfig,
  writeQueryLogConfig,
  type QueryLogFilter,
  type QueryLogRow,
  type QueryLogSettings,
} from "../store/query-log";
import { actorLabel } from "./audit";
import { processState } from "../core/process-state";
import { requestCacheMs, TtlCache } from "../core/ttl-cache";
import { flushOnSettle, trackBackground } from "./background";
import { BatchWriter } from "./batch-writer";

export { DEFAULT_QUERY_LOG, type QueryLogSettings };
export const QUERY_KINDS = ["search", "ask", "brief", "walk"] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

/**
 * Settings are read per served call: cached per pipeline with the request path's bound
 * (SYNTHEX_AUTH_CACHE_MS, at most 1 s; a change made here is seen at once), so a pipeline with the
 * log off pays a map lookup and a change reaches every app server within the bound.
 */
const configCache = processState("query-log.config", () => new TtlCache<QueryLogSettings>(requestCacheMs()));
/** Prune a pipeline's log at most this often. */
const PRUNE_EVERY_MS = 60_000;
const lastPrune = processState("query-log.lastPrune", () => new Map<string, number>());

function cachedConfig(db: Db, pipelineId: string): Promise<QueryLogSettings> {
  return configCache.get(pipelineId, () => readQueryLogConfig(db, pipelineId));
}

export async function getQueryLogConfig(db: Db, pipelineId: string): Promise<QueryLogSettings> {
  return readQueryLogConfig(db, pipelineId);
}

export async function setQueryLogConfig(db: Db, workspaceId: string, pipelineId: string, patch: Partial<QueryLogSettings>): Promise<QueryLogSettings> {
  const current = await readQueryLogConfig(db, pipelineId);
  const given = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<QueryLogSettings>;
  const next = { ...current, ...given };
  if (!Number.isInteger(next.retentionDays) || next.retentionDays < 1 || next.retentionDays > 3650) throw badRequest("retentionDays: a whole number of days from 1 to 3650.");
  if (!Number.isInteger(next.maxEntries) || next.maxEntries < 100 || next.maxEntries > 10_000_000) throw badRequest("maxEntries: a whole number from 100 to 10,000,000.");
  const saved = await writeQueryLogConfig(db, workspaceId, pipelineId, next);
  configCache.delete(pipelineId);
  await pruneQueryLog(db, pipelineId, saved);
  return saved;
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** What a served search / ask / brief / walk returned, as ranked ids (the log's hits, shadow traffic's sides). */
export function servedHits(kind: QueryKind, output: unknown): { hits: QueryLogRow["hits"]; cited: string[]; confidence: number | null; mode: string | null } {
  if (kind === "search") {
    return { hits: (output as SearchResult).hits.map((h, i) => ({ id: h.id, rank: i + 1, score: round(h.score.fused), step: h.step })), cited: [], confidence: null, mode: null };
  }
  if (kind === "ask") {
    const packet = output as AnswerPacket;
    return {
      hits: packet.evidence.map((e, i) => ({ id: e.id, rank: i + 1, score: round(e.relevance), step: e.step })),
      cited: [...new Set(packet.citations.map((c) => c.recordId))],
      confidence: packet.confidence.score,
      mode: packet.mode,
    };
  }
  if (kind === "walk") {
    return { hits: (output as WalkResult).hits.map((h, i) => ({ id: h.id, rank: i + 1, score: round(h.score), step: h.step })), cited: [], confidence: null, mode: null };
  }
  const brief = output as { projections: Array<{ blocks: Array<{ record: { id: string; step: string } }> }> };
  return { hits: brief.projections.flatMap((p) => p.blocks.map((b) => b.record)).map((r, i) => ({ id: r.id, rank: i + 1, score: 1, step: r.step })), cited: [], confidence: null, mode: null };
}

export type ServedQuery = Omit<QueryLogRow, "params"> & { params: Record<string, unknown> };

/** Entries being built (the step before the buffer; `settleQueryLog` waits for them). */
const pending = processState("query-log.pending", () => new Set<Promise<unknown>>());

type Buffered = ServedQuery & { createdAt: Date };

/**
 * The writer's bounds: an entry is written within SYNTHEX_QUERY_LOG_FLUSH_MS (default 250 ms) or
 * once 200 are waiting; at most SYNTHEX_QUERY_LOG_BUFFER (default 10,000) wait, past that an entry
 * is dropped and counted (`queryLogStats`).
 */
function writerOptions(env: NodeJS.ProcessEnv = process.env) {
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max} (got "${raw}").`);
    return n;
  };
  return { flushMs: int("SYNTHEX_QUERY_LOG_FLUSH_MS", 250, 1, 60_000), maxBatch: 200, maxBuffered: int("SYNTHEX_QUERY_LOG_BUFFER", 10_000, 1, 1_000_000) };
}

/**
 * One writer per database (a process has one; tests open several), shared by every copy of this
 * module in the process (server/core/process-state.ts): one buffer, one flush timer, one set of
 * counters, and a stop seen by all of them.
 */
const writers = processState("query-log.writers", () => new Map<Db, BatchWriter<Buffered>>());
const stop = processState("query-log.stop", () => ({ stopping: false }));

function writerFor(db: Db): BatchWriter<Buffered> {
  let w = writers.get(db);
  if (!w) {
    w = new BatchWriter<Buffered>("query-log", (batch) => writeBatch(db, batch), writerOptions());
    if (stop.stopping) void w.stopping();
    writers.set(db, w);
  }
  return w;
}

/** One INSERT for the batch, then each pipeline's pruning when it is due. */
async function writeBatch(db: Db, batch: Buffered[]) {
  await insertQueryLogEntries(db, batch);
  const now = Date.now();
  for (const pipelineId of new Set(batch.map((e) => e.pipelineId))) {
    if (now - (lastPrune.get(pipelineId) ?? 0) <= PRUNE_EVERY_MS) continue;
    lastPrune.set(pipelineId, now);
    await pruneQueryLog(db, pipelineId, await cachedConfig(db, pipelineId));
  }
}

/**
 * Log a served call when the pipeline's log is on. Returns at once: the settings read and building
 * the entry run on a later tick, the write with the next batch. A failed write is reported, never thrown.
 */
export function recordServedQuery(db: Db, entry: () => ServedQuery): void {
  const servedAt = new Date();
  const work = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
    const e = entry();
    const settings = await cachedConfig(db, e.pipelineId);
    if (!settings.enabled) return;
    writerFor(db).add({ ...e, query: e.query.slice(0, 4000), createdAt: servedAt });
  });
  const tracked = trackBackground(work).catch((err: unknown) => console.warn(`[synthex query-log] not written: ${(err as Error).message}`));
  pending.add(tracked);
  void tracked.finally(() => pending.delete(tracked));
}

/** Write every buffered entry now, on every database of this process. */
export async function flushQueryLog(): Promise<void> {
  while (pending.size) await Promise.allSettled([...pending]);
  await Promise.all([...writers.values()].map((w) => w.flush()));
}
flushOnSettle(flushQueryLog);

/** A normal stop (the app server's SIGTERM / SIGINT): write what is buffered, and each later entry as it comes. */
export async function flushQueryLogOnStop(): Promise<void> {
  stop.stopping = true;
  await Promise.all([...writers.values()].map((w) => w.stopping()));
  await flushQueryLog();
}

/** Wait until every query-log entry recorded so far is written (tests, benches, the CLI). */
export const settleQueryLog = flushQueryLog;

/** This process's writer counters, summed over its databases: written, dropped (buffer full), failed, buffered now. */
export function queryLogStats() {
  const total = { written: 0, dropped: 0, failed: 0, buffered: 0 };
  for (const w of writers.values()) {
    total.written += w.stats.written;
    total.dropped += w.stats.dropped;
    total.failed += w.stats.failed;
    total.buffered += w.buffered;
  }
  return total;
}

/** A logged query as the log's readers see it: the stored row without its tenancy columns. */
export interface LoggedQuery extends Omit<QueryLogRow, "workspaceId" | "pipelineId"> {
  id: string;
  createdAt: Date;
  labelRecordId: string | null;
}

type EntryRow = Awaited<ReturnType<typeof listQueryLogEntries>>[number];
export function toLoggedQuery(r: EntryRow): LoggedQuery {
  return {
    id: r.id,
    createdAt: r.createdAt,
    surface: r.surface,
    kind: r.kind,
    caller: r.caller,
    scope: r.scope,
    mode: r.mode,
    params: (r.params ?? {}) as Record<string, unknown>,
    query: r.query,
    branch: r.branch,
    versionId: r.versionId,
    hits: Array.isArray(r.hits) ? (r.hits as LoggedQuery["hits"]) : [],
    cited: r.cited,
    confidence: r.confidence,
    latencyMs: r.latencyMs,
    labelRecordId: r.labelRecordId,
  };
}

export async function listQueryLog(db: Db, filter: QueryLogFilter): Promise<LoggedQuery[]> {
  return (await listQueryLogEntries(db, filter)).map(toLoggedQuery);
}

/** The Traffic tab: totals, per day, slowest, most frequent, the "no good match" rate, per caller and scope. */
export async function queryTraffic(db: Db, filter: Omit<QueryLogFilter, "limit">, opts: { noMatchBelow?: number } = {}) {
  const noMatchBelow = opts.noMatchBelow ?? 0.05;
  const rows = (await db.queryLogEntry.findMany({ where: queryLogWhere(filter), orderBy: { createdAt: "desc" }, take: 20_000 })).map(toLoggedQuery);
  const noMatch = (q: LoggedQuery) => q.hits.length === 0 || (q.hits[0]?.score ?? 0) < noMatchBelow;
  const count = <K extends string>(key: (q: LoggedQuery) => K) => {
    const m = new Map<K, { n: number; noMatch: number; latency: number }>();
    for (const q of rows) {
      const k = key(q);
      const cur = m.get(k) ?? { n: 0, noMatch: 0, latency: 0 };
      cur.n++;
      cur.noMatch += noMatch(q) ? 1 : 0;
      cur.latency += q.latencyMs;
      m.set(k, cur);
    }
    return [...m.entries()].map(([key, v]) => ({ key, count: v.n, noMatchRate: v.n ? v.noMatch / v.n : 0, meanLatencyMs: v.n ? v.latency / v.n : 0 })).sort((a, b) => b.count - a.count);
  };
  const perCaller = count((q) => q.caller).slice(0, 50);
  // Readable names of the callers (a key's name and prefix, a person's email): the log keeps ids.
  const callerLabels: Record<string, string> = {};
  for (const { key } of perCaller) callerLabels[key] = (await actorLabel(db, key)) || key;
  return {
    total: rows.length,
    noMatchRate: rows.length ? rows.filter(noMatch).length / rows.length : 0,
    perDay: count((q) => q.createdAt.toISOString().slice(0, 10)).sort((a, b) => a.key.localeCompare(b.key)),
    perCaller,
    callerLabels,
    perScope: count((q) => q.scope ?? "(all)").slice(0, 50),
    frequent: count((q) => q.query.trim().toLowerCase()).slice(0, 20),
    slowest: [...rows].sort((a, b) => b.latencyMs - a.latencyMs).slice(0, 20),
  };
}
