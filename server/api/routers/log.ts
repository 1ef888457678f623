import { z } from "zod";
import { labelLoggedQuery, MAX_REPLAY, replayQueries } from "../../eval/replay";
import { getQueryLogConfig, listQueryLog, QUERY_KINDS, queryTraffic, setQueryLogConfig } from "../../services/query-log";
import { createTRPCRouter, pipelineProcedure } from "../trpc";
import { comparisonShape, comparisonSummaryShape, intervalSchema } from "./comparison-schemas";

const settingsSchema = z.object({ enabled: z.boolean(), retentionDays: z.number().int(), maxEntries: z.number().int() });
const hitSchema = z.object({ id: z.string(), rank: z.number().int(), score: z.number(), step: z.string() });
const loggedQuerySchema = z.object({
  id: z.string(),
  createdAt: z.date(),
  surface: z.string(),
  kind: z.string(),
  caller: z.string(),
  scope: z.string().nullable(),
  mode: z.string().nullable(),
  params: z.record(z.string(), z.unknown()),
  query: z.string(),
  branch: z.string(),
  versionId: z.string().nullable(),
  hits: z.array(hitSchema),
  cited: z.array(z.string()),
  confidence: z.number().nullable(),
  latencyMs: z.number().int(),
  labelRecordId: z.string().nullable(),
});
const preferenceSchema = z.enum(["branch", "main", "tie"]);
const preferenceSummarySchema = z.discriminatedUnion("measured", [
  z.object({ measured: z.literal(false), reason: z.string() }),
  z.object({
    measured: z.literal(true),
    judgeModel: z.string(),
    prompt: z.string(),
    orders: z.literal("both"),
    budgetUsd: z.number(),
    spentUsd: z.number(),
    calls: z.number().int(),
    branchWins: z.number().int(),
    mainWins: z.number().int(),
    ties: z.number().int(),
    unjudged: z.number().int(),
    overBudget: z.number().int(),
    winRate: z.number().nullable(),
    interval: intervalSchema,
    samples: z.array(z.object({ query: z.string(), reply: z.string() })),
  }),
]);
const window = {
  from: z.coerce.date().optional().meta({ description: "Logged at or after (ISO date-time)." }),
  to: z.coerce.date().optional().meta({ description: "Logged at or before (ISO date-time)." }),
};
const scopePrefix = z.string().max(256).optional().meta({ description: "Only queries asked in this scope or below it." });

