import { z } from "zod";
import { canAssignRole, isRole, lowerRole, type Role } from "../auth/permissions";
import { randomToken, sha256Hex } from "../auth/secrets";
import type { Db } from "../core/db";
import { badRequest, forbidden, notFound } from "../core/errors";
import { requestCacheMs, TtlCache } from "../core/ttl-cache";
import { processState } from "../core/process-state";
import { resolveLiveApiKey, stampApiKeyUse, type LiveKeyRow } from "../store/api-key-auth";
import { clearRequestCaches, dbTag, registerRequestCache } from "./request-context";
import { roleSchema } from "./workspaces";

const KEY_PREFIX = "sx_";

export const createApiKeyInput = z.object({
  name: z.string().trim().min(1, "Give the key a name.").max(80),
  role: roleSchema.default("editor"),
  /** Reads only: every procedure that writes refuses it, whatever its role. */
  readOnly: z.boolean().default(false),
  /** Pipelines (names or ids) the key reaches; empty: all of the workspace's. */
  pipelines: z.array(z.string().trim().min(1).max(200)).max(50).default([]),
  /** Scope prefix the key reads and writes in: `acme:eng` covers `acme:eng` and `acme:eng:*`, never `acme:sales`. */
  scopePrefix: z
    .string()
    .trim()
    .max(256)
    .transform((s) => s.replace(/:+$/, ""))
    .optional(),
});

/** What a key may reach beyond its role. */
export interface KeyRestrictions {
  readOnly: boolean;
  /** Pipeline ids; empty: every pipeline of the workspace. */
  pipelineIds: string[];
  scopePrefix: string | null;
}

export const isRestricted = (r: KeyRestrictions) => r.pipelineIds.length > 0 || r.scopePrefix !== null;

/** Scope prefix semantics of every read: `acme:eng` covers `acme:eng` and `acme:eng:*`. */
export function scopeWithin(scope: string, prefix: string): boolean {
  return scope === prefix || scope.startsWith(`${prefix}:`);
}

/**
 * The scope a restricted key's call acts in: the asked scope when it lies inside the key's prefix,
 * the prefix itself when none was asked; anything else is refused.
 */
export function effectiveScope(r: KeyRestrictions | null, scope: string | undefined): string | undefined {
  if (!r?.scopePrefix) return scope;
  const asked = scope?.trim().replace(/:+$/, "");
  if (!asked) return r.scopePrefix;
  if (!scopeWithin(asked, r.scopePrefix)) throw forbidden(`scope: this API key is limited to scope "${r.scopePrefix}" (and below); "${asked}" is outside it.`);
  return asked;
}

/**
 * A pipeline outside the key's list is refused with `unreachable`: the caller's own "not found"
 * for what it asked (the pipeline, the run), so the answer is the same as for a pipeline that does
 * not exist and names nothing the key cannot reach.
 */
export function assertPipelineAllowed(r: KeyRestrictions | null, pipelineId: string, unreachable: () => Error) {
  if (r && r.pipelineIds.length && !r.pipelineIds.includes(pipelineId)) throw unreachable();
}

export function assertScopeAllowed(r: KeyRestrictions | null, scope: string, what: string) {
  if (r?.scopePrefix && !scopeWithin(scope, r.scopePrefix)) throw notFound(`${what} not found.`);
}

export async function createApiKey(
  db: Db,
  workspaceId: string,
  actor: { userId: string; role: Role },
  input: z.input<typeof createApiKeyInput>,
) {
  const { name, role, readOnly, pipelines, scopePrefix } = createApiKeyInput.parse(input);
  if (!canAssignRole(actor.role, role)) throw forbidden(`Your role cannot create a key with role ${role}.`);
  const pipelineIds: string[] = [];
  for (const ref of pipelines) {
    const found = await db.pipeline.findFirst({ where: { workspaceId, evalOfId: null, OR: [{ id: ref }, { name: ref }] }, select: { id: true } });
    if (!found) throw badRequest(`pipelines: there is no pipeline "${ref}" in this workspace.`);
    pipelineIds.push(found.id);
  }
  const secret = `${KEY_PREFIX}${randomToken(30)}`;
  const key = await db.apiKey.create({
    data: { workspaceId, name, role, readOnly, pipelines: [...new Set(pipelineIds)], scopePrefix: scopePrefix || null, prefix: secret.slice(0, 10), keyHash: sha256Hex(secret), createdById: actor.userId },
  });
  // The only time the secret leaves the server.
  return { id: key.id, name: key.name, role: key.role, readOnly: key.readOnly, pipelines: await pipelineNames(db, key.pipelines), scopePrefix: key.scopePrefix, prefix: key.prefix, createdAt: key.createdAt, secret };
}

async function pipelineNames(db: Db, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db.pipeline.findMany({ where: { id: { in: ids } }, select: { id: true, name: true } });
  // A deleted pipeline stays listed by id: the key still does not reach anything else.
  return ids.map((id) => rows.find((r) => r.id === id)?.name ?? id);
}

/**
 * The workspace's keys with who made them and what they act as now: `effectiveRole` is the key's role
 * capped at its creator's current role; `status` is "inactive" when the creator is no longer a member.
 */
