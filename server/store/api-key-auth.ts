/**
 * API keys belong to the member who made them: a Bearer token resolves to its key together with its
 * creator's current membership of the key's workspace, in one read (the hash is unique, the
 * membership a primary-key probe on `(workspaceId, userId)`). A revoked key, or one whose creator is
 * no longer a member, matches nothing. Reads never write: `lastUsedAt` is stamped separately, at
 * most once a minute per key (`stampApiKeyUse`), so concurrent requests of one key do not queue on
 * its row lock. `ApiKey.lastUsedAt` is a Prisma `timestamp(3)` holding UTC, hence `now() AT TIME ZONE 'UTC'`.
 */
import type { DbTx } from "../core/db";

export interface LiveKeyRow {
  id: string;
  workspaceId: string;
  name: string;
  role: string;
  readOnly: boolean;
  pipelines: string[];
  scopePrefix: string | null;
  createdById: string;
  /** The creator's role in the key's workspace now (not when the key was made). */
  creatorRole: string;
}

export async function resolveLiveApiKey(db: DbTx, keyHash: string): Promise<LiveKeyRow | null> {
  const rows = await db.$queryRawUnsafe<LiveKeyRow[]>(
    `SELECT k.id, k."workspaceId", k.name, k.role, k."readOnly", k.pipelines, k."scopePrefix", k."createdById", m.role AS "creatorRole"
     FROM "ApiKey" AS k JOIN "Membership" AS m ON m."workspaceId" = k."workspaceId" AND m."userId" = k."createdById"
     WHERE k."keyHash" = $1 AND k."revokedAt" IS NULL`,
    keyHash,
  );
  return rows[0] ?? null;
}

/** Records that the key was used now, unless it was within the last minute (then nothing is written). */
export async function stampApiKeyUse(db: DbTx, keyId: string): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE "ApiKey" SET "lastUsedAt" = (now() AT TIME ZONE 'UTC')
     WHERE id = $1 AND ("lastUsedAt" IS NULL OR "lastUsedAt" < (now() AT TIME ZONE 'UTC') - interval '1 minute')`,
    keyId,
  );
}
