import { Suspense } from "react";
import { TrafficPage } from "@/components/traffic/traffic-page";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <TrafficPage pipelineId={pipelineId} />
    </Suspense>
  );
}
