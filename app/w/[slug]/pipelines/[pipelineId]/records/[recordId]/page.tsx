import { Suspense } from "react";
import { RecordDetailPage } from "@/components/explorer/record-detail";

export default async function Page({ params }: { params: Promise<{ pipelineId: string; recordId: string }> }) {
  const { pipelineId, recordId } = await params;
  return (
    <Suspense>
      <RecordDetailPage pipelineId={pipelineId} recordId={recordId} />
    </Suspense>
  );
}
