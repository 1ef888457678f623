import { Suspense } from "react";
import { BranchesPage } from "@/components/branches/branches-page";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <BranchesPage pipelineId={pipelineId} />
    </Suspense>
  );
}
