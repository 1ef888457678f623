import { Suspense } from "react";
import { BranchDiff } from "@/components/branches/branch-diff";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <BranchDiff pipelineId={pipelineId} />
    </Suspense>
  );
}
