import { z } from "zod";
import { rotateWebhookSecret } from "../../services/webhooks";
import * as workspaces from "../../services/workspaces";
import { recordAudit } from "../../services/audit";
import { actorRef, authedProcedure, createTRPCRouter, userProcedure, workspaceProcedure } from "../trpc";

export const workspaceRouter = createTRPCRouter({
  /** The workspace an API key belongs to (agents and the CLI's --url mode start here). */
  current: authedProcedure.query(async ({ ctx }) => {
    if (ctx.actor.kind !== "apiKey") return null;
    return ctx.db.workspace.findUnique({ where: { id: ctx.actor.workspaceId }, select: { id: true, slug: true, name: true } });
  }),
  list: userProcedure.query(({ ctx }) => workspaces.listWorkspacesForUser(ctx.db, ctx.user.userId)),
  create: userProcedure
    .input(z.object({ name: workspaces.workspaceNameSchema }))
    .mutation(({ ctx, input }) => workspaces.createWorkspace(ctx.db, ctx.user.userId, input)),
  get: workspaceProcedure("workspace:read").query(({ ctx }) => ({ ...workspaces.workspaceView(ctx.workspace), role: ctx.role })),
  /** Owners and admins: a new webhook signing secret, shown in this answer only. */
  rotateWebhookSecret: workspaceProcedure("workspace:update").mutation(({ ctx }) => rotateWebhookSecret(ctx.db, ctx.workspace.id)),
  rename: workspaceProcedure("workspace:update")
    .input(z.object({ name: z.string() }))
    .mutation(({ ctx, input }) => workspaces.renameWorkspace(ctx.db, ctx.workspace.id, input.name)),
  leave: userProcedure
    .input(z.object({ workspaceId: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const left = await workspaces.leaveWorkspace(ctx.db, input.workspaceId, ctx.user.userId);
      await recordAudit(ctx.db, { workspaceId: input.workspaceId, actor: actorRef(ctx.user), action: "member.leave", target: `user:${ctx.user.userId}`, summary: { keysRevoked: left.keysRevoked } });
      return left;
    }),
});
