import { z } from "zod";
import * as pipelines from "../../services/pipelines";
import { createTRPCRouter, workspaceProcedure } from "../trpc";

const pipelineRef = z.object({ pipelineId: z.string().min(1) });
const branchRef = pipelineRef.extend({ branch: z.string().default("main") });

export const pipelineRouter = createTRPCRouter({
  list: workspaceProcedure("pipelines:read").query(({ ctx }) => pipelines.listPipelines(ctx.db, ctx.workspace.id)),
  create: workspaceProcedure("pipelines:write")
    .input(
      z.object({
        name: z.string(),
        agent: z.string().max(100).default(""),
        description: z.string().max(2000).default(""),
        template: z.enum(pipelines.PIPELINE_TEMPLATES).default("chat-memory"),
        format: z.enum(["chatgpt-export", "claude-export", "jsonl", "markdown", "text", "json", "folder", "api"]).optional(),
        spec: z.unknown().optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      pipelines.createPipeline(ctx.db, ctx.workspace.id, {
        name: input.name,
        agent: input.agent,
        description: input.description,
        spec: input.spec ?? pipelines.templateSpec(input.template, input.format),
        authorId: ctx.userId,
      }),
    ),
  get: workspaceProcedure("pipelines:read")
    .input(branchRef)
    .query(async ({ ctx, input }) => {
      const pipeline = await pipelines.getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      const { branch, version, spec } = await pipelines.getBranch(ctx.db, pipeline.id, input.branch);
      const branches = await ctx.db.branch.findMany({ where: { pipelineId: pipeline.id }, orderBy: { createdAt: "asc" } });
      return { pipeline, branch, version: { ...version, spec }, branches };
    }),
  status: workspaceProcedure("pipelines:read")
    .input(branchRef)
    .query(async ({ ctx, input }) => {
      const pipeline = await pipelines.getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      return pipelines.stepStatus(ctx.db, pipeline.id, input.branch);
    }),
  saveVersion: workspaceProcedure("pipelines:write")
    .input(branchRef.extend({ spec: z.unknown(), layout: z.unknown().optional(), message: z.string().max(500).default("") }))
    .mutation(async ({ ctx, input }) => {
      const pipeline = await pipelines.getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      return pipelines.saveVersion(ctx.db, pipeline.id, { ...input, authorId: ctx.userId });
    }),
  versions: workspaceProcedure("pipelines:read")
    .input(pipelineRef)
    .query(async ({ ctx, input }) => {
      const pipeline = await pipelines.getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      return pipelines.listVersions(ctx.db, pipeline.id);
    }),
  diff: workspaceProcedure("pipelines:read")
    .input(pipelineRef.extend({ fromVersionId: z.string(), toVersionId: z.string() }))
    .query(async ({ ctx, input }) => {
      const pipeline = await pipelines.getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      return pipelines.diffVersions(ctx.db, pipeline.id, input.fromVersionId, input.toVersionId);
    }),
  createBranch: workspaceProcedure("pipelines:write")
    .input(pipelineRef.extend({ name: z.string(), from: z.string().default("main") }))
    .mutation(async ({ ctx, input }) => {
      const pipeline = await pipelines.getPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      return pipelines.createBranch(ctx.db, pipeline.id, input);
    }),
});
