import { z } from "zod";
import { clearRequestCaches } from "./request-context";
import { canAssignRole, isRole, type Role, ROLES } from "../auth/permissions";
import { randomToken } from "../auth/secrets";
import type { Db, DbTx } from "../core/db";
import { badRequest, conflict, forbidden, notFound } from "../core/errors";

export const workspaceNameSchema = z
  .string()
  .trim()
  .min(1, "Workspace name is required.")
  .max(80, "Workspace name must be at most 80 characters.");
export const roleSchema = z.enum(ROLES);

function slugify(name: string): string {
  const base = name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return base || "workspace";
}

/** What members see of a workspace: never its webhook signing secret, only whether one exists. */
export interface WorkspaceView {
  id: string;
  slug: string;
  name: string;
  personal: boolean;
  createdAt: Date;
  hasWebhookSecret: boolean;
}

export function workspaceView(ws: { id: string; slug: string; name: string; personal: boolean; createdAt: Date; webhookSecret: string | null }): WorkspaceView {
  return { id: ws.id, slug: ws.slug, name: ws.name, personal: ws.personal, createdAt: ws.createdAt, hasWebhookSecret: ws.webhookSecret !== null };
}

export async function createWorkspaceInTx(tx: DbTx, userId: string, input: { name: string; personal?: boolean }) {
  const name = workspaceNameSchema.parse(input.name);
  // A short random suffix keeps slugs unique without a retry loop.
  const slug = `${slugify(name)}-${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, "").slice(0, 5) || "x"}`;
  const workspace = await tx.workspace.create({ data: { name, slug, personal: input.personal ?? false } });
  await tx.membership.create({ data: { workspaceId: workspace.id, userId, role: "owner" } });
  return workspace;
}

export async function createWorkspace(db: Db, userId: string, input: { name: string }): Promise<WorkspaceView> {
  return workspaceView(await db.$transaction((tx) => createWorkspaceInTx(tx, userId, input)));
}

export async function listWorkspacesForUser(db: Db, userId: string) {
  const memberships = await db.membership.findMany({
    where: { userId },
    include: { workspace: true },
    orderBy: { createdAt: "asc" },
  });
  return memberships.map((m) => ({ ...workspaceView(m.workspace), role: m.role as Role }));
}

export async function renameWorkspace(db: Db, workspaceId: string, name: string): Promise<WorkspaceView> {
  return workspaceView(await db.workspace.update({ where: { id: workspaceId }, data: { name: workspaceNameSchema.parse(name) } }));
}

/** Members with the number of live API keys each made (removing a member revokes them). */
export async function listMembers(db: Db, workspaceId: string) {
  const [members, keys] = await Promise.all([
    db.membership.findMany({
      where: { workspaceId },
      include: { user: { select: { id: true, email: true, name: true } } },
      orderBy: { createdAt: "asc" },
    }),
    db.apiKey.groupBy({ by: ["createdById"], where: { workspaceId, revokedAt: null }, _count: { _all: true } }),
  ]);
  return members.map((m) => ({ id: m.id, role: m.role as Role, createdAt: m.createdAt, user: m.user, apiKeys: keys.find((k) => k.createdById === m.userId)?._count._all ?? 0 }));
}

async function ownerCount(tx: DbTx, workspaceId: string) {
  return tx.membership.count({ where: { workspaceId, role: "owner" } });
}

export async function changeMemberRole(db: Db, workspaceId: string, actorRole: Role, memberId: string, role: string) {
  if (!isRole(role)) throw badRequest(`Unknown role "${role}". Use one of: ${ROLES.join(", ")}.`);
  return db.$transaction(async (tx) => {
    const member = await tx.membership.findFirst({ where: { id: memberId, workspaceId } });
    if (!member) throw notFound("That member is not in this workspace.");
    if (!canAssignRole(actorRole, role) || (member.role === "owner" && actorRole !== "owner")) {
      throw forbidden("Only an owner can grant or take away the owner role.");
    }
    if (member.role === "owner" && role !== "owner" && (await ownerCount(tx, workspaceId)) <= 1) {
      throw badRequest("A workspace needs at least one owner. Make someone else owner first.");
    }
    const updated = await tx.membership.update({ where: { id: member.id }, data: { role } });
    return { ...updated, invitesRevoked: await revokeInvitesAbove(tx, workspaceId, member.userId, role) };
  }).finally(clearRequestCaches);
}

