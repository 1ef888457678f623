import { dehydrate, HydrationBoundary } from "@tanstack/react-query";
import { prefetchCompare } from "@/components/evals/compare-prefetch";
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
  if (workspace) await prefetchCompare({ queryClient, trpc }, workspace.id, (k) => (typeof query[k] === "string" ? (query[k] as string) : null));
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <WorkspaceCompare />
    </HydrationBoundary>
  );
}
