import { z } from "zod";
import * as apiKeys from "../../services/api-keys";
import { createTRPCRouter, workspaceProcedure } from "../trpc";
import { actorId } from "./member";

export const apiKeyRouter = createTRPCRouter({
  list: workspaceProcedure("apiKeys:manage").query(({ ctx }) => apiKeys.listApiKeys(ctx.db, ctx.workspace.id)),
  create: workspaceProcedure("apiKeys:manage")
    .input(apiKeys.createApiKeyInput)
    .mutation(({ ctx, input }) =>
      apiKeys.createApiKey(ctx.db, ctx.workspace.id, { userId: actorId(ctx), role: ctx.role }, input),
    ),
  revoke: workspaceProcedure("apiKeys:manage")
    .input(z.object({ keyId: z.string() }))
    .mutation(({ ctx, input }) => apiKeys.revokeApiKey(ctx.db, ctx.workspace.id, input.keyId)),
});
