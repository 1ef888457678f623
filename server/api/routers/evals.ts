import { z } from "zod";
import { cancelEvalRun, createEvalRun, dispatchEvalRun, MAX_K } from "../../eval/service";
import { importDataset, listDatasets } from "../../eval/dataset-store";
import { getEvalCase, getEvalRun, listEvalRuns } from "../../eval/run-reads";
import { compareEvalRuns } from "../../eval/compare";
import * as questionSets from "../../eval/question-sets";
import { evalLeaderboard, MAX_LEADERBOARD_RUNS } from "../../eval/leaderboard-rows";
import { retryEvalRun } from "../../eval/retry";
import { MAX_RUN_SEARCH, searchEvalRuns } from "../../eval/run-search";
import { EVAL_MODES, EVAL_TEMPLATES, evalTemplate } from "../../eval/templates";
import { BENCHMARKS } from "../../eval/types";
import { getPipeline } from "../../services/pipelines";
import { compareCharts } from "../../eval/compare-charts";
import { COST_AXES, OUTCOME_METRICS } from "../../eval/compare-kinds";
import { compareQuestions, questionDrilldown } from "../../eval/compare-questions";
import { METRIC_NAMES } from "../../eval/metrics";
import { createTRPCRouter, workspaceProcedure } from "../trpc";

const evalTarget = (input: Record<string, unknown>, out: unknown) => `eval:${String(input.id ?? (out as { id?: string }).id)}`;
const setTarget = (input: Record<string, unknown>, out: unknown) => `questionSet:${String(input.setId ?? (out as { set?: { id: string } }).set?.id)}`;