/** Whether role `a` ranks above role `b` (ROLES runs from most to least: owner > admin > editor > viewer). */
export function outranks(a: Role, b: Role): boolean {
  return ROLES.indexOf(a) < ROLES.indexOf(b);
}

/**
 * The ids an invite's `createdById` names its member by: the user's id, and `apikey:<id>` of each
 * key the user made (invites made with a key before they were attributed to the key's member).
 */
async function inviteCreatorRefs(tx: DbTx, workspaceId: string, userId: string): Promise<string[]> {
  const keys = await tx.apiKey.findMany({ where: { workspaceId, createdById: userId }, select: { id: true } });
  return [userId, ...keys.map((k) => `apikey:${k.id}`)];
}

/**
 * An invite grants at most what its creator holds: when a member leaves, is removed (`role` null)
 * or is demoted, the live invites they made that grant more than they now hold are revoked, in the
 * transaction of that change (accepting an invite checks its creator again: server/services/invites.ts).
 * How many were revoked.
 */
async function revokeInvitesAbove(tx: DbTx, workspaceId: string, userId: string, role: Role | null): Promise<number> {
  const above = role === null ? ROLES : ROLES.filter((r) => outranks(r, role));
  if (!above.length) return 0;
  const { count } = await tx.invite.updateMany({
    where: { workspaceId, createdById: { in: await inviteCreatorRefs(tx, workspaceId, userId) }, role: { in: [...above] }, acceptedAt: null, revokedAt: null, expiresAt: { gt: new Date() } },
    data: { revokedAt: new Date() },
  });
  return count;
}

/**
 * A member's API keys end with their membership: revoked in the same transaction that removes them
 * (authentication also refuses a key whose creator is no longer a member). How many were live.
 */
async function revokeMemberKeys(tx: DbTx, workspaceId: string, userId: string): Promise<number> {
  const { count } = await tx.apiKey.updateMany({ where: { workspaceId, createdById: userId, revokedAt: null }, data: { revokedAt: new Date() } });
  return count;
}

export async function removeMember(db: Db, workspaceId: string, actorRole: Role, memberId: string) {
  return db.$transaction(async (tx) => {
    const member = await tx.membership.findFirst({ where: { id: memberId, workspaceId } });
    if (!member) throw notFound("That member is not in this workspace.");
    if (member.role === "owner" && actorRole !== "owner") throw forbidden("Only an owner can remove an owner.");
    if (member.role === "owner" && (await ownerCount(tx, workspaceId)) <= 1) {
      throw badRequest("You cannot remove the last owner of a workspace.");
    }
    await tx.membership.delete({ where: { id: member.id } });
    const invitesRevoked = await revokeInvitesAbove(tx, workspaceId, member.userId, null);
    return { removed: member.id, keysRevoked: await revokeMemberKeys(tx, workspaceId, member.userId), invitesRevoked };
  }).finally(clearRequestCaches);
}

export async function leaveWorkspace(db: Db, workspaceId: string, userId: string) {
  return db.$transaction(async (tx) => {
    const member = await tx.membership.findUnique({ where: { workspaceId_userId: { workspaceId, userId } } });
    if (!member) throw notFound("You are not a member of this workspace.");
    if (member.role === "owner" && (await ownerCount(tx, workspaceId)) <= 1) {
      throw badRequest("You are the last owner: make someone else owner before leaving.");
    }
    await tx.membership.delete({ where: { id: member.id } });
    const invitesRevoked = await revokeInvitesAbove(tx, workspaceId, userId, null);
    return { left: workspaceId, keysRevoked: await revokeMemberKeys(tx, workspaceId, userId), invitesRevoked };
  }).finally(clearRequestCaches);
}

export async function assertNotMember(tx: DbTx, workspaceId: string, userId: string) {
  const existing = await tx.membership.findUnique({ where: { workspaceId_userId: { workspaceId, userId } } });
  if (existing) throw conflict("You are already a member of this workspace.");
}
