import "server-only";
/**
 * The workspace Compare page's first read, on the server: the runs list, the datasets and the
 * leaderboard of the selection the client part computes from the same URL (compare-selection.ts),
 * so the leaderboard arrives with the HTML. With runs in the URL the leaderboard does not wait for
 * the list.
 */
import type { serverQueries } from "@/server/api/server-prefetch";
import { chosenDataset, latestRuns, parseSelection, selectedRunIds } from "./compare-selection";

export async function prefetchCompare(
  { queryClient, trpc }: ReturnType<typeof serverQueries>,
  workspaceId: string,
  param: (key: string) => string | null,
) {
  const selection = parseSelection(param);
  const listOptions = trpc.evals.list.queryOptions({ workspaceId });
  const datasetsOptions = trpc.evals.datasets.queryOptions({ workspaceId });
  const early = selection.runs ? selectedRunIds(selection, []) : null;
  const board = (runIds: string[]) =>
    runIds.length ? queryClient.prefetchQuery(trpc.evals.leaderboard.queryOptions({ workspaceId, runIds, baselineId: selection.baseline || undefined })) : Promise.resolve();
  await Promise.all([
    early ? board(early) : null,
    queryClient.prefetchQuery(datasetsOptions),
    queryClient.prefetchQuery(listOptions).then(async () => {
      if (early) return;
      const runs = queryClient.getQueryData(listOptions.queryKey) ?? [];
      const datasets = queryClient.getQueryData(datasetsOptions.queryKey) ?? [];
      await board(selectedRunIds(selection, latestRuns(runs, chosenDataset(selection, runs, datasets))));
    }),
  ]);
}
