/**
 * Phase 1 of an eval: the memory it searches. A benchmark's sessions become the eval copy's
 * sources and its branch is built incrementally (records are content-addressed, so an unchanged
 * spec computes nothing, and a current build is reused as it is); a team's question set searches
 * the pipeline's own memory, only (re)indexed.
 */
import type { Db } from "../core/db";
import type { ModelProvider } from "../engine/model";
import { indexPipeline } from "../search/indexing";
import { appendSourceRecords, getBranch } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { getDataset } from "./dataset-store";
import { sourceItems } from "./eval-copy";
import type { EvalBuilt, EvalControl, EvalRunRow } from "./phase";
import { QUESTION_SET_BENCHMARK } from "./question-sets";

/**
 * Builds what an eval searches. A benchmark: its sessions become the eval copy's sources, which is
 * then built incrementally (computing only what is missing) and indexed. A team's question set:
 * the pipeline branch's own memory is only (re)indexed. Idempotent, so a retried phase computes nothing new.
 */
export async function buildEval(db: Db, run: EvalRunRow, model: ModelProvider | undefined, { progress, checkCancel }: EvalControl): Promise<EvalBuilt> {
  // Every search mode reads the index (fts its BM25 postings and statistics), as after a normal run;
  // bm25 and walk rank in memory.
  const index = () => (run.mode !== "bm25" && run.mode !== "walk" ? indexPipeline(db, run.evalPipelineId, run.branch, { workspaceId: run.workspaceId }) : Promise.resolve());
  if (run.benchmark === QUESTION_SET_BENCHMARK) {
    progress({ phase: "build", done: 0, total: 1 }, true);
    await index();
    progress({ phase: "build", done: 1, total: 1 }, true);
    return { buildRunId: null, sourcesAdded: 0 };
  }
  const { dataset } = await getDataset(db, run.workspaceId, run.datasetId);
  const head = await getBranch(db, run.evalPipelineId, run.branch);
  const spec = head.spec;

  // 1. Sources: idempotent (content-addressed), so an unchanged dataset adds nothing.
  const items = sourceItems(dataset);
  progress({ phase: "ingest", done: 0, total: items.length }, true);
  const appended = await appendSourceRecords(db, run.evalPipelineId, spec.sources[0]!.name, items);
  progress({ phase: "ingest", done: items.length, total: items.length }, true);
  await checkCancel();

  // 2. Build: an incremental run of the copy's branch (computes only what is missing) — none at all
  // when the branch's last run completed on this spec and no source came since: what an earlier
  // eval of the same template or branch on the same data built is searched as it is.
  progress({ phase: "build", done: 0, total: spec.steps.length }, true);
  const reused = appended.added === 0 ? await reusableBuild(db, run.evalPipelineId, head.branch.id, head.version.hash) : null;
  if (reused) {
    await index();
    progress({ phase: "build", done: spec.steps.length, total: spec.steps.length }, true);
    return { buildRunId: null, sourcesAdded: 0, reusedRunId: reused };
  }
  const built = await runPipeline(db, { workspaceId: run.workspaceId, pipelineId: run.evalPipelineId, branch: run.branch, triggeredBy: `eval:${run.id}` }, { model, afterRun: false });
  if (built.status !== "completed") throw new Error(`The pipeline run of the eval copy ${built.status}${built.error ? `: ${built.error.replace(/[.\s]+$/, "")}` : ""}.`);
  await index();
  progress({ phase: "build", done: spec.steps.length, total: spec.steps.length }, true);
  return { buildRunId: built.id, sourcesAdded: appended.added };
}

/** The branch's last pipeline run, when it completed on a version of this spec (its build is current). */
async function reusableBuild(db: Db, pipelineId: string, branchId: string, hash: string): Promise<string | null> {
  const last = await db.run.findFirst({ where: { pipelineId, branchId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: { id: true, status: true, versionId: true } });
  if (last?.status !== "completed") return null;
  const version = await db.pipelineVersion.findUnique({ where: { id: last.versionId }, select: { hash: true } });
  return version?.hash === hash ? last.id : null;
}
