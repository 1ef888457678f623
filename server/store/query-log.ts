/**
 * The query log's rows (issue 37): per-pipeline settings, served calls, pruning (retention, size
 * cap), and the purge hook that deletes every entry naming a purged record or lying in a purged scope.
 */
import type { Prisma } from "../generated/prisma/client";
import type { DbTx } from "../core/db";

export interface QueryLogSettings {
  enabled: boolean;
  retentionDays: number;
  maxEntries: number;
}

export const DEFAULT_QUERY_LOG: QueryLogSettings = { enabled: false, retentionDays: 30, maxEntries: 100_000 };

export async function readQueryLogConfig(db: DbTx, pipelineId: string): Promise<QueryLogSettings> {
  const row = await db.queryLogConfig.findUnique({ where: { pipelineId } });
  return row ? { enabled: row.enabled, retentionDays: row.retentionDays, maxEntries: row.maxEntries } : DEFAULT_QUERY_LOG;
}

export async function writeQueryLogConfig(db: DbTx, workspaceId: string, pipelineId: string, settings: QueryLogSettings): Promise<QueryLogSettings> {
  await db.queryLogConfig.upsert({ where: { pipelineId }, create: { workspaceId, pipelineId, ...settings }, update: settings });
  return settings;
}

export interface QueryLogRow {
  workspaceId: string;
  pipelineId: string;
  surface: string;
  kind: string;
  caller: string;
  scope: string | null;
  mode: string | null;
  params: Record<string, unknown>;
  query: string;
  branch: string;
  versionId: string | null;
  hits: Array<{ id: string; rank: number; score: number; step: string }>;
  cited: string[];
  confidence: number | null;
  latencyMs: number;
}

const entryData = (row: QueryLogRow) => ({
  ...row,
  params: row.params as Prisma.InputJsonValue,
  hits: row.hits as unknown as Prisma.InputJsonValue,
  recordIds: [...new Set([...row.hits.map((h) => h.id), ...row.cited])],
});

export async function insertQueryLogEntry(db: DbTx, row: QueryLogRow): Promise<string> {
  return (await db.queryLogEntry.create({ data: entryData(row), select: { id: true } })).id;
}

/** Several entries, each with the time it was served, in one multi-row INSERT (the query log's batched writer); returns how many were written. */
export async function insertQueryLogEntries(db: DbTx, rows: Array<QueryLogRow & { createdAt: Date }>): Promise<number> {
  if (!rows.length) return 0;
  return (await db.queryLogEntry.createMany({ data: rows.map((r) => ({ ...entryData(r), createdAt: r.createdAt })) })).count;
}

/** Deletes entries past the retention and the oldest past the size cap; returns how many went. */
export async function pruneQueryLog(db: DbTx, pipelineId: string, settings: QueryLogSettings, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - settings.retentionDays * 86_400_000);
  let deleted = (await db.queryLogEntry.deleteMany({ where: { pipelineId, createdAt: { lt: cutoff } } })).count;
  const count = await db.queryLogEntry.count({ where: { pipelineId } });
  if (count > settings.maxEntries) {
    const oldest = await db.queryLogEntry.findMany({ where: { pipelineId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: count - settings.maxEntries, select: { id: true } });
    deleted += (await db.queryLogEntry.deleteMany({ where: { id: { in: oldest.map((o) => o.id) } } })).count;
  }
  return deleted;
}

/**
 * Purge hook: entries of the pipeline that name a purged record (served or cited), and — for a
 * scope purge — every entry asked in that scope or below it. Returns how many were deleted.
 */
export async function purgeQueryLog(db: DbTx, workspaceId: string, pipelineId: string, recordIds: string[], scope: string | null): Promise<number> {
  const or: Prisma.QueryLogEntryWhereInput[] = [];
  if (recordIds.length) or.push({ recordIds: { hasSome: recordIds } }, { labelRecordId: { in: recordIds } });
  if (scope !== null) or.push({ scope }, { scope: { startsWith: `${scope}:` } });
  if (!or.length) return 0;
  return (await db.queryLogEntry.deleteMany({ where: { workspaceId, pipelineId, OR: or } })).count;
}

export interface QueryLogFilter {
  workspaceId: string;
  pipelineId: string;
  from?: Date;
  to?: Date;
  kind?: string;
  caller?: string;
  scopePrefix?: string | null;
  ids?: string[];
  limit: number;
}

export function queryLogWhere(f: Omit<QueryLogFilter, "limit">): Prisma.QueryLogEntryWhereInput {
  return {
    workspaceId: f.workspaceId,
    pipelineId: f.pipelineId,
    ...(f.from || f.to ? { createdAt: { ...(f.from ? { gte: f.from } : {}), ...(f.to ? { lte: f.to } : {}) } } : {}),
    ...(f.kind ? { kind: f.kind } : {}),
    ...(f.caller ? { caller: f.caller } : {}),
    ...(f.scopePrefix ? { OR: [{ scope: f.scopePrefix }, { scope: { startsWith: `${f.scopePrefix}:` } }] } : {}),
    ...(f.ids ? { id: { in: f.ids } } : {}),
  };
}

export async function listQueryLogEntries(db: DbTx, f: QueryLogFilter) {
  return db.queryLogEntry.findMany({ where: queryLogWhere(f), orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: f.limit });
}

export async function setQueryLabel(db: DbTx, workspaceId: string, id: string, recordId: string | null) {
  return db.queryLogEntry.updateMany({ where: { id, workspaceId }, data: { labelRecordId: recordId } });
}
