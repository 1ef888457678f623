import { dehydrate, HydrationBoundary } from "@tanstack/react-query";
import { PipelineCompare } from "@/components/evals/pipeline-compare";
import { serverCaller } from "@/server/api/server-caller";
import { serverQueries } from "@/server/api/server-prefetch";

type SearchParams = Record<string, string | string[] | undefined>;

/**
 * A pipeline's eval comparison: the pipeline and the leaderboard of `?baseline=…&others=…` are read
 * here, on the server, so they arrive with the HTML; the charts and the question by question load
 * after, in the browser. No Suspense boundary around the client part: the route is dynamic, and a
 * boundary lets React stream the content apart from the page and reveal it later.
 */
export default async function Page({ params, searchParams }: { params: Promise<{ slug: string; pipelineId: string }>; searchParams: Promise<SearchParams> }) {
  const [{ slug, pipelineId }, query] = await Promise.all([params, searchParams]);
  const param = (k: string) => (typeof query[k] === "string" ? (query[k] as string) : "");
  const { queryClient, trpc } = serverQueries();
  const workspace = (await (await serverCaller()).workspace.list()).find((w) => w.slug === slug);
  const baseline = param("baseline");
  if (workspace) {
    const workspaceId = workspace.id;
    const runIds = baseline ? [baseline, ...param("others").split(",").filter(Boolean)] : [];
    await Promise.all([
      queryClient.prefetchQuery(trpc.pipeline.get.queryOptions({ workspaceId, pipelineId, branch: param("branch") || "main" })),
      runIds.length ? queryClient.prefetchQuery(trpc.evals.leaderboard.queryOptions({ workspaceId, runIds, baselineId: baseline })) : null,
    ]);
  }
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <PipelineCompare pipelineId={pipelineId} />
    </HydrationBoundary>
  );
}
