import { z } from "zod";
import * as invites from "../../services/invites";
import * as workspaces from "../../services/workspaces";
import { createTRPCRouter, publicProcedure, userProcedure, workspaceProcedure } from "../trpc";

/** The member acting: the signed-in person, or the member who made the API key (an invite made with a key is theirs, and ends with their role). */
const actorId = (ctx: { userId: string | null; actor: { kind: string } & Record<string, unknown> }) =>
  ctx.userId ?? String(ctx.actor.createdById);

export const memberRouter = createTRPCRouter({
  list: workspaceProcedure("members:read").query(({ ctx }) => workspaces.listMembers(ctx.db, ctx.workspace.id)),
  changeRole: workspaceProcedure("members:manage")
    // Demoting revokes the member's live invites that outrank the new role, in the same transaction.
    .meta({
      audit: {
        action: "member.changeRole",
        target: (input) => `member:${String(input.memberId)}`,
        summary: (input, out) => ({ role: input.role, invitesRevoked: (out as { invitesRevoked: number }).invitesRevoked }),
      },
    })
    .input(z.object({ memberId: z.string(), role: z.string() }))
    .mutation(({ ctx, input }) =>
      workspaces.changeMemberRole(ctx.db, ctx.workspace.id, ctx.role, input.memberId, input.role),
    ),
  remove: workspaceProcedure("members:manage")
    .meta({
      audit: {
        action: "member.remove",
        target: (input) => `member:${String(input.memberId)}`,
        // Removing revokes the member's API keys and live invites in the same transaction.
        summary: (_input, out) => ({ keysRevoked: (out as { keysRevoked: number }).keysRevoked, invitesRevoked: (out as { invitesRevoked: number }).invitesRevoked }),
      },
    })
    .input(z.object({ memberId: z.string() }))
    .mutation(({ ctx, input }) => workspaces.removeMember(ctx.db, ctx.workspace.id, ctx.role, input.memberId)),
});

export const inviteRouter = createTRPCRouter({
  list: workspaceProcedure("members:manage").query(({ ctx }) => invites.listInvites(ctx.db, ctx.workspace.id)),
  create: workspaceProcedure("members:manage")
    .meta({ audit: { action: "invite.create", target: (_input, out) => `invite:${(out as { id: string }).id}`, summary: (input) => ({ role: input.role }) } })
    .input(invites.createInviteInput)
    .mutation(({ ctx, input }) =>
      invites.createInvite(ctx.db, ctx.workspace.id, { userId: actorId(ctx), role: ctx.role }, input),
    ),
  revoke: workspaceProcedure("members:manage")
    .meta({ audit: { action: "invite.revoke", target: (input) => `invite:${String(input.inviteId)}` } })
    .input(z.object({ inviteId: z.string() }))
    .mutation(({ ctx, input }) => invites.revokeInvite(ctx.db, ctx.workspace.id, input.inviteId)),
  preview: publicProcedure
    .input(z.object({ token: z.string().min(1) }))
    .query(({ ctx, input }) => invites.previewInvite(ctx.db, input.token)),
  accept: userProcedure
    // The invite's token never: only who joined with which role.
    .meta({
      audit: {
        action: "member.join",
        workspaceId: (_input, out) => (out as { workspaceId: string }).workspaceId,
        target: (_input, _out, actor) => actor,
        summary: (_input, out) => ({ role: (out as { role: string }).role }),
      },
    })
    .input(z.object({ token: z.string().min(1) }))
    .mutation(({ ctx, input }) => invites.acceptInvite(ctx.db, input.token, ctx.user.userId)),
});

export { actorId };
