/**
 * Reading eval runs and cases: the runs list (a pipeline's Evals tab with the template runs it is
 * compared with), one run with its JSON columns parsed, one case with its retrieved records, and
 * the judge as a table shows it. Every read is within the workspace.
 */
import type { Prisma } from "../generated/prisma/client";
import type { Db } from "../core/db";
import { notFound } from "../core/errors";
import { evalLabel, runNames, runVersion } from "./run-labels";
import { evalCostSchema, evidenceSchema, judgeRecordSchema, latencySchema, loadSkipsSchema, metricsSchema, perCategorySchema, storedHitsSchema } from "./stored";

const RUN_LIST_SELECT = {
  id: true,
  pipelineId: true,
  template: true,
  branch: true,
  benchmark: true,
  datasetId: true,
  step: true,
  mode: true,
  k: true,
  status: true,
  error: true,
  questions: true,
  metrics: true,
  cost: true,
  latency: true,
  progress: true,
  model: true,
  judge: true,
  specHash: true,
  versionId: true,
  createdAt: true,
  finishedAt: true,
} as const;

/**
 * Eval runs, newest first. With `pipelineId` and `withTemplates`, the pipeline's runs plus the
 * template runs on the datasets it was scored on (all template runs before its first eval): the
 * rows a pipeline's Evals tab compares, in one list so one poll follows every run in progress.
 */
export async function listEvalRuns(db: Db, workspaceId: string, filter: { pipelineId?: string; benchmark?: string; withTemplates?: boolean } = {}) {
  let scope: Prisma.EvalRunWhereInput = filter.pipelineId ? { pipelineId: filter.pipelineId } : {};
  if (filter.pipelineId && filter.withTemplates) {
    const datasets = await db.evalRun.findMany({ where: { workspaceId, pipelineId: filter.pipelineId }, distinct: ["datasetId"], select: { datasetId: true } });
    const templates: Prisma.EvalRunWhereInput = datasets.length ? { template: { not: null }, datasetId: { in: datasets.map((d) => d.datasetId) } } : { template: { not: null } };
    scope = { OR: [{ pipelineId: filter.pipelineId }, templates] };
  }
  const runs = await db.evalRun.findMany({
    where: { workspaceId, ...scope, ...(filter.benchmark ? { benchmark: filter.benchmark } : {}) },
    orderBy: { createdAt: "desc" },
    take: 200,
    select: RUN_LIST_SELECT,
  });
  const names = await runNames(db, workspaceId, runs);
  return runs.map((r) => ({ ...r, metrics: metricsSchema.parse(r.metrics), judge: judgeSummary(r.judge), label: evalLabel(r, names), version: runVersion(r, names) }));
}

/** What a runs table or compare view shows of the judge: measured or why not, by which models, what it cost (no prompts). */
export function judgeSummary(stored: unknown) {
  const parsed = judgeRecordSchema.safeParse(stored);
  // A row still queued before the judge config was stored reads as "{}".
  if (!parsed.success) return { measured: false, reason: "no judge configuration was recorded with this run" };
  const { measured, reason, answerModel, judgeModel, budgetUsd, spentUsd, judged, garbage, failed, overBudget } = parsed.data;
  return { measured, reason, answerModel, judgeModel, budgetUsd, spentUsd, judged, garbage, failed, overBudget };
}

export async function getEvalRun(db: Db, workspaceId: string, id: string) {
  const run = await db.evalRun.findFirst({ where: { id, workspaceId }, omit: { aggregates: true } });
  if (!run) throw notFound(`Eval run ${id} not found.`);
  const names = await runNames(db, workspaceId, [run]);
  return {
    ...run,
    metrics: metricsSchema.parse(run.metrics),
    perCategory: perCategorySchema.parse(run.perCategory),
    skips: loadSkipsSchema.parse(run.skips),
    judge: judgeRecordSchema.parse(run.judge),
    cost: evalCostSchema.parse(run.cost ?? {}),
    latency: latencySchema.parse(run.latency ?? {}),
    label: evalLabel(run, names),
    version: runVersion(run, names),
  };
}

/** One case with its retrieved records (ids of records in the eval copy: open them with record.lineage). */
export async function getEvalCase(db: Db, workspaceId: string, id: string) {
  const c = await db.evalCase.findFirst({ where: { id, workspaceId } });
  if (!c) throw notFound(`Eval case ${id} not found.`);
  const run = await db.evalRun.findFirstOrThrow({ where: { id: c.evalRunId, workspaceId }, select: { evalPipelineId: true, branch: true } });
  return { ...c, scores: metricsSchema.parse(c.scores), retrieved: storedHitsSchema.parse(c.retrieved), evidence: evidenceSchema.parse(c.evidence), evalPipelineId: run.evalPipelineId, branch: run.branch };
}
