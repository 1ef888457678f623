/**
 * Reads that decide who owns a live-ingest session id: the session itself, the conversations of
 * other sources that carry the same id, and the API keys that could have opened one in a scope.
 * `server/services/ingest.ts` makes the decision; this file only reads.
 */
import type { Db, DbTx } from "../core/db";

export interface SessionKey {
  workspaceId: string;
  pipelineId: string;
  source: string;
  sessionId: string;
}

/** The session of this source with this id (any workspace: the caller compares it). */
export function findSessionOwner(db: Db | DbTx, key: SessionKey) {
  return db.ingestSession.findUnique({
    where: { pipelineId_source_sessionId: { pipelineId: key.pipelineId, source: key.source, sessionId: key.sessionId } },
    select: { scope: true, workspaceId: true, status: true },
  });
}

/**
 * The scopes of every conversation using this id in the pipeline: live sessions of any source, and
 * source records that carry it as `chat.conversation_id` (imported, or closed from a session).
 */
export async function conversationScopes(db: Db, key: Omit<SessionKey, "source">, sources: string[]): Promise<string[]> {
  const where = { workspaceId: key.workspaceId, pipelineId: key.pipelineId };
  const [sessions, records] = await Promise.all([
    db.ingestSession.findMany({ where: { ...where, sessionId: key.sessionId }, select: { scope: true }, distinct: ["scope"] }),
    db.record.findMany({
      where: { ...where, step: { in: sources }, metadata: { path: ["chat", "conversation_id"], equals: key.sessionId } },
      select: { scope: true },
      distinct: ["scope"],
    }),
  ]);
  return [...new Set([...sessions, ...records].map((r) => r.scope))];
}

/**
 * The scope prefixes of the workspace's keys that can write in this pipeline with a scope limit —
 * revoked ones too (a session they opened outlives them); read-only keys never write.
 */
export async function writingScopePrefixes(db: Db, target: { workspaceId: string; pipelineId: string }): Promise<string[]> {
  const keys = await db.apiKey.findMany({
    where: { workspaceId: target.workspaceId, readOnly: false, scopePrefix: { not: null } },
    select: { scopePrefix: true, pipelines: true },
  });
  return keys.filter((k) => !k.pipelines.length || k.pipelines.includes(target.pipelineId)).map((k) => k.scopePrefix!);
}
