import { z } from "zod";
import * as apiKeys from "../../services/api-keys";
import { createTRPCRouter, workspaceProcedure } from "../trpc";

export const apiKeyRouter = createTRPCRouter({
  list: workspaceProcedure("apiKeys:manage").query(({ ctx }) => apiKeys.listApiKeys(ctx.db, ctx.workspace.id)),
  create: workspaceProcedure("apiKeys:manage")
    .meta({
      audit: {
        action: "apiKey.create",
        target: (_input, key) => `apiKey:${(key as { id: string }).id}`,
        // Never the secret: the name, role and restrictions.
        summary: (input, out) => {
          const key = out as { role: string; readOnly: boolean; pipelines: string[]; scopePrefix: string | null };
          return { name: input.name, role: key.role, readOnly: key.readOnly, pipelines: key.pipelines, scopePrefix: key.scopePrefix };
        },
      },
    })
    .input(apiKeys.createApiKeyInput)
    // A key made with a key belongs to the member that key belongs to: their removal or demotion reaches both.
    .mutation(({ ctx, input }) =>
      apiKeys.createApiKey(ctx.db, ctx.workspace.id, { userId: ctx.actor.kind === "apiKey" ? ctx.actor.createdById : ctx.actor.userId, role: ctx.role }, input),
    ),
  revoke: workspaceProcedure("apiKeys:manage")
    .meta({ audit: { action: "apiKey.revoke", target: (input) => `apiKey:${String(input.keyId)}` } })
    .input(z.object({ keyId: z.string() }))
    .mutation(({ ctx, input }) => apiKeys.revokeApiKey(ctx.db, ctx.workspace.id, input.keyId)),
});
