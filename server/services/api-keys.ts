import { z } from "zod";
import { canAssignRole, type Role } from "../auth/permissions";
import { randomToken, sha256Hex } from "../auth/secrets";
import type { Db } from "../core/db";
import { forbidden, notFound } from "../core/errors";
import { roleSchema } from "./workspaces";

const KEY_PREFIX = "sx_";

export const createApiKeyInput = z.object({
  name: z.string().trim().min(1, "Give the key a name.").max(80),
  role: roleSchema.default("editor"),
});

export async function createApiKey(
  db: Db,
  workspaceId: string,
  actor: { userId: string; role: Role },
  input: z.input<typeof createApiKeyInput>,
) {
  const { name, role } = createApiKeyInput.parse(input);
  if (!canAssignRole(actor.role, role)) throw forbidden(`Your role cannot create a key with role ${role}.`);
  const secret = `${KEY_PREFIX}${randomToken(30)}`;
  const key = await db.apiKey.create({
    data: { workspaceId, name, role, prefix: secret.slice(0, 10), keyHash: sha256Hex(secret), createdById: actor.userId },
  });
  // The only time the secret leaves the server.
  return { id: key.id, name: key.name, role: key.role, prefix: key.prefix, createdAt: key.createdAt, secret };
}

export async function listApiKeys(db: Db, workspaceId: string) {
  return db.apiKey.findMany({
    where: { workspaceId },
    select: { id: true, name: true, prefix: true, role: true, lastUsedAt: true, revokedAt: true, createdAt: true },
    orderBy: { createdAt: "desc" },
  });
}

export async function revokeApiKey(db: Db, workspaceId: string, keyId: string) {
  const result = await db.apiKey.updateMany({
    where: { id: keyId, workspaceId, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (result.count === 0) throw notFound("That API key does not exist or is already revoked.");
  return { revoked: keyId };
}

/** Resolves a Bearer token to its key; null when unknown or revoked. */
export async function authenticateApiKey(db: Db, secret: string) {
  if (!secret.startsWith(KEY_PREFIX)) return null;
  const key = await db.apiKey.findUnique({ where: { keyHash: sha256Hex(secret) } });
  if (!key || key.revokedAt) return null;
  await db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date() } });
  return { id: key.id, workspaceId: key.workspaceId, role: key.role as Role, name: key.name };
}
