import { dehydrate, HydrationBoundary } from "@tanstack/react-query";
import { Suspense } from "react";
import { chosenDataset, latestRuns, parseSelection, selectedRunIds } from "@/components/evals/compare-selection";
import { WorkspaceCompare } from "@/components/evals/workspace-compare";
import { serverCaller } from "@/server/api/server-caller";
import { serverQueries } from "@/server/api/server-prefetch";

type SearchParams = Record<string, string | string[] | undefined>;

/**
 * The leaderboard is read here, on the server, with the runs and datasets the page's client part
 * asks for: it arrives with the HTML (no JavaScript or round trip before content). Charts and the
 * question by question load after, in the browser.
 */
export default async function Page({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const [{ slug }, query] = await Promise.all([params, searchParams]);
  const { queryClient, trpc } = serverQueries();
  const workspace = (await (await serverCaller()).workspace.list()).find((w) => w.slug === slug);
  if (workspace) {
    const workspaceId = workspace.id;
    const selection = parseSelection((k) => (typeof query[k] === "string" ? (query[k] as string) : null));
    const listOptions = trpc.evals.list.queryOptions({ workspaceId });
    const datasetsOptions = trpc.evals.datasets.queryOptions({ workspaceId });
    // With runs in the URL the leaderboard does not wait for the list.
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
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <Suspense>
        <WorkspaceCompare />
      </Suspense>
    </HydrationBoundary>
  );
}
