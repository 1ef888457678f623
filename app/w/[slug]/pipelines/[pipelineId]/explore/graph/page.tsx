import { Suspense } from "react";
import { GraphView } from "@/components/explorer/graph-view";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <GraphView pipelineId={pipelineId} />
    </Suspense>
  );
}
