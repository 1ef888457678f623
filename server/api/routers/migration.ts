import { z } from "zod";
import { migrationReport } from "../../eval/migration-report";
import { MAX_REPLAY } from "../../eval/replay";
import * as migrations from "../../services/migrations";
import { createTRPCRouter, pipelineProcedure } from "../trpc";

const branchTarget = (input: Record<string, unknown>) => `pipeline:${String(input.pipelineId)}/branch:${String(input.branch ?? "main")}`;
const binding = {
  template: z.string().min(1).max(100).meta({ description: "The template to try (e.g. synapsis)." }),
  bind: z
    .record(z.string().min(1).max(64), z.string().min(1).max(64))
    .optional()
    .meta({ description: "Template source → pipeline source, overriding the binding proposed by format (e.g. { \"sessions\": \"chats\" })." }),
  model: z.string().min(1).max(200).optional().meta({ description: "provider/model for the template's prompt steps; default: the model main's prompt steps use." }),
};

/**
 * "Try another architecture" (issue 50): a candidate branch on another template over the same raw
 * records, its plan, its migration report against main, then promote (main kept, restorable) or
 * walk away. `branch` (pipelineProcedure's input) is the candidate; `main` is the baseline.
 */
export const migrationRouter = createTRPCRouter({
  /** The binding a candidate would use (refused, with the formats, when the template reads none of the sources). */
  preview: pipelineProcedure("pipelines:read")
    .input(z.object(binding))
    .query(({ ctx, input }) => migrations.previewMigration(ctx.db, ctx.pipeline.id, input)),
  create: pipelineProcedure("branches:write")
    .meta({
      audit: {
        action: "migration.create",
        target: (input) => `pipeline:${String(input.pipelineId)}/branch:${String(input.name)}`,
        summary: (input, out) => ({ template: input.template, bindings: (out as { bindings: unknown }).bindings, model: (out as { model: string }).model }),
      },
    })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/migrations", summary: "Try another architecture: a branch of main on a template, bound to the pipeline's sources (every raw record shared), with its plan and cost", tag: "Branches" } })
    .input(z.object({ name: z.string().min(1).max(64).meta({ description: "The candidate branch's name." }), ...binding }))
    .mutation(({ ctx, input }) =>
      migrations.createCandidate(ctx.db, ctx.pipeline.id, { name: input.name, template: input.template, bind: input.bind, model: input.model, createdById: ctx.userId }),
    ),
  /** What a run of the candidate computes, its cost, and what it reuses. */
  plan: pipelineProcedure("pipelines:read").query(({ ctx }) => migrations.migrationPlan(ctx.db, ctx.pipeline.id, ctx.branch.name)),
  /** The candidate against main: question sets, replay (runs the logged queries again), shadow, cost. */
  report: pipelineProcedure("log:read")
    .meta({
      audit: {
        action: "migration.report",
        target: branchTarget,
        summary: (input, out) => ({ judgeModel: input.judgeModel ?? null, metrics: (out as { metrics: unknown[] }).metrics.length }),
      },
    })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/migrations/report", summary: "The migration report: a candidate branch against main on the team's question sets, replayed and shadow traffic, per metric with 95% intervals, cost, latency and what got worse", tag: "Branches" } })
    .input(
      z.object({
        baseline: z.string().min(1).max(200).default("main"),
        questionSet: z.string().min(1).max(200).optional().meta({ description: "A question set (id or name); default the newest scored on both branches." }),
        replay: z.boolean().default(true).meta({ description: "Replay the logged queries (false: leave replay out)." }),
        sample: z.number().int().min(1).max(MAX_REPLAY).optional(),
        seed: z.number().int().optional(),
        judgeModel: z.string().min(1).max(200).optional().meta({ description: "provider/model asked which side's context answers better; omitted: preference not measured." }),
        budgetUsd: z.number().positive().max(1000).optional(),
        limit: z.number().int().min(0).max(500).default(50).meta({ description: "Worse questions and queries listed." }),
      }),
    )
    .mutation(({ ctx, input }) =>
      migrationReport(ctx.db, {
        workspaceId: ctx.workspace.id,
        pipelineId: ctx.pipeline.id,
        branch: ctx.branch.name,
        baseline: input.baseline,
        questionSet: input.questionSet,
        replay: input.replay ? { sample: input.sample, seed: input.seed, judgeModel: input.judgeModel, budgetUsd: input.budgetUsd } : false,
        limit: input.limit,
      }),
    ),
  promote: pipelineProcedure("branches:promote")
    .meta({ audit: { action: "migration.promote", target: branchTarget, summary: (_input, out) => ({ kept: (out as { kept: string }).kept, version: (out as { version: { hash: string } }).version.hash }) } })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/migrations/promote", summary: "Promote a candidate into main; the previous main is kept as a branch (previous/<candidate>), restorable in one action", tag: "Branches" } })
    .input(z.object({ message: z.string().max(500).default("") }))
    .mutation(({ ctx, input }) => migrations.promoteCandidate(ctx.db, ctx.pipeline, { branch: ctx.branch.name, role: ctx.role, userId: ctx.userId, message: input.message })),
  /** Main as it was before a promotion: the kept branch's spec and records, nothing recomputed. */
  restore: pipelineProcedure("branches:promote")
    .meta({ audit: { action: "migration.restore", target: (input) => `pipeline:${String(input.pipelineId)}/branch:main`, summary: (input) => ({ kept: input.kept }) } })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/migrations/restore", summary: "Restore main from a kept branch (previous/<candidate>): its spec and records, nothing recomputed", tag: "Branches" } })
    .input(z.object({ kept: z.string().min(1).max(200).meta({ description: "The kept branch, e.g. previous/try-synapsis." }) }))
    .mutation(({ ctx, input }) => migrations.restorePrevious(ctx.db, ctx.pipeline, { kept: input.kept, role: ctx.role, userId: ctx.userId })),
  /** Kept copies of main, newest first. */
  kept: pipelineProcedure("pipelines:read").query(({ ctx }) => migrations.keptMains(ctx.db, ctx.pipeline.id)),
  /** Walk away: delete the candidate (records stay until gc), with what gc would reclaim. */
  walkAway: pipelineProcedure("branches:write")
    .meta({ audit: { action: "migration.walkAway", target: branchTarget, summary: (_input, out) => ({ pointersRemoved: (out as { pointersRemoved: number }).pointersRemoved }) } })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/migrations/walk-away", summary: "Walk away from a candidate: delete the branch (its records stay until gc), with what gc would reclaim", tag: "Branches" } })
    .mutation(({ ctx }) => migrations.walkAway(ctx.db, ctx.pipeline.id, ctx.branch.name)),
});
