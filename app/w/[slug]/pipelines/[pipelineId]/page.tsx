import { Suspense } from "react";
import { PipelineOverview } from "@/components/overview/pipeline-overview";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <PipelineOverview pipelineId={pipelineId} />
    </Suspense>
  );
}
