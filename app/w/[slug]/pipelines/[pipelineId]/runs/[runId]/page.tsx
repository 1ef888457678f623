import { Suspense } from "react";
import { RunDetail } from "@/components/runs/run-detail";

export default async function Page({ params }: { params: Promise<{ pipelineId: string; runId: string }> }) {
  const { pipelineId, runId } = await params;
  return (
    <Suspense>
      <RunDetail pipelineId={pipelineId} runId={runId} />
    </Suspense>
  );
}
