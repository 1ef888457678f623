import { z } from "zod";
import { canAssignRole, type Role } from "../auth/permissions";
import { randomToken, sha256Hex } from "../auth/secrets";
import type { Db } from "../core/db";
import { badRequest, forbidden, notFound } from "../core/errors";
import { assertNotMember, roleSchema } from "./workspaces";

export const createInviteInput = z.object({
  role: roleSchema.default("editor"),
  expiresInDays: z.number().int().min(1).max(30).default(7),
});

export async function createInvite(
  db: Db,
  workspaceId: string,
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

export async function listInvites(db: Db, workspaceId: string) {
  return db.invite.findMany({
    where: { workspaceId, acceptedAt: null, revokedAt: null, expiresAt: { gt: new Date() } },
    select: { id: true, role: true, expiresAt: true, createdAt: true },
    orderBy: { createdAt: "desc" },
  });
}

export async function revokeInvite(db: Db, workspaceId: string, inviteId: string) {
  const result = await db.invite.updateMany({
    where: { id: inviteId, workspaceId, acceptedAt: null, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (result.count === 0) throw notFound("That invite does not exist or was already used or revoked.");
  return { revoked: inviteId };
}

async function usableInvite(db: Pick<Db, "invite">, token: string) {
  const invite = await db.invite.findUnique({ where: { tokenHash: sha256Hex(token) }, include: { workspace: true } });
  if (!invite || invite.revokedAt) throw notFound("This invite link is not valid. Ask for a new one.");
  if (invite.acceptedAt) throw badRequest("This invite link was already used. Ask for a new one.");
  if (invite.expiresAt.getTime() <= Date.now()) throw badRequest("This invite link has expired. Ask for a new one.");
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
    const claimed = await tx.invite.updateMany({
      where: { id: invite.id, acceptedAt: null },
      data: { acceptedAt: new Date(), acceptedById: userId },
    });
    if (claimed.count !== 1) throw badRequest("This invite link was already used. Ask for a new one.");
    await tx.membership.create({ data: { workspaceId: invite.workspaceId, userId, role: invite.role } });
    return { workspaceId: invite.workspaceId, slug: invite.workspace.slug, role: invite.role as Role };
  });
}
