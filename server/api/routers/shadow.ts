import { z } from "zod";
import { shadowReport, shadowState } from "../../eval/shadow-report";
import { SHADOW_MAX_MINUTES, shadowsOf, startShadow, stopShadow, type ShadowRow } from "../../services/shadow";
import { actorRef, createTRPCRouter, pipelineProcedure } from "../trpc";
import { comparisonShape, comparisonSummaryShape } from "./comparison-schemas";

const shadowSchema = z.object({
  id: z.string(),
  branch: z.string(),
  state: z.enum(["running", "scheduled", "ended", "stopped"]),
  startsAt: z.date(),
  endsAt: z.date(),
  stoppedAt: z.date().nullable(),
  stopReason: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.date(),
  answered: z.number().int(),
  failed: z.number().int(),
  dropped: z.number().int().meta({ description: "Copies dropped because the shadow queue was full: the live response never waits for the shadow." }),
  lastError: z.string().nullable(),
});
const view = (s: ShadowRow) => ({ ...s, state: shadowState(s) });
const auditTarget = (input: Record<string, unknown>) => `pipeline:${String(input.pipelineId)}/branch:${String(input.branch ?? "main")}`;

/**
 * Shadow traffic (issue 37): a branch answers copies of main's live queries in the background for a
 * period; its report is replay's. Setting it needs workspace:update (like the query log's settings),
 * reading the report log:read (like replay).
 */
export const shadowRouter = createTRPCRouter({
  start: pipelineProcedure("workspace:update")
    .meta({ audit: { action: "shadow.start", target: auditTarget, summary: (_input, out) => ({ shadowId: (out as { id: string }).id, startsAt: (out as { startsAt: Date }).startsAt, endsAt: (out as { endsAt: Date }).endsAt }) } })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/shadow", summary: "Set a branch to answer copies of main's live queries for a period (start, end or minutes; default 24 h)", tag: "Query log" } })
    .input(
      z.object({
        startsAt: z.coerce.date().optional().meta({ description: "Start (ISO date-time); default now." }),
        endsAt: z.coerce.date().optional().meta({ description: "End (ISO date-time); or give minutes." }),
        minutes: z.number().int().min(1).max(SHADOW_MAX_MINUTES).optional().meta({ description: "Duration from the start, in minutes (default 1440)." }),
      }),
    )
    .output(shadowSchema)
    .mutation(async ({ ctx, input }) => view(await startShadow(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name, actor: actorRef(ctx.actor), startsAt: input.startsAt, endsAt: input.endsAt, minutes: input.minutes }))),
  stop: pipelineProcedure("workspace:update")
    .meta({ audit: { action: "shadow.stop", target: auditTarget, summary: (_input, out) => ({ shadowId: (out as { id: string }).id, answered: (out as { answered: number }).answered }) } })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/shadow/stop", summary: "Stop a branch's shadow traffic (its report stays)", tag: "Query log" } })
    .output(shadowSchema)
    .mutation(async ({ ctx }) => view(await stopShadow(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name }))),
  list: pipelineProcedure("log:read")
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/shadow", summary: "The pipeline's shadows, newest first: branch, period, state, counters", tag: "Query log" } })
    .output(z.array(shadowSchema))
    .query(async ({ ctx }) => (await shadowsOf(ctx.db, ctx.workspace.id, ctx.pipeline.id)).map(view)),
  report: pipelineProcedure("log:read")
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/shadow/report", summary: "A branch's shadow report against main: overlap@k, RBO, gained/lost, latency, citation recall, paired intervals", tag: "Query log" } })
    .input(z.object({ id: z.string().min(1).max(200).optional().meta({ description: "A shadow's id; default the branch's latest." }), limit: z.coerce.number().int().min(0).max(500).default(50) }))
    .output(
      z.object({
        shadow: shadowSchema.nullable(),
        failed: z.number().int(),
        queries: z.array(
          z.object({
            id: z.string(),
            at: z.date(),
            kind: z.string(),
            query: z.string(),
            scope: z.string().nullable(),
            error: z.string().nullable(),
            ...comparisonShape,
          }),
        ),
        summary: z.object({
          ...comparisonSummaryShape,
        }),
      }),
    )
    .query(({ ctx, input }) => shadowReport(ctx.db, ctx.workspace.id, ctx.pipeline.id, { id: input.id, branch: ctx.branch.name, limit: input.limit })),
});
