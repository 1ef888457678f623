import { Suspense } from "react";
import { RunsList } from "@/components/runs/runs-list";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <RunsList pipelineId={pipelineId} />
    </Suspense>
  );
}
