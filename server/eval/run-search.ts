/**
 * The runs a comparison can take in: any eval run of the workspace that ended (completed, or failed
 * — it shows as a row with its reason), found by the words of its pipeline or template, branch,
 * dataset or question set, or its id. Every word must match one of those (so "memex main" is the
 * memex pipeline's main branch); newest first. What the Compare page's "Add a run" picker lists.
 */
import type { Db } from "../core/db";
import type { Prisma } from "../generated/prisma/client";
import { evalLabel, runNames, runVersion } from "./run-labels";

export const RUN_SEARCH_STATUSES = ["completed", "failed"] as const;
export const MAX_RUN_SEARCH = 50;

export async function searchEvalRuns(db: Db, workspaceId: string, input: { query?: string; limit?: number } = {}) {
  const words = (input.query ?? "").trim().split(/\s+/).filter(Boolean).slice(0, 6);
  const take = Math.min(Math.max(1, Math.floor(input.limit ?? 20)), MAX_RUN_SEARCH);
  const insensitive = (w: string) => ({ contains: w, mode: "insensitive" as const });
  // Per word: the pipelines, datasets and question sets it names (their ids), then the runs.
  const perWord = await Promise.all(
    words.map(async (w): Promise<Prisma.EvalRunWhereInput> => {
      const [pipelines, datasets, sets] = await Promise.all([
        db.pipeline.findMany({ where: { workspaceId, evalOfId: null, name: insensitive(w) }, select: { id: true }, take: 200 }),
        db.evalDataset.findMany({ where: { workspaceId, OR: [{ name: insensitive(w) }, { benchmark: insensitive(w) }] }, select: { id: true }, take: 200 }),
        db.evalQuestionSet.findMany({ where: { workspaceId, name: insensitive(w) }, select: { id: true }, take: 200 }),
      ]);
      return {
        OR: [
          { id: w },
          { template: insensitive(w) },
          { branch: insensitive(w) },
          { mode: insensitive(w) },
          { pipelineId: { in: pipelines.map((p) => p.id) } },
          { datasetId: { in: [...datasets, ...sets].map((d) => d.id) } },
        ],
      };
    }),
  );
  const runs = await db.evalRun.findMany({
    where: { workspaceId, status: { in: [...RUN_SEARCH_STATUSES] }, AND: perWord },
    orderBy: { createdAt: "desc" },
    take,
    select: { id: true, pipelineId: true, template: true, branch: true, versionId: true, specHash: true, datasetId: true, benchmark: true, mode: true, step: true, status: true, error: true, questions: true, createdAt: true },
  });
  const datasetIds = [...new Set(runs.map((r) => r.datasetId))];
  const [names, datasets, sets] = await Promise.all([
    runNames(db, workspaceId, runs),
    db.evalDataset.findMany({ where: { workspaceId, id: { in: datasetIds } }, select: { id: true, name: true } }),
    db.evalQuestionSet.findMany({ where: { workspaceId, id: { in: datasetIds } }, select: { id: true, name: true } }),
  ]);
  const datasetNames = new Map([...datasets, ...sets].map((d) => [d.id, d.name]));
  return runs.map((r) => ({ ...r, label: evalLabel(r, names), version: runVersion(r, names), datasetName: datasetNames.get(r.datasetId) ?? r.datasetId }));
}
