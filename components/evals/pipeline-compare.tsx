"use client";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useQuery } from "@tanstack/react-query";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useWorkspace } from "@/components/shell/workspace-context";
import { useTRPC } from "@/lib/trpc";
import { CompareView } from "./compare-view";
import { Leaderboard } from "./leaderboard";

/** The compare view inside a pipeline: `?baseline=<evalRunId>&others=<id,id>`. */
export function PipelineCompare({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const params = useSearchParams();
  const branch = params.get("branch") ?? "main";
  const baseline = params.get("baseline") ?? "";
  const others = (params.get("others") ?? "").split(",").filter(Boolean);
  const pipeline = useQuery(trpc.pipeline.get.queryOptions({ workspaceId: workspace.id, pipelineId, branch }));
  return (
    <>
      <PageHeader
        title={pipeline.data ? `${pipeline.data.pipeline.name} · compare evals` : "Compare evals"}
        description="A baseline against the others: deltas, charts, and every question with what each one retrieved."
      />
      <PipelineTabs pipelineId={pipelineId} />
      <Link className="mb-4 inline-block text-sm text-primary hover:underline" href={`/w/${workspace.slug}/pipelines/${pipelineId}/evals?branch=${encodeURIComponent(branch)}`}>
        ← All eval runs
      </Link>
      {baseline ? (
        <div className="grid gap-6">
          <Leaderboard runIds={[baseline, ...others]} baselineId={baseline} />
          <CompareView baselineId={baseline} otherIds={others} />
        </div>
      ) : (
        <p className="text-sm text-muted-foreground">Pick runs to compare on the Evals tab.</p>
      )}
    </>
  );
}
