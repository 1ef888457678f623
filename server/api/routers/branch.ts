import { z } from "zod";
import * as branches from "../../services/branches";
import { createTRPCRouter, pipelineProcedure } from "../trpc";

const name = z.string().min(1).max(200);
const branchTarget = (input: Record<string, unknown>) => `pipeline:${String(input.pipelineId)}/branch:${String(input.branch ?? "main")}`;

/**
 * Branches of one pipeline. `branch` (pipelineProcedure's input) is the branch acted on: the one
 * to diff against `against`, to promote, or to delete.
 */
export const branchRouter = createTRPCRouter({
  list: pipelineProcedure("pipelines:read").query(async ({ ctx }) => ({
    branches: await branches.listBranches(ctx.db, ctx.pipeline.id),
    protectedMain: ctx.pipeline.protectedMain,
  })),
  create: pipelineProcedure("branches:write")
    .meta({
      audit: {
        action: "branch.create",
        target: (input) => `pipeline:${String(input.pipelineId)}/branch:${String(input.name)}`,
        summary: (input) => ({ from: input.from ?? input.branch ?? "main" }),
      },
    })
    .input(z.object({ name: z.string().max(200), from: name.optional(), description: z.string().max(2000).default("") }))
    .mutation(({ ctx, input }) =>
      branches.createBranch(ctx.db, ctx.pipeline.id, { name: input.name, from: input.from ?? ctx.branch.name, description: input.description, createdById: ctx.userId }),
    ),
  diff: pipelineProcedure("pipelines:read")
    .input(z.object({ against: name.default(branches.MAIN) }))
    .query(({ ctx, input }) => branches.diffBranches(ctx.db, ctx.pipeline.id, input.against, ctx.branch.name)),
  /** Records of one step the two branches make differently from the same inputs, with a content diff each. */
  pairs: pipelineProcedure("pipelines:read")
    .input(
      z.object({
        against: name.default(branches.MAIN),
        step: name,
        groupKey: z.string().max(2000).optional(),
        cursor: z.string().max(2000).nullish(),
        limit: z.number().int().min(1).max(100).default(20),
      }),
    )
    .query(({ ctx, input }) =>
      branches.recordPairs(ctx.db, ctx.pipeline.id, { a: input.against, b: ctx.branch.name, step: input.step, groupKey: input.groupKey, cursor: input.cursor, limit: input.limit }),
    ),
  promote: pipelineProcedure("branches:promote")
    .meta({ audit: { action: "branch.promote", target: branchTarget, summary: (input) => ({ message: input.message ?? "" }) } })
    .input(z.object({ message: z.string().max(500).default("") }))
    .mutation(({ ctx, input }) =>
      branches.promoteBranch(ctx.db, ctx.pipeline, { branch: ctx.branch.name, role: ctx.role, userId: ctx.userId, message: input.message }),
    ),
  promotions: pipelineProcedure("pipelines:read").query(({ ctx }) => branches.listPromotions(ctx.db, ctx.pipeline.id)),
  delete: pipelineProcedure("branches:write")
    .meta({ audit: { action: "branch.delete", target: branchTarget } })
    .mutation(({ ctx }) => branches.deleteBranch(ctx.db, ctx.pipeline.id, ctx.branch.name)),
  /** Records no branch reaches: `dryRun` (any editor) reports, a real run (admins) deletes. */
  gc: pipelineProcedure("branches:write")
    .meta({
      audit: {
        action: "branch.gc",
        target: (input) => `pipeline:${String(input.pipelineId)}`,
        summary: (input, out) => ({ dryRun: input.dryRun ?? true, deleted: (out as { deleted?: number }).deleted ?? 0 }),
      },
    })
    .input(z.object({ dryRun: z.boolean().default(true) }))
    .mutation(({ ctx, input }) => {
      if (!input.dryRun) branches.assertMayCollectGarbage(ctx.role);
      return branches.collectGarbage(ctx.db, ctx.pipeline.id, { dryRun: input.dryRun });
    }),
  setProtection: pipelineProcedure("branches:admin")
    .meta({ audit: { action: "branch.setProtection", target: (input) => `pipeline:${String(input.pipelineId)}/branch:main`, summary: (input) => ({ protectedMain: input.protectedMain }) } })
    .input(z.object({ protectedMain: z.boolean() }))
    .mutation(({ ctx, input }) => branches.setProtectedMain(ctx.db, ctx.pipeline.id, input.protectedMain)),
});
