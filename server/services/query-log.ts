/**
 * The query log (issue 37), opt-in per pipeline: every served search, ask, brief and walk — over
 * REST, MCP, tRPC and the compatibility APIs, which all reach the same procedures — is written
 * AFTER the response is on its way (`recordServedQuery` returns at once; the write runs on a later
 * tick, tracked so short-lived processes wait for it). An entry keeps who asked, scope, mode and
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
  insertQueryLogEntry,
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
import { trackBackground } from "./background";

export { DEFAULT_QUERY_LOG, type QueryLogSettings };
export const QUERY_KINDS = ["search", "ask", "brief", "walk"] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

/** Settings are read per served call: cached briefly so a pipeline with the log off pays one map lookup. */
const CONFIG_TTL_MS = 5000;
const configCache = new Map<string, { at: number; settings: QueryLogSettings }>();
/** Prune a pipeline's log at most this often. */
const PRUNE_EVERY_MS = 60_000;
const lastPrune = new Map<string, number>();

async function cachedConfig(db: Db, pipelineId: string): Promise<QueryLogSettings> {
  const hit = configCache.get(pipelineId);
  if (hit && Date.now() - hit.at < CONFIG_TTL_MS) return hit.settings;
  const settings = await readQueryLogConfig(db, pipelineId);
  configCache.set(pipelineId, { at: Date.now(), settings });
  return settings;
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
  configCache.set(pipelineId, { at: Date.now(), settings: saved });
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

/** Pending writes (tests and benches wait for them with `settleQueryLog`). */
const pending = new Set<Promise<unknown>>();

/**
 * Log a served call when the pipeline's log is on. Returns at once: the settings read, the insert
 * and any pruning run after the caller has answered. A failed write is reported, never thrown.
 */
export function recordServedQuery(db: Db, entry: () => ServedQuery): void {
  const work = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
    const e = entry();
    const settings = await cachedConfig(db, e.pipelineId);
    if (!settings.enabled) return;
    await insertQueryLogEntry(db, { ...e, query: e.query.slice(0, 4000) });
    const now = Date.now();
    if (now - (lastPrune.get(e.pipelineId) ?? 0) > PRUNE_EVERY_MS) {
      lastPrune.set(e.pipelineId, now);
      await pruneQueryLog(db, e.pipelineId, settings);
    }
  });
  const tracked = trackBackground(work).catch((err: unknown) => console.warn(`[synthex query-log] not written: ${(err as Error).message}`));
  pending.add(tracked);
  void tracked.finally(() => pending.delete(tracked));
}

/** Wait until every query-log write started so far has finished. */
export async function settleQueryLog(): Promise<void> {
  while (pending.size) await Promise.allSettled([...pending]);
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
