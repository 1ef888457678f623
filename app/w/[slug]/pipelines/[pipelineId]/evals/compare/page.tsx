import { Suspense } from "react";
import { PipelineCompare } from "@/components/evals/pipeline-compare";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <PipelineCompare pipelineId={pipelineId} />
    </Suspense>
  );
}
