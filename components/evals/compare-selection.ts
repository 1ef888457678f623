/**
 * Which runs the workspace Compare page shows: the ones the URL names (`?runs=a,b`), else per
 * pipeline@branch / template (and search setting) on the chosen dataset the latest run — and the
 * latest completed one when the latest failed or is still running, so a failure never hides a result.
 * Plain functions: the page's server component prefetches exactly what its client part asks for.
 */

/** What one leaderboard shows (server/eval/leaderboard-rows.ts MAX_LEADERBOARD_RUNS). */
export const MAX_COMPARE_RUNS = 24;

export interface SelectableRun {
  id: string;
  datasetId: string;
  status: string;
  label: string;
  mode: string;
  step: string | null;
}

/** `?dataset=…&baseline=…&runs=a,b` read from the URL's parameters. */
export function parseSelection(get: (key: string) => string | null | undefined) {
  const runs = get("runs");
  return { dataset: get("dataset") ?? "", baseline: get("baseline") ?? "", runs: runs ? runs.split(",").filter(Boolean) : null };
}

/** The dataset the page compares on: the URL's, else the newest completed run's, else any. */
export function chosenDataset(selection: { dataset: string }, runs: readonly SelectableRun[], datasets: readonly { id: string }[]): string {
  return selection.dataset || runs.find((r) => r.status === "completed")?.datasetId || runs[0]?.datasetId || datasets[0]?.id || "";
}

/** Per pipeline@branch / template and search setting on `datasetId`: the latest run (runs newest first), plus the latest completed one when the latest did not complete. */
export function latestRuns<R extends SelectableRun>(runs: readonly R[], datasetId: string): R[] {
  const seen = new Map<string, R[]>();
  for (const r of runs.filter((x) => x.datasetId === datasetId)) {
    const key = `${r.label}|${r.mode}|${r.step ?? ""}`;
    const kept = seen.get(key) ?? [];
    if (!kept.length || (kept.every((k) => k.status !== "completed") && r.status === "completed")) kept.push(r);
    seen.set(key, kept);
  }
  return [...seen.values()].flat();
}

/** The run ids the leaderboard reads: the URL's selection, else the latest runs. */
export function selectedRunIds(selection: { runs: string[] | null }, latest: readonly { id: string }[]): string[] {
  return (selection.runs ?? latest.map((r) => r.id)).slice(0, MAX_COMPARE_RUNS);
}
