import { Suspense } from "react";
import { Explorer } from "@/components/explorer/explorer";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <Explorer pipelineId={pipelineId} />
    </Suspense>
  );
}
