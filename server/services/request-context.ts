/**
 * What every API request resolves before its procedure runs — the API key, the workspace and the
 * caller's role in it, the pipeline with its branch, head version and parsed spec — cached per
 * process for at most SYNTHEX_AUTH_CACHE_MS (default and maximum 1 s, server/core/ttl-cache.ts).
 *
 * The bound: a revoked key, a removed member, a changed role or a new spec version is seen by every
 * app server within that lifetime (servers share only the database, so another server's change
 * ends an entry when it expires). A change made by this process ends its entries at once
 * (`clearRequestCaches`, called by the services that make them and after every audited mutation).
 * Without these caches a search at 20 clients re-read five rows per request.
 */
import type { Db } from "../core/db";
import { processState } from "../core/process-state";
import { requestCacheMs, TtlCache } from "../core/ttl-cache";
import { findBranch, findPipeline } from "../store/pipelines";

// Per process, not per module copy (server/core/process-state.ts): a change made through Next's
// routes ends the entries the direct /api/v1 path reads, and the other way round.
const lifetime = requestCacheMs();
// Entries belong to one database client (tests and benches open several in one process).
const clients = processState("request-context.dbTags", () => ({ tags: new WeakMap<object, number>(), next: 0 }));
export const dbTag = (db: Db) => {
  let tag = clients.tags.get(db);
  if (tag === undefined) clients.tags.set(db, (tag = clients.next++));
  return tag;
};
const workspaces = processState("request-context.workspaces", () => new TtlCache<{ workspace: Awaited<ReturnType<Db["workspace"]["findUnique"]>>; role: string | null }>(lifetime));
const pipelines = processState("request-context.pipelines", () => new TtlCache<Awaited<ReturnType<typeof findPipeline>>>(lifetime));
const branches = processState("request-context.branches", () => new TtlCache<Awaited<ReturnType<typeof findBranch>>>(lifetime));
const caches = processState("request-context.caches", () => new Set<{ clear(): void }>([workspaces, pipelines, branches]));

/** Registers another request-path cache to end with the others (the API key cache of api-keys.ts). */
export function registerRequestCache(cache: { clear(): void }) {
  caches.add(cache);
}

/** Ends every cached lookup of this process now (a key, member, role or spec changed here). */
export function clearRequestCaches() {
  for (const c of caches) c.clear();
}

/**
 * The workspace and a person's membership role in it (null: not a member). `userId` null: an API
 * key, whose role comes with the key (the workspace row only).
 */
export function workspaceAndRole(db: Db, workspaceId: string, userId: string | null) {
  return workspaces.get(`${dbTag(db)}\n${workspaceId}\n${userId ?? ""}`, async () => {
    const [workspace, membership] = await Promise.all([
      db.workspace.findUnique({ where: { id: workspaceId } }),
      userId ? db.membership.findUnique({ where: { workspaceId_userId: { workspaceId, userId } }, select: { role: true } }) : null,
    ]);
    return { workspace, role: membership?.role ?? null };
  });
}

/** The pipeline (id or name) of the workspace; not found: the same error as `findPipeline`. */
export function cachedPipeline(db: Db, workspaceId: string, pipelineIdOrName: string) {
  return pipelines.get(`${dbTag(db)}\n${workspaceId}\n${pipelineIdOrName}`, () => findPipeline(db, workspaceId, pipelineIdOrName));
}

/** A branch of the pipeline with its head version and parsed spec (as `findBranch`). */
export function cachedBranch(db: Db, pipelineId: string, branchName: string) {
  return branches.get(`${dbTag(db)}\n${pipelineId}\n${branchName}`, () => findBranch(db, pipelineId, branchName));
}
