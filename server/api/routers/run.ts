import { z } from "zod";
import * as runs from "../../services/runs";
import { withRunStats } from "../../store/runs";
import { createTRPCRouter, pipelineProcedure, workspaceProcedure } from "../trpc";

const runOptions = z.object({
  steps: z.array(z.string()).optional(),
  from: z.string().optional(),
  full: z.boolean().optional(),
  replay: z.boolean().optional(),
});

export const runRouter = createTRPCRouter({
  plan: pipelineProcedure("pipelines:read")
    .input(z.object({ options: runOptions.default({}) }))
    .query(({ ctx, input }) => runs.planPipeline(ctx.db, ctx.pipeline.id, ctx.branch.name, input.options)),
  start: pipelineProcedure("runs:write")
    .input(z.object({ options: runOptions.default({}) }))
    .mutation(async ({ ctx, input }) =>
      withRunStats(
        await runs.startRun(ctx.db, {
          workspaceId: ctx.workspace.id,
          pipelineId: ctx.pipeline.id,
          branch: ctx.branch.name,
          options: input.options,
          triggeredBy: ctx.userId,
        }),
      ),
    ),
  list: pipelineProcedure("pipelines:read").query(async ({ ctx }) => (await runs.listRuns(ctx.db, ctx.workspace.id, ctx.pipeline.id)).map(withRunStats)),
  get: workspaceProcedure("pipelines:read")
    .input(z.object({ runId: z.string() }))
    .query(async ({ ctx, input }) => withRunStats(await runs.getRun(ctx.db, ctx.workspace.id, input.runId))),
  cancel: workspaceProcedure("runs:write")
    .input(z.object({ runId: z.string() }))
    .mutation(({ ctx, input }) => runs.cancelRun(ctx.db, ctx.workspace.id, input.runId)),
});
