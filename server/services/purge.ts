/**
 * Purge (seed §11.3, GDPR): delete a record — or every record of a scope — and everything derived
 * from it on every branch, in one transaction with an audit entry. The dry run reads the same
 * cascade the real purge deletes (both call `purgeCascade`), so what it lists is exactly what goes.
 * Aggregates that also had other inputs go too; the next run recomputes them from what is left.
 */
import type { Db } from "../core/db";
import { badRequest, conflict, notFound } from "../core/errors";
import { PURGED_ANSWER } from "../http/idempotency";
import { refreshLexicalStats } from "../search/lexical";
import { deleteOrphanBlobs, imageHashesOf } from "../store/media-blobs";
import { deleteCascade, purgeCascade, recordsInScope, type PurgeCascade } from "../store/purge";
import { purgeQueryLog } from "../store/query-log";
import { normalizeScope } from "../store/record-sql";
import { purgeShadowResults } from "../store/shadow";
import { recordAudit } from "./audit";

export interface PurgeResult extends PurgeCascade {
  dryRun: boolean;
  /** The audit entry of a real purge. */
  auditId: string | null;
}

export interface PurgeTarget {
  workspaceId: string;
  /** "user:<id>" or "apiKey:<id>", for the audit entry. */
  actor: string;
  dryRun: boolean;
}

const PURGE_TX = { timeout: 600_000, maxWait: 60_000 };

async function purge(db: Db, target: PurgeTarget, pipelineId: string, what: { kind: "record"; id: string } | { kind: "scope"; scope: string }): Promise<PurgeResult> {
  const scope = what.kind === "scope" ? what.scope : null;
  const roots = (tx: Parameters<typeof recordsInScope>[0]) =>
    what.kind === "record" ? Promise.resolve([what.id]) : recordsInScope(tx, target.workspaceId, pipelineId, what.scope);
  if (target.dryRun) return { ...(await purgeCascade(db, target.workspaceId, pipelineId, await roots(db), scope)), dryRun: true, auditId: null };

  // A run writing pointers while the cascade is deleted could re-point at a purged record.
  const running = await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } }, select: { id: true } });
  if (running) throw conflict(`A run of this pipeline is in progress (${running.id}): purge when it has finished.`);
  const { cascade, branchIds, auditId } = await db.$transaction(async (tx) => {
    const cascade = await purgeCascade(tx, target.workspaceId, pipelineId, await roots(tx), scope);
    const images = await imageHashesOf(tx, target.workspaceId, cascade.records.map((r) => r.id));
    const branchIds = await deleteCascade(tx, target.workspaceId, pipelineId, cascade, scope, PURGED_ANSWER);
    // An image's stored original goes with the last record that names it.
    await deleteOrphanBlobs(tx, target.workspaceId, images);
    // The query log forgets every call that served, cited or was asked in what is purged (issue 37).
    const queryLogEntries = await purgeQueryLog(tx, target.workspaceId, pipelineId, cascade.records.map((r) => r.id), scope);
    const shadowResults = await purgeShadowResults(tx, target.workspaceId, pipelineId, cascade.records.map((r) => r.id), scope);
    const audit = await recordAudit(tx, {
      workspaceId: target.workspaceId,
      actor: target.actor,
      action: "purge",
      target: what.kind === "record" ? `record:${what.id}` : `scope:${pipelineId}:${what.scope}`,
      // Counts and ids only: the audit must not keep what was purged.
      summary: { pipelineId, roots: cascade.roots, records: cascade.records.length, byStep: cascade.byStep, pointers: cascade.pointers, embeddings: cascade.embeddings, postings: cascade.postings, ingestSessions: cascade.ingestSessions, ingestMessages: cascade.ingestMessages, copies: cascade.copies, queryLogEntries, shadowResults },
    });
    return { cascade, branchIds, auditId: audit.id };
  }, PURGE_TX);
  // Search statistics (document frequencies) of the steps that lost records, per branch.
  const steps = Object.keys(cascade.byStep);
  for (const branchId of branchIds) {
    await refreshLexicalStats(db, target.workspaceId, branchId, steps).catch((err) => console.error("[synthex purge] search statistics refresh failed:", (err as Error).message));
  }
  return { ...cascade, dryRun: false, auditId };
}

/** Purges one record (any step) and everything derived from it. */
export async function purgeRecord(db: Db, target: PurgeTarget, id: string, scopePrefix?: string | null): Promise<PurgeResult> {
  const record = await db.record.findFirst({ where: { id, workspaceId: target.workspaceId }, select: { pipelineId: true, scope: true } });
  if (!record || (scopePrefix && !inScope(record.scope, scopePrefix))) throw notFound(`Record "${id}" not found.`);
  return purge(db, target, record.pipelineId, { kind: "record", id });
}

/** Purges every record of a pipeline in a scope (prefix), what derives from them, and the scope's live sessions. */
export async function purgeScope(db: Db, target: PurgeTarget, pipelineId: string, scope: string): Promise<PurgeResult> {
  const s = normalizeScope(scope);
  if (!s) throw badRequest("scope: name the scope to purge, e.g. acme:user-42.");
  return purge(db, target, pipelineId, { kind: "scope", scope: s });
}

/** Scope prefix semantics of every read: `acme:eng` covers `acme:eng` and `acme:eng:*`. */
export function inScope(scope: string, prefix: string): boolean {
  const p = prefix.replace(/:+$/, "");
  return scope === p || scope.startsWith(`${p}:`);
}