/** The query log of a pipeline (issue 37): settings, entries, traffic, replay on a branch, labels. Needs log:read (not given to viewers). */
export const logRouter = createTRPCRouter({
  config: pipelineProcedure("log:read")
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/log/config", summary: "Whether the pipeline's query log is on, its retention and size cap", tag: "Query log" } })
    .output(settingsSchema)
    .query(({ ctx }) => getQueryLogConfig(ctx.db, ctx.pipeline.id)),
  setConfig: pipelineProcedure("workspace:update")
    .meta({
      audit: {
        action: "log.configure",
        target: (input) => `pipeline:${String(input.pipelineId)}`,
        summary: (_input, out) => out as Record<string, unknown>,
      },
    })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/log/config", summary: "Turn the query log on or off; retention in days and a size cap", tag: "Query log" } })
    .input(z.object({ enabled: z.boolean().optional(), retentionDays: z.number().int().optional(), maxEntries: z.number().int().optional() }))
    .output(settingsSchema)
    .mutation(({ ctx, input }) => setQueryLogConfig(ctx.db, ctx.workspace.id, ctx.pipeline.id, { enabled: input.enabled, retentionDays: input.retentionDays, maxEntries: input.maxEntries })),
  list: pipelineProcedure("log:read")
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/log", summary: "Logged queries, newest first: caller, scope, parameters, served ids with ranks and scores, latency", tag: "Query log" } })
    .input(z.object({ ...window, kind: z.enum(QUERY_KINDS).optional(), caller: z.string().max(200).optional(), scope: scopePrefix, limit: z.coerce.number().int().min(1).max(1000).default(100) }))
    .output(z.array(loggedQuerySchema))
    .query(({ ctx, input }) => listQueryLog(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, from: input.from, to: input.to, kind: input.kind, caller: input.caller, scopePrefix: input.scope, limit: input.limit })),
  traffic: pipelineProcedure("log:read")
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/log/traffic", summary: "Queries over time, slowest, most frequent, no-good-match rate, per caller and scope", tag: "Query log" } })
    .input(z.object({ ...window, scope: scopePrefix }))
    .output(
      z.object({
        total: z.number().int(),
        noMatchRate: z.number(),
        perDay: z.array(z.object({ key: z.string(), count: z.number().int(), noMatchRate: z.number(), meanLatencyMs: z.number() })),
        perCaller: z.array(z.object({ key: z.string(), count: z.number().int(), noMatchRate: z.number(), meanLatencyMs: z.number() })),
        callerLabels: z.record(z.string(), z.string()).meta({ description: "A readable name per caller of perCaller: an API key's name and prefix, a person's email." }),
        perScope: z.array(z.object({ key: z.string(), count: z.number().int(), noMatchRate: z.number(), meanLatencyMs: z.number() })),
        frequent: z.array(z.object({ key: z.string(), count: z.number().int(), noMatchRate: z.number(), meanLatencyMs: z.number() })),
        slowest: z.array(loggedQuerySchema),
      }),
    )
    .query(({ ctx, input }) => queryTraffic(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, from: input.from, to: input.to, scopePrefix: input.scope })),
  /** Replays logged searches and asks on `branch` (and on main for reference). */
  replay: pipelineProcedure("log:read")
    .meta({
      audit: {
        action: "log.replay",
        target: (input) => `pipeline:${String(input.pipelineId)}/branch:${String(input.branch ?? "main")}`,
        summary: (_input, out) => {
          const s = (out as { summary: { replayed: number; meanOverlap: number; meanRbo: number } }).summary;
          return { replayed: s.replayed, meanOverlap: s.meanOverlap, meanRbo: s.meanRbo };
        },
      },
    })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/log/replay", summary: "Replay logged queries on a branch against main: overlap@k, RBO, gained/lost, citation recall, paired intervals", tag: "Query log" } })
    .input(
      z.object({
        ...window,
        baseline: z.string().min(1).max(200).default("main"),
        ids: z.array(z.string().min(1).max(200)).max(MAX_REPLAY).optional(),
        sample: z.number().int().min(1).max(MAX_REPLAY).optional(),
        seed: z.number().int().optional(),
        k: z.number().int().min(1).max(50).optional(),
        judgeModel: z.string().min(1).max(200).optional().meta({ description: "provider/model asked per query which context (main's or the branch's top hits) answers better, in both orders; omitted: preference not measured." }),
        budgetUsd: z.number().positive().max(1000).optional().meta({ description: "USD the judge may spend (default 1)." }),
      }),
    )
    .output(
      z.object({
        branch: z.string(),
        baseline: z.string(),
        skipped: z.number().int(),
        texts: z.record(z.string(), z.string()).meta({ description: "Each served record's text (truncated past 600 characters), by record id." }),
        queries: z.array(
          z.object({
            entryId: z.string(),
            kind: z.string(),
            query: z.string(),
            scope: z.string().nullable(),
            ...comparisonShape,
            preference: z.object({ winner: preferenceSchema.nullable(), identical: z.boolean(), verdicts: z.tuple([preferenceSchema.nullable(), preferenceSchema.nullable()]) }).optional(),
            error: z.string().optional(),
          }),
        ),
        summary: z.object({
          ...comparisonSummaryShape,
          preference: preferenceSummarySchema,
        }),
      }),
    )
    .mutation(({ ctx, input }) =>
      replayQueries(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name, baseline: input.baseline, from: input.from, to: input.to, ids: input.ids, sample: input.sample, seed: input.seed, k: input.k, judgeModel: input.judgeModel, budgetUsd: input.budgetUsd }),
    ),
  /** Mark the record that should have come first: the query becomes a question of a question set (the Evals tab scores it). */
  label: pipelineProcedure("log:read")
    .meta({
      audit: {
        action: "log.label",
        target: (input) => `pipeline:${String(input.pipelineId)}/log:${String(input.entryId)}`,
        summary: (_input, out) => ({ recordId: (out as { recordId: string }).recordId, setId: (out as { setId: string }).setId }),
      },
    })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/log/{entryId}/label", summary: "Label a logged query with the record that should have come first (adds it to a question set)", tag: "Query log" } })
    .input(z.object({ entryId: z.string().min(1).max(200), recordId: z.string().min(1).max(200), set: z.string().min(1).max(100).default("from-traffic") }))
    .output(z.object({ entryId: z.string(), recordId: z.string(), setId: z.string(), set: z.string(), questions: z.number().int(), questionId: z.string() }))
    .mutation(({ ctx, input }) => labelLoggedQuery(ctx.db, ctx.workspace.id, { pipelineId: ctx.pipeline.id, entryId: input.entryId, recordId: input.recordId, set: input.set })),
});
