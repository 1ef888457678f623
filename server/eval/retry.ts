/**
 * Retry of an eval that failed or was cancelled: a new run with the same target, dataset and
 * settings (what the leaderboard's Retry button and `synthex eval compare` point to). The failed
 * run stays as it was, with its reason; the new one builds incrementally, so it reuses whatever
 * the failed one had built.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { QUESTION_SET_BENCHMARK } from "./question-sets";
import { createEvalRun, dispatchEvalRun } from "./service";
import { judgeRecordSchema } from "./stored";
import type { EvalMode } from "./templates";

export async function retryEvalRun(db: Db, workspaceId: string, id: string, triggeredBy: string | null) {
  const run = await db.evalRun.findFirst({ where: { id, workspaceId }, omit: { aggregates: true } });
  if (!run) throw notFound(`Eval run ${id} not found.`);
  if (run.status !== "failed" && run.status !== "cancelled") throw badRequest(`Eval run ${id} is ${run.status}: only a failed or cancelled eval can be retried.`);
  const judge = judgeRecordSchema.safeParse(run.judge);
  const measured = judge.success && judge.data.measured ? judge.data : null;
  const created = await createEvalRun(db, {
    workspaceId,
    pipeline: run.pipelineId ?? undefined,
    template: run.template ?? undefined,
    branch: run.branch,
    ...(run.benchmark === QUESTION_SET_BENCHMARK ? { questionSet: run.datasetId } : { datasetId: run.datasetId }),
    step: run.step ?? undefined,
    mode: run.mode as EvalMode,
    k: run.k,
    answerModel: measured?.answerModel,
    judgeModel: measured?.judgeModel,
    budgetUsd: measured?.budgetUsd,
    triggeredBy,
  });
  await dispatchEvalRun(db, created);
  return created;
}
