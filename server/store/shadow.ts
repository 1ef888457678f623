/**
 * Shadow traffic's rows (issue 37): the shadows of a pipeline (a branch answering copies of main's
 * live queries for a period, with counters) and their results (ids and latency of both sides, never
 * record content). The JSON sides are parsed with zod on read; a purge deletes the results that name
 * a purged record or lie in a purged scope.
 */
import { z } from "zod";
import type { Prisma } from "../generated/prisma/client";
import type { Db, DbTx } from "../core/db";

export interface ShadowRow {
  id: string;
  workspaceId: string;
  pipelineId: string;
  branch: string;
  startsAt: Date;
  endsAt: Date;
  stoppedAt: Date | null;
  stopReason: string | null;
  createdBy: string;
  createdAt: Date;
  answered: number;
  failed: number;
  dropped: number;
  lastError: string | null;
}

/** Shadows that take copies at `now`: started, not yet ended, not stopped. */
export async function activeShadows(db: DbTx, pipelineId: string, now = new Date()): Promise<ShadowRow[]> {
  return db.shadowTraffic.findMany({ where: { pipelineId, stoppedAt: null, startsAt: { lte: now }, endsAt: { gt: now } }, orderBy: { createdAt: "asc" } });
}

/** Shadows not over yet (running or starting later): at most one per branch. */
export async function openShadowOn(db: DbTx, workspaceId: string, pipelineId: string, branch: string, now = new Date()): Promise<ShadowRow | null> {
  return db.shadowTraffic.findFirst({ where: { workspaceId, pipelineId, branch, stoppedAt: null, endsAt: { gt: now } }, orderBy: { createdAt: "desc" } });
}

export async function countOpenShadows(db: DbTx, workspaceId: string, pipelineId: string, now = new Date()): Promise<number> {
  return db.shadowTraffic.count({ where: { workspaceId, pipelineId, stoppedAt: null, endsAt: { gt: now } } });
}

export async function createShadow(db: DbTx, row: { workspaceId: string; pipelineId: string; branch: string; startsAt: Date; endsAt: Date; createdBy: string }): Promise<ShadowRow> {
  return db.shadowTraffic.create({ data: row });
}

export async function updateShadowPeriod(db: DbTx, id: string, period: { startsAt: Date; endsAt: Date }): Promise<ShadowRow> {
  return db.shadowTraffic.update({ where: { id }, data: period });
}

export async function stopShadowRow(db: DbTx, workspaceId: string, id: string, reason: string, now = new Date()): Promise<ShadowRow | null> {
  const { count } = await db.shadowTraffic.updateMany({ where: { id, workspaceId, stoppedAt: null }, data: { stoppedAt: now, stopReason: reason } });
  if (!count) return null;
  return db.shadowTraffic.findFirst({ where: { id, workspaceId } });
}

export async function listShadows(db: DbTx, workspaceId: string, pipelineId: string, branch?: string, limit = 50): Promise<ShadowRow[]> {
  return db.shadowTraffic.findMany({ where: { workspaceId, pipelineId, ...(branch ? { branch } : {}) }, orderBy: { createdAt: "desc" }, take: limit });
}

export async function findShadow(db: DbTx, workspaceId: string, pipelineId: string, id: string): Promise<ShadowRow | null> {
  return db.shadowTraffic.findFirst({ where: { id, workspaceId, pipelineId } });
}

/** Copies dropped while the queue was full, added in one statement. */
export async function addShadowDrops(db: DbTx, id: string, dropped: number): Promise<void> {
  await db.shadowTraffic.updateMany({ where: { id }, data: { dropped: { increment: dropped } } });
}

const sideSchema = z.object({ ids: z.array(z.string()), latencyMs: z.number() });
export type ShadowSide = z.infer<typeof sideSchema>;

export interface ShadowResultInput {
  workspaceId: string;
  pipelineId: string;
  shadowId: string;
  kind: string;
  query: string;
  scope: string | null;
  k: number;
  main: ShadowSide;
  branch: ShadowSide;
  cited: string[];
  error: string | null;
}

/** One answered (or failed) copy and its shadow's counter, in one transaction; returns the shadow's answered + failed. */
export async function insertShadowResult(db: Db, row: ShadowResultInput): Promise<number> {
  const recordIds = [...new Set([...row.main.ids, ...row.branch.ids, ...row.cited])];
  return db.$transaction(async (t) => {
    await t.shadowResult.create({ data: { ...row, main: row.main as Prisma.InputJsonValue, branch: row.branch as Prisma.InputJsonValue, recordIds } });
    const s = await t.shadowTraffic.update({
      where: { id: row.shadowId },
      data: row.error ? { failed: { increment: 1 }, lastError: row.error.slice(0, 500) } : { answered: { increment: 1 } },
      select: { answered: true, failed: true },
    });
    return s.answered + s.failed;
  });
}

export interface ShadowResultRow extends Omit<ShadowResultInput, "workspaceId" | "pipelineId"> {
  id: string;
  createdAt: Date;
}

/** A shadow's results, newest first (at most `limit`), their JSON sides parsed. */
export async function listShadowResults(db: DbTx, workspaceId: string, shadowId: string, limit: number): Promise<ShadowResultRow[]> {
  const rows = await db.shadowResult.findMany({ where: { workspaceId, shadowId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit });
  return rows.map((r) => ({
    id: r.id,
    createdAt: r.createdAt,
    shadowId: r.shadowId,
    kind: r.kind,
    query: r.query,
    scope: r.scope,
    k: r.k,
    main: sideSchema.parse(r.main),
    branch: sideSchema.parse(r.branch),
    cited: r.cited,
    error: r.error,
  }));
}

/** Purge hook: results of the pipeline that name a purged record, and — for a scope purge — those asked in that scope or below it. */
export async function purgeShadowResults(db: DbTx, workspaceId: string, pipelineId: string, recordIds: string[], scope: string | null): Promise<number> {
  const or: Prisma.ShadowResultWhereInput[] = [];
  if (recordIds.length) or.push({ recordIds: { hasSome: recordIds } });
  if (scope !== null) or.push({ scope }, { scope: { startsWith: `${scope}:` } });
  if (!or.length) return 0;
  return (await db.shadowResult.deleteMany({ where: { workspaceId, pipelineId, OR: or } })).count;
}
