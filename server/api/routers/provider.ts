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
    .meta({
      audit: {
        action: "provider.upsert",
        target: (input) => `provider:${String(input.name)}`,
        // The key itself never: only whether one was set or removed.
        summary: (input) => ({ kind: input.kind, baseUrl: input.baseUrl ?? null, key: input.apiKey === undefined ? "kept" : input.apiKey === "" ? "removed" : "set" }),
      },
    })
    .input(providers.upsertProviderInput)
    .mutation(({ ctx, input }) => providers.upsertProvider(ctx.db, ctx.workspace.id, input)),
  delete: workspaceProcedure("providers:manage")
    .meta({ audit: { action: "provider.delete", target: (input) => `provider:${String(input.name)}` } })
    .input(z.object({ name: z.string() }))
    .mutation(({ ctx, input }) => providers.deleteProvider(ctx.db, ctx.workspace.id, input.name)),
  testConnection: workspaceProcedure("providers:manage")
    .meta({ audit: { none: "sends one test request with the stored settings; changes nothing" } })
    .input(z.object({ name: z.string(), model: z.string().optional() }))
    .mutation(({ ctx, input }) => providers.testProviderConnection(ctx.db, ctx.workspace.id, input)),
  /** Provider names runs can call (Settings → Models, env, offline): the canvas checks models against them. */
  available: workspaceProcedure("pipelines:read").query(({ ctx }) => availableProviders(ctx.db, ctx.workspace.id)),
  prices: workspaceProcedure("workspace:read").query(({ ctx }) => providers.listPrices(ctx.db, ctx.workspace.id)),
  setPrice: workspaceProcedure("providers:manage")
    .meta({
      audit: { action: "price.set", target: (input) => `model:${String(input.model)}`, summary: (input) => ({ inputPerMillion: input.inputPerMillion, outputPerMillion: input.outputPerMillion }) },
    })
    .input(providers.setPriceInput)
    .mutation(({ ctx, input }) => providers.setPrice(ctx.db, ctx.workspace.id, input)),
  resetPrice: workspaceProcedure("providers:manage")
    .meta({ audit: { action: "price.reset", target: (input) => `model:${String(input.model)}` } })
    .input(z.object({ model: z.string() }))
    .mutation(({ ctx, input }) => providers.resetPrice(ctx.db, ctx.workspace.id, input.model)),
  planCost: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .input(z.object({ options: runOptions.default({}) }))
    .query(({ ctx, input }) => planWithCost(ctx.db, ctx.pipeline.id, ctx.branch.name, input.options)),
});