export async function listApiKeys(db: Db, workspaceId: string) {
  const keys = await db.apiKey.findMany({
    where: { workspaceId },
    select: { id: true, name: true, prefix: true, role: true, readOnly: true, pipelines: true, scopePrefix: true, lastUsedAt: true, revokedAt: true, createdAt: true, createdById: true },
    orderBy: { createdAt: "desc" },
  });
  const creatorIds = [...new Set(keys.map((k) => k.createdById))];
  const [users, memberships] = await Promise.all([
    db.user.findMany({ where: { id: { in: creatorIds } }, select: { id: true, name: true, email: true } }),
    db.membership.findMany({ where: { workspaceId, userId: { in: creatorIds } }, select: { userId: true, role: true } }),
  ]);
  return Promise.all(
    keys.map(async ({ createdById, ...k }) => {
      const creatorRole = memberships.find((m) => m.userId === createdById)?.role;
      const member = creatorRole !== undefined && isRole(creatorRole) && isRole(k.role);
      return {
        ...k,
        pipelines: await pipelineNames(db, k.pipelines),
        createdBy: users.find((u) => u.id === createdById) ?? null,
        effectiveRole: member ? lowerRole(k.role as Role, creatorRole) : null,
        status: k.revokedAt ? ("revoked" as const) : member ? ("active" as const) : ("inactive" as const),
      };
    }),
  );
}

export async function revokeApiKey(db: Db, workspaceId: string, keyId: string) {
  const result = await db.apiKey.updateMany({
    where: { id: keyId, workspaceId, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (result.count === 0) throw notFound("That API key does not exist or is already revoked.");
  clearRequestCaches();
  return { revoked: keyId };
}

/**
 * Resolves a Bearer token to its key, on every request (tRPC, REST, MCP, uploads: all through
 * createContext): null when unknown, revoked, or its creator is no longer a member of the key's
 * workspace. `role` is what the key acts as now: its own role capped at its creator's current role.
 */
export async function authenticateApiKey(db: Db, secret: string) {
  if (!secret.startsWith(KEY_PREFIX)) return null;
  const hash = `${dbTag(db)}\n${sha256Hex(secret)}`;
  // Live keys are cached for at most a second (request-context.ts); unknown ones are not kept.
  const key = await liveKeys.get(hash, () => resolveLiveApiKey(db, sha256Hex(secret)));
  if (!key) liveKeys.delete(hash);
  if (!key || !isRole(key.role) || !isRole(key.creatorRole)) return null;
  await recordUse(db, key.id);
  const restrictions: KeyRestrictions = { readOnly: key.readOnly, pipelineIds: key.pipelines, scopePrefix: key.scopePrefix };
  return { id: key.id, workspaceId: key.workspaceId, role: lowerRole(key.role, key.creatorRole), createdById: key.createdById, name: key.name, restrictions };
}

// Per process (server/core/process-state.ts): one cache and one stamp clock for every module copy.
const liveKeys = processState("api-keys.liveKeys", () => new TtlCache<LiveKeyRow | null>(requestCacheMs()));
registerRequestCache(liveKeys);
const STAMP_EVERY_MS = 60_000;
const stampedAt = processState("api-keys.stampedAt", () => new Map<string, number>());

/** `lastUsedAt` at most once a minute per key: a read path that writes serialises a key's callers on its row. */
async function recordUse(db: Db, keyId: string) {
  const now = Date.now();
  if (now - (stampedAt.get(keyId) ?? -Infinity) < STAMP_EVERY_MS) return;
  stampedAt.set(keyId, now);
  if (stampedAt.size > 10_000) stampedAt.clear();
  await stampApiKeyUse(db, keyId);
}

/**
 * Runs have no scope filter: every run computes the pending work of every scope of the pipeline.
 * A scope-limited key may start an incremental run (the same work its own ingest already requests
 * when a session closes), never a full recompute (`full`), and may cancel only a run it started
 * itself (`triggeredBy` is `apiKey:<id>`): other runs carry other scopes' work.
 */
export function assertRunAllowedToScopedKey(r: KeyRestrictions | null, what: { options: { full?: boolean } } | { run: { id: string; triggeredBy: string | null }; by: string }) {
  if (!r?.scopePrefix) return;
  if ("options" in what && what.options.full) {
    throw forbidden(`This API key is limited to scope "${r.scopePrefix}": a full run recomputes every scope; start an incremental run (without full).`);
  }
  if ("run" in what && what.run.triggeredBy !== what.by) {
    throw forbidden(`This API key is limited to scope "${r.scopePrefix}": it may cancel only runs it started, and run ${what.run.id} computes every scope.`);
  }
}

/** File uploads write whole exports whose scopes the key cannot vouch for: read-only and scope-limited keys may not. */
export function assertMayUpload(r: KeyRestrictions) {
  if (r.readOnly) throw forbidden("This API key is read-only: uploads need pipelines:write.");
  if (r.scopePrefix) throw forbidden(`This API key is limited to scope "${r.scopePrefix}": file uploads (which carry their own scopes) are not available to it.`);
}
