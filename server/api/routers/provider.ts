import { z } from "zod";
import { planWithCost } from "../../services/cost";
import { availableProviders } from "../../services/provider-check";
import * as providers from "../../services/providers";
import { createTRPCRouter, pipelineProcedure, workspaceProcedure } from "../trpc";

const runOptions = z.object({
  steps: z.array(z.string()).optional(),
  from: z.string().optional(),
  full: z.boolean().optional(),
});

/** Settings → Models: providers (keys are write-only), the pricing table, and plans with cost. */
export const providerRouter = createTRPCRouter({
  list: workspaceProcedure("workspace:read").query(({ ctx }) => providers.listProviders(ctx.db, ctx.workspace.id)),
  upsert: workspaceProcedure("providers:manage")
    .input(providers.upsertProviderInput)
    .mutation(({ ctx, input }) => providers.upsertProvider(ctx.db, ctx.workspace.id, input)),
  delete: workspaceProcedure("providers:manage")
    .input(z.object({ name: z.string() }))
    .mutation(({ ctx, input }) => providers.deleteProvider(ctx.db, ctx.workspace.id, input.name)),
  testConnection: workspaceProcedure("providers:manage")
    .input(z.object({ name: z.string(), model: z.string().optional() }))
    .mutation(({ ctx, input }) => providers.testProviderConnection(ctx.db, ctx.workspace.id, input)),
  /** Provider names runs can call (Settings → Models, env, offline): the canvas checks models against them. */
  available: workspaceProcedure("pipelines:read").query(({ ctx }) => availableProviders(ctx.db, ctx.workspace.id)),
  prices: workspaceProcedure("workspace:read").query(({ ctx }) => providers.listPrices(ctx.db, ctx.workspace.id)),
  setPrice: workspaceProcedure("providers:manage")
    .input(providers.setPriceInput)
    .mutation(({ ctx, input }) => providers.setPrice(ctx.db, ctx.workspace.id, input)),
  resetPrice: workspaceProcedure("providers:manage")
    .input(z.object({ model: z.string() }))
    .mutation(({ ctx, input }) => providers.resetPrice(ctx.db, ctx.workspace.id, input.model)),
  planCost: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .input(z.object({ options: runOptions.default({}) }))
    .query(({ ctx, input }) => planWithCost(ctx.db, ctx.pipeline.id, ctx.branch.name, input.options)),
});
