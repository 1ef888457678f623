import { z } from "zod";
import { rotateWebhookSecret } from "../../services/webhooks";
import * as workspaces from "../../services/workspaces";
import { authedProcedure, createTRPCRouter, userProcedure, workspaceProcedure } from "../trpc";

const workspaceTarget = (input: Record<string, unknown>, out: unknown) => `workspace:${String(input.workspaceId ?? (out as { id?: string }).id)}`;

export const workspaceRouter = createTRPCRouter({
  /** The workspace an API key belongs to (agents and the CLI's --url mode start here). */
  current: authedProcedure.query(async ({ ctx }) => {
    if (ctx.actor.kind !== "apiKey") return null;
    return ctx.db.workspace.findUnique({ where: { id: ctx.actor.workspaceId }, select: { id: true, slug: true, name: true } });
  }),
  list: userProcedure.query(({ ctx }) => workspaces.listWorkspacesForUser(ctx.db, ctx.user.userId)),
  create: userProcedure
    .meta({ audit: { action: "workspace.create", workspaceId: (_input, out) => (out as { id: string }).id, target: workspaceTarget, summary: (input) => ({ name: input.name }) } })
    .input(z.object({ name: workspaces.workspaceNameSchema }))
    .mutation(({ ctx, input }) => workspaces.createWorkspace(ctx.db, ctx.user.userId, input)),
  get: workspaceProcedure("workspace:read").query(({ ctx }) => ({ ...workspaces.workspaceView(ctx.workspace), role: ctx.role })),
  /** Owners and admins: a new webhook signing secret, shown in this answer only. */
  rotateWebhookSecret: workspaceProcedure("workspace:update")
    // When and by whom; the secret is only in the answer.
    .meta({ audit: { action: "workspace.rotateWebhookSecret", target: workspaceTarget, summary: () => ({}) } })
    .mutation(({ ctx }) => rotateWebhookSecret(ctx.db, ctx.workspace.id)),
  rename: workspaceProcedure("workspace:update")
    .meta({ audit: { action: "workspace.rename", target: workspaceTarget, summary: (_input, out) => ({ name: (out as { name: string }).name }) } })
    .input(z.object({ name: z.string() }))
    .mutation(({ ctx, input }) => workspaces.renameWorkspace(ctx.db, ctx.workspace.id, input.name)),
  leave: userProcedure
    .meta({
      audit: {
        action: "member.leave",
        workspaceId: (input) => String(input.workspaceId),
        target: (_input, _out, actor) => actor,
        // Leaving revokes the member's API keys and live invites in the same transaction.
        summary: (_input, out) => ({ keysRevoked: (out as { keysRevoked: number }).keysRevoked, invitesRevoked: (out as { invitesRevoked: number }).invitesRevoked }),
      },
    })
    .input(z.object({ workspaceId: z.string() }))
    .mutation(({ ctx, input }) => workspaces.leaveWorkspace(ctx.db, input.workspaceId, ctx.user.userId)),
});
