import { z } from "zod";
import { canAssignRole, isRole, type Role } from "../auth/permissions";
import { randomToken, sha256Hex } from "../auth/secrets";
import type { Db, DbTx } from "../core/db";
import { badRequest, forbidden, notFound } from "../core/errors";
import { assertNotMember, outranks, roleSchema } from "./workspaces";

export const createInviteInput = z.object({
  role: roleSchema.default("editor"),
  expiresInDays: z.number().int().min(1).max(30).default(7),
});

export async function createInvite(
  db: Db,
  workspaceId: string,
  /** The member who invites (for an API key, the member who made the key): their invites end with their role. */
  actor: { userId: string; role: Role },
  input: z.input<typeof createInviteInput>,
) {
  const { role, expiresInDays } = createInviteInput.parse(input);
  if (!canAssignRole(actor.role, role)) throw forbidden(`Your role cannot invite people as ${role}.`);
  const token = randomToken(24);
  const invite = await db.invite.create({
    data: {
      workspaceId,
      role,
      tokenHash: sha256Hex(token),
      createdById: actor.userId,
      expiresAt: new Date(Date.now() + expiresInDays * 86_400_000),
    },
  });
  // The token is returned once; only its hash is stored.
  return { id: invite.id, role: invite.role, expiresAt: invite.expiresAt, token };
}

/** The user an invite's `createdById` names: a user id, or `apikey:<id>` (older invites made with a key) for that key's member. */
async function creatorUserIds(db: DbTx, createdByIds: string[]): Promise<Map<string, string>> {
  const keyIds = createdByIds.filter((c) => c.startsWith("apikey:")).map((c) => c.slice("apikey:".length));
  const keys = keyIds.length ? await db.apiKey.findMany({ where: { id: { in: keyIds } }, select: { id: true, createdById: true } }) : [];
  return new Map(createdByIds.map((c) => [c, c.startsWith("apikey:") ? (keys.find((k) => `apikey:${k.id}` === c)?.createdById ?? "") : c]));
}

/** Live invites, each with who made it (null when that account no longer exists). */
export async function listInvites(db: Db, workspaceId: string) {
  const invites = await db.invite.findMany({
    where: { workspaceId, acceptedAt: null, revokedAt: null, expiresAt: { gt: new Date() } },
    select: { id: true, role: true, expiresAt: true, createdAt: true, createdById: true },
    orderBy: { createdAt: "desc" },
  });
  const creators = await creatorUserIds(db, [...new Set(invites.map((i) => i.createdById))]);
  const users = await db.user.findMany({ where: { id: { in: [...new Set(creators.values())] } }, select: { id: true, email: true, name: true } });
  return invites.map(({ createdById, ...invite }) => ({ ...invite, createdBy: users.find((u) => u.id === creators.get(createdById)) ?? null }));
}

export async function revokeInvite(db: Db, workspaceId: string, inviteId: string) {
  const result = await db.invite.updateMany({
    where: { id: inviteId, workspaceId, acceptedAt: null, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (result.count === 0) throw notFound("That invite does not exist or was already used or revoked.");
  return { revoked: inviteId };
}

const NOT_VALID = "This invite link is not valid. Ask for a new one.";

/**
 * Whether the invite's creator still holds at least the role it grants in its workspace. Leaving,
 * removal and demotion revoke such invites (server/services/workspaces.ts); this answers the same
 * for one whose creator lost the role by any other path.
 */
async function creatorStillGrants(db: DbTx, invite: { workspaceId: string; createdById: string; role: string }): Promise<boolean> {
  const userId = (await creatorUserIds(db, [invite.createdById])).get(invite.createdById);
  if (!userId || !isRole(invite.role)) return false;
  const membership = await db.membership.findUnique({ where: { workspaceId_userId: { workspaceId: invite.workspaceId, userId } }, select: { role: true } });
  return !!membership && isRole(membership.role) && !outranks(invite.role, membership.role);
}

async function usableInvite(db: DbTx, token: string) {
  const invite = await db.invite.findUnique({ where: { tokenHash: sha256Hex(token) }, include: { workspace: true } });
  if (!invite || invite.revokedAt) throw notFound(NOT_VALID);
  if (invite.acceptedAt) throw badRequest("This invite link was already used. Ask for a new one.");
  if (invite.expiresAt.getTime() <= Date.now()) throw badRequest("This invite link has expired. Ask for a new one.");
  // Answered as a revoked invite: its creator no longer grants what it grants.
  if (!(await creatorStillGrants(db, invite))) throw notFound(NOT_VALID);
  return invite;
}

/** What the invite page shows before accepting. */
export async function previewInvite(db: Db, token: string) {
  const invite = await usableInvite(db, token);
  return { workspaceName: invite.workspace.name, role: invite.role as Role, expiresAt: invite.expiresAt };
}

export async function acceptInvite(db: Db, token: string, userId: string) {
  return db.$transaction(async (tx) => {
    const invite = await usableInvite(tx, token);
    await assertNotMember(tx, invite.workspaceId, userId);
    // Conditional update: two concurrent accepts cannot both succeed.
    // Nor can an accept and the revocation of the invite (its creator removed meanwhile).
    const claimed = await tx.invite.updateMany({
      where: { id: invite.id, acceptedAt: null, revokedAt: null },
      data: { acceptedAt: new Date(), acceptedById: userId },
    });
    if (claimed.count !== 1) {
      const now = await tx.invite.findUnique({ where: { id: invite.id }, select: { revokedAt: true } });
      if (!now || now.revokedAt) throw notFound(NOT_VALID);
      throw badRequest("This invite link was already used. Ask for a new one.");
    }
    await tx.membership.create({ data: { workspaceId: invite.workspaceId, userId, role: invite.role } });
    return { workspaceId: invite.workspaceId, slug: invite.workspace.slug, role: invite.role as Role };
  });
}
