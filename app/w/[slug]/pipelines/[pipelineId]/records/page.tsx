import { Suspense } from "react";
import { RecordBrowser } from "@/components/explorer/record-browser";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <RecordBrowser pipelineId={pipelineId} />
    </Suspense>
  );
}
