import { Suspense } from "react";
import { EvalsPage } from "@/components/evals/evals-page";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <EvalsPage pipelineId={pipelineId} />
    </Suspense>
  );
}
