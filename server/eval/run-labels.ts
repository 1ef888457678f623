/**
 * What an eval run is called on every screen, export and CLI: a template by its name
 * ("template: mem0"), a team's pipeline by its branch ("memex@main", the label: what a history line
 * follows across versions) and the number of the version that was scored ("v3", shown beside the
 * label; `versionedLabel` joins them for text exports). A pipeline's versions are numbered in the order they were saved (v1 the first),
 * across branches, the way its history lists them; a run whose version is gone (or that predates
 * recorded versions) shows its short spec hash instead ("memex@main #1a2b3c4").
 */
import type { Db } from "../core/db";

export interface LabelledRun {
  pipelineId: string | null;
  template: string | null;
  branch: string;
  versionId: string | null;
  specHash: string;
}

/** Pipeline names, and version numbers by version id. */
export interface RunNames {
  pipelines: Map<string, string>;
  versions: Map<string, number>;
}

/** One read of the runs' pipelines and their versions (ids only), whatever the number of runs. */
export async function runNames(db: Db, workspaceId: string, runs: readonly { pipelineId: string | null }[]): Promise<RunNames> {
  const pipelineIds = [...new Set(runs.map((r) => r.pipelineId).filter((p): p is string => !!p))];
  if (!pipelineIds.length) return { pipelines: new Map(), versions: new Map() };
  const [pipelines, versions] = await Promise.all([
    db.pipeline.findMany({ where: { workspaceId, id: { in: pipelineIds } }, select: { id: true, name: true } }),
    db.pipelineVersion.findMany({ where: { workspaceId, pipelineId: { in: pipelineIds } }, select: { id: true, pipelineId: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
  ]);
  const numbers = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const v of versions) {
    const n = (counts.get(v.pipelineId) ?? 0) + 1;
    counts.set(v.pipelineId, n);
    numbers.set(v.id, n);
  }
  return { pipelines: new Map(pipelines.map((p) => [p.id, p.name])), versions: numbers };
}

/** "v3" for a pipeline run (the short spec hash when its version is unknown); null for a template. */
export function runVersion(r: LabelledRun, names: RunNames): string | null {
  if (r.template) return null;
  const n = r.versionId ? names.versions.get(r.versionId) : undefined;
  return n ? `v${n}` : `#${r.specHash.slice(0, 7)}`;
}

/** The run's branch without its version ("memex@main"): what a history line follows across versions. */
export function evalLabel(r: Pick<LabelledRun, "pipelineId" | "template" | "branch">, names: RunNames): string {
  return r.template ? `template: ${r.template}` : `${names.pipelines.get(r.pipelineId ?? "") ?? "?"}@${r.branch}`;
}

/** "memex@main v3", "template: mem0". */
export function versionedLabel(r: LabelledRun, names: RunNames): string {
  const version = runVersion(r, names);
  return version ? `${evalLabel(r, names)} ${version}` : evalLabel(r, names);
}
