import { z } from "zod";
import { SOURCE_FORMATS } from "../../pipeline/spec";
import { TEMPLATE_IDS, templateSpec } from "../../pipeline/templates";
import { specSaveSummary } from "../../services/audit";
import { assertMayWriteBranch } from "../../services/branches";
import * as pipelines from "../../services/pipelines";
import { pipelineSummarySchema } from "../schemas";
import { createTRPCRouter, pipelineProcedure, workspaceProcedure } from "../trpc";

export const pipelineRouter = createTRPCRouter({
  /** The template gallery: every architecture "New pipeline" and `synthex init --template` offer. */
  templates: workspaceProcedure("pipelines:read").query(() => pipelines.listTemplates()),
  list: workspaceProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "GET", path: "/pipelines", summary: "List the workspace's pipelines", tag: "Pipelines" } })
    .output(z.array(pipelineSummarySchema))
    .query(async ({ ctx }) => {
      const all = await pipelines.listPipelines(ctx.db, ctx.workspace.id);
      const allowed = ctx.restrictions?.pipelineIds ?? [];
      return allowed.length ? all.filter((p) => allowed.includes(p.id)) : all;
    }),
  create: workspaceProcedure("pipelines:write")
    .meta({
      audit: {
        action: "pipeline.create",
        target: (_input, out) => `pipeline:${(out as { pipeline: { id: string } }).pipeline.id}`,
        summary: (input, out) => ({ name: input.name, template: input.spec === undefined ? (input.template ?? "chat-memory") : "custom", ...specSaveSummary((out as { spec: unknown }).spec, undefined) }),
      },
    })
    .input(
      z.object({
        name: z.string(),
        agent: z.string().max(100).default(""),
        description: z.string().max(2000).default(""),
        template: z.enum(TEMPLATE_IDS).default("chat-memory"),
        format: z.enum(SOURCE_FORMATS).optional(),
        spec: z.unknown().optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      pipelines.createPipeline(ctx.db, ctx.workspace.id, {
        name: input.name,
        agent: input.agent,
        description: input.description,
        spec: input.spec ?? templateSpec(input.template, input.format),
        authorId: ctx.userId,
      }),
    ),
  get: pipelineProcedure("pipelines:read").meta({ keyRestrictions: "enforced" }).query(async ({ ctx }) => {
    const { pipeline, branch, version, spec } = ctx;
    const branches = await ctx.db.branch.findMany({ where: { pipelineId: pipeline.id }, orderBy: { createdAt: "asc" } });
    return { pipeline, branch, version: { ...version, spec }, branches };
  }),
  status: pipelineProcedure("pipelines:read").meta({ keyRestrictions: "enforced" }).query(({ ctx }) => pipelines.stepStatus(ctx.db, ctx.pipeline.id, ctx.branch.name)),
  saveVersion: pipelineProcedure("pipelines:write")
    .meta({
      audit: {
        action: "pipeline.saveVersion",
        target: (input) => `pipeline:${String(input.pipelineId)}/branch:${String(input.branch ?? "main")}`,
        summary: (input, out) => {
          const { version, diff } = out as { version: { id: string; spec: unknown }; diff: Parameters<typeof specSaveSummary>[1] };
          return { versionId: version.id, message: input.message ?? "", ...specSaveSummary(version.spec, diff) };
        },
      },
    })
    .input(z.object({ spec: z.unknown(), layout: z.unknown().optional(), message: z.string().max(500).default("") }))
    .mutation(({ ctx, input }) => {
      assertMayWriteBranch(ctx.pipeline, ctx.branch.name, ctx.role, "save on");
      return pipelines.saveVersion(ctx.db, ctx.pipeline.id, { ...input, authorId: ctx.userId });
    }),
  /** What saving `spec` on the branch would change, with reasons (nothing is saved): `synthex apply` prints it first. */
  previewVersion: pipelineProcedure("pipelines:read")
    .input(z.object({ spec: z.unknown() }))
    .query(({ ctx, input }) => pipelines.previewVersion(ctx.spec, input.spec)),
  versions: pipelineProcedure("pipelines:read").query(({ ctx }) => pipelines.listVersions(ctx.db, ctx.pipeline.id)),
  /** Saves an older version again as the branch's newest (a new version; the history stays whole). */
  restoreVersion: pipelineProcedure("pipelines:write")
    .meta({
      audit: {
        action: "pipeline.restoreVersion",
        target: (input) => `pipeline:${String(input.pipelineId)}/branch:${String(input.branch ?? "main")}`,
        summary: (input, out) => {
          const { version, restoredFrom } = out as { version: { id: string }; restoredFrom: { id: string; hash: string } };
          return { restoredVersionId: restoredFrom.id, restoredHash: restoredFrom.hash, versionId: version.id };
        },
      },
    })
    .input(z.object({ versionId: z.string().min(1).max(200) }))
    .mutation(({ ctx, input }) => {
      assertMayWriteBranch(ctx.pipeline, ctx.branch.name, ctx.role, "save on");
      return pipelines.restoreVersion(ctx.db, ctx.pipeline.id, { versionId: input.versionId, branch: ctx.branch.name, authorId: ctx.userId });
    }),
  diff: pipelineProcedure("pipelines:read")
    .input(z.object({ fromVersionId: z.string(), toVersionId: z.string() }))
    .query(({ ctx, input }) => pipelines.diffVersions(ctx.db, ctx.pipeline.id, input.fromVersionId, input.toVersionId)),
});
