import { z } from "zod";
import { getPipeline } from "../../services/pipelines";
import { assertProvidersAvailable } from "../../services/provider-check";
import { failureGroups } from "../../services/run-failures";
import * as runs from "../../services/runs";
import { createTRPCRouter, workspaceProcedure } from "../trpc";

const runOptions = z.object({
  steps: z.array(z.string()).optional(),
  from: z.string().optional(),
  full: z.boolean().optional(),
  replay: z.boolean().optional(),
});

export const runRouter = createTRPCRouter({
  plan: workspaceProcedure("pipelines:read")
    .input(z.object({ pipelineId: z.string(), branch: z.string().default("main"), options: runOptions.default({}) }))
    .query(async ({ ctx, input }) => {
      const pipeline = await getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      return runs.planPipeline(ctx.db, pipeline.id, input.branch, input.options);
    }),
  start: workspaceProcedure("runs:write")
    .input(z.object({ pipelineId: z.string(), branch: z.string().default("main"), options: runOptions.default({}) }))
    .mutation(async ({ ctx, input }) => {
      const pipeline = await getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      // A model without a provider would fail every item: refuse before starting.
      await assertProvidersAvailable(ctx.db, ctx.workspace.id, pipeline.id, input.branch);
      return runs.startRun(ctx.db, {
        workspaceId: ctx.workspace.id,
        pipelineId: pipeline.id,
        branch: input.branch,
        options: input.options,
        triggeredBy: ctx.userId,
      });
    }),
  list: workspaceProcedure("pipelines:read")
    .input(z.object({ pipelineId: z.string() }))
    .query(async ({ ctx, input }) => {
      const pipeline = await getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      return runs.listRuns(ctx.db, ctx.workspace.id, pipeline.id);
    }),
  get: workspaceProcedure("pipelines:read")
    .input(z.object({ runId: z.string() }))
    .query(({ ctx, input }) => runs.getRun(ctx.db, ctx.workspace.id, input.runId)),
  /** Failures grouped by step and identical error: count, attempts and one example each. */
  failureGroups: workspaceProcedure("pipelines:read")
    .input(z.object({ runId: z.string() }))
    .query(({ ctx, input }) => failureGroups(ctx.db, ctx.workspace.id, input.runId)),
  cancel: workspaceProcedure("runs:write")
    .input(z.object({ runId: z.string() }))
    .mutation(({ ctx, input }) => runs.cancelRun(ctx.db, ctx.workspace.id, input.runId)),
});
