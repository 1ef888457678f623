/**
 * API keys belong to the member who made them: a Bearer token resolves to its key together with its
 * creator's current membership of the key's workspace, in one statement (the hash is unique, the
 * membership a primary-key probe on `(workspaceId, userId)`). A revoked key, or one whose creator is
 * no longer a member, matches nothing; a key that matches has its `lastUsedAt` stamped in the same
 * statement. `ApiKey.lastUsedAt` is a Prisma `timestamp(3)` holding UTC, hence `now() AT TIME ZONE 'UTC'`.
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
    `UPDATE "ApiKey" AS k SET "lastUsedAt" = (now() AT TIME ZONE 'UTC')
     FROM "Membership" AS m
     WHERE k."keyHash" = $1 AND k."revokedAt" IS NULL AND m."workspaceId" = k."workspaceId" AND m."userId" = k."createdById"
     RETURNING k.id, k."workspaceId", k.name, k.role, k."readOnly", k.pipelines, k."scopePrefix", k."createdById", m.role AS "creatorRole"`,
    keyHash,
  );
  return rows[0] ?? null;
}