export const evalsRouter = createTRPCRouter({
  templates: workspaceProcedure("evals:read").query(() =>
    EVAL_TEMPLATES.map((name) => {
      const def = evalTemplate(name);
      return { name, description: def.description, step: def.step ?? null, mode: def.mode, offlineStandIn: def.offlineStandIn };
    }),
  ),
  datasets: workspaceProcedure("evals:read").query(({ ctx }) => listDatasets(ctx.db, ctx.workspace.id)),
  /** Imports a benchmark file (its text) or generates SynthexBench; the same content twice is one dataset. */
  importDataset: workspaceProcedure("evals:write")
    .meta({
      audit: {
        action: "eval.importDataset",
        target: (_input, out) => `dataset:${(out as { id: string }).id}`,
        summary: (input, out) => ({ benchmark: input.benchmark, name: (out as { name: string }).name, questions: (out as { questions: number }).questions }),
      },
    })
    .input(
      z.object({
        benchmark: z.enum(BENCHMARKS),
        text: z.string().optional(),
        name: z.string().max(200).optional(),
        seed: z.number().int().optional(),
        size: z.enum(["tiny", "small", "medium", "large"]).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const row = await importDataset(ctx.db, ctx.workspace.id, input);
      return { id: row.id, benchmark: row.benchmark, name: row.name, samples: row.samples, questions: row.questions, skips: row.skips, contentHash: row.contentHash };
    }),
  /** Starts an eval in the background; poll `get` for progress. */
  start: workspaceProcedure("evals:write")
    .meta({
      audit: {
        action: "eval.start",
        target: evalTarget,
        summary: (input) => ({
          pipelineId: input.pipelineId ?? null,
          template: input.template ?? null,
          branch: input.branch ?? "main",
          datasetId: input.datasetId ?? null,
          questionSet: input.questionSet ?? null,
          answerModel: input.answerModel ?? null,
          judgeModel: input.judgeModel ?? null,
          budgetUsd: input.budgetUsd ?? null,
        }),
      },
    })
    .input(
      z.object({
        pipelineId: z.string().optional(),
        template: z.enum(EVAL_TEMPLATES).optional(),
        branch: z.string().default("main"),
        /** A benchmark dataset, or a team's question set (id or name): exactly one. */
        datasetId: z.string().optional(),
        questionSet: z.string().optional(),
        step: z.string().optional(),
        mode: z.enum(EVAL_MODES).optional(),
        k: z.number().int().min(1).max(MAX_K).optional(),
        /** `provider/model` answering from the retrieved context; with it the judge score j is measured. */
        answerModel: z.string().max(200).optional(),
        judgeModel: z.string().max(200).optional(),
        budgetUsd: z.number().positive().max(1000).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const run = await createEvalRun(ctx.db, {
        workspaceId: ctx.workspace.id,
        pipeline: input.pipelineId,
        template: input.template,
        branch: input.branch,
        datasetId: input.datasetId,
        questionSet: input.questionSet,
        step: input.step,
        mode: input.mode,
        k: input.k,
        answerModel: input.answerModel,
        judgeModel: input.judgeModel,
        budgetUsd: input.budgetUsd,
        triggeredBy: ctx.userId,
      });
      // In this process or on Inngest; the row always ends completed, failed or cancelled.
      await dispatchEvalRun(ctx.db, run);
      return run;
    }),
  /** A team's own question sets (questions about its memory, with the records that answer them). */
  questionSets: workspaceProcedure("evals:read").query(({ ctx }) => questionSets.listQuestionSets(ctx.db, ctx.workspace.id)),
  questionSet: workspaceProcedure("evals:read")
    .input(z.object({ id: z.string() }))
    .query(({ ctx, input }) => questionSets.getQuestionSet(ctx.db, ctx.workspace.id, input.id)),
  /** "Add to question set" (the explorer): the set is created on first use. */
  addToQuestionSet: workspaceProcedure("evals:write")
    // Ids and counts only: a question (and its answer) may quote memory.
    .meta({ audit: { action: "questionSet.add", target: setTarget, summary: (_input, out) => ({ questionId: (out as { question: { id: string } }).question.id }) } })
    .input(questionSets.addToQuestionSetInput)
    .mutation(({ ctx, input }) => questionSets.addToQuestionSet(ctx.db, ctx.workspace.id, input)),
  removeFromQuestionSet: workspaceProcedure("evals:write")
    .meta({ audit: { action: "questionSet.remove", target: setTarget, summary: (input) => ({ questionId: input.questionId }) } })
    .input(z.object({ setId: z.string(), questionId: z.string() }))
    .mutation(({ ctx, input }) => questionSets.removeFromQuestionSet(ctx.db, ctx.workspace.id, input.setId, input.questionId)),
  renameQuestionSet: workspaceProcedure("evals:write")
    .meta({ audit: { action: "questionSet.rename", target: setTarget, summary: (input) => ({ name: input.name }) } })
    .input(z.object({ setId: z.string(), name: z.string() }))
    .mutation(({ ctx, input }) => questionSets.renameQuestionSet(ctx.db, ctx.workspace.id, input.setId, input.name)),
  /** Deletes a set and its questions (its finished eval runs keep their results). */
  deleteQuestionSet: workspaceProcedure("evals:write")
    .meta({ audit: { action: "questionSet.delete", target: setTarget } })
    .input(z.object({ setId: z.string() }))
    .mutation(({ ctx, input }) => questionSets.deleteQuestionSet(ctx.db, ctx.workspace.id, input.setId)),
  cancel: workspaceProcedure("evals:write")
    .meta({ audit: { action: "eval.cancel", target: evalTarget } })
    .input(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => cancelEvalRun(ctx.db, ctx.workspace.id, input.id)),
  list: workspaceProcedure("evals:read")
    .input(z.object({ pipelineId: z.string().optional(), benchmark: z.string().optional(), withTemplates: z.boolean().optional() }))
    .query(async ({ ctx, input }) => {
      const pipelineId = input.pipelineId ? (await getPipeline(ctx.db, ctx.workspace.id, input.pipelineId)).id : undefined;
      return listEvalRuns(ctx.db, ctx.workspace.id, { pipelineId, benchmark: input.benchmark, withTemplates: input.withTemplates });
    }),
  /** Ended runs (completed or failed) whose pipeline, template, branch, mode or dataset the words name: the compare page's picker. */
  searchRuns: workspaceProcedure("evals:read")
    .input(z.object({ query: z.string().max(200).optional(), limit: z.number().int().min(1).max(MAX_RUN_SEARCH).optional() }))
    .query(({ ctx, input }) => searchEvalRuns(ctx.db, ctx.workspace.id, input)),
  get: workspaceProcedure("evals:read")
    .input(z.object({ id: z.string() }))
    .query(({ ctx, input }) => getEvalRun(ctx.db, ctx.workspace.id, input.id)),
  compare: workspaceProcedure("evals:read")
    .input(z.object({ baselineId: z.string(), otherIds: z.array(z.string()).max(10), questions: z.boolean().default(true) }))
    .query(({ ctx, input }) => compareEvalRuns(ctx.db, ctx.workspace.id, input.baselineId, input.otherIds, input.questions)),
  /** One row per run, the baseline on top, deltas with 95% intervals (server/eval/leaderboard-rows.ts). */
  leaderboard: workspaceProcedure("evals:read")
    .meta({ rest: { method: "GET", path: "/evals/leaderboard", summary: "Eval runs side by side: metrics, deltas to the baseline with 95% intervals, cost and latency", tag: "Evals" } })
    .input(
      z.object({
        runIds: z.array(z.string().min(1).max(100)).min(1).max(MAX_LEADERBOARD_RUNS).meta({ description: "The eval runs to compare (repeat the parameter)." }),
        baselineId: z.string().min(1).max(100).optional().meta({ description: "The baseline run; default a pipeline's main branch, its newest finished run on the dataset; else the strongest real run by session_hit@5 (not a template's offline stand-in). The answer's baselineRule says which applied." }),
      }),
    )
    .query(({ ctx, input }) => evalLeaderboard(ctx.db, ctx.workspace.id, input)),
  /** A new run with the settings of a failed or cancelled one. */
  retry: workspaceProcedure("evals:write")
    .meta({ audit: { action: "eval.retry", target: evalTarget, summary: (input, out) => ({ retried: input.id, newRun: (out as { id: string }).id }) } })
    .input(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => retryEvalRun(ctx.db, ctx.workspace.id, input.id, ctx.userId)),
  case: workspaceProcedure("evals:read")
    .input(z.object({ id: z.string() }))
    .query(({ ctx, input }) => getEvalCase(ctx.db, ctx.workspace.id, input.id)),
  /** The compare page's charts: Pareto points, category deltas, cost per step, history (run rows only). */
  compareCharts: workspaceProcedure("evals:read")
    .input(z.object({ baselineId: z.string(), otherIds: z.array(z.string()).max(11), metric: z.enum(METRIC_NAMES).default("evidence_recall@2k"), cost: z.enum(COST_AXES).default("contextTokens") }))
    .query(({ ctx, input }) => compareCharts(ctx.db, ctx.workspace.id, input)),
  /** The baseline against one other run, question by question: each question in one outcome. */
  compareQuestions: workspaceProcedure("evals:read")
    .input(z.object({ baselineId: z.string(), otherId: z.string(), metric: z.enum(OUTCOME_METRICS).default("session_hit@5") }))
    .query(({ ctx, input }) => compareQuestions(ctx.db, ctx.workspace.id, input)),
  /** One question in several runs: the gold evidence, each run's top hits with the evidence ones marked. */
  question: workspaceProcedure("evals:read")
    .input(z.object({ runIds: z.array(z.string()).min(1).max(12), questionId: z.string(), hits: z.number().int().min(1).max(20).optional() }))
    .query(({ ctx, input }) => questionDrilldown(ctx.db, ctx.workspace.id, input)),
});
