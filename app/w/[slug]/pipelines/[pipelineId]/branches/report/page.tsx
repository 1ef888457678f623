import { Suspense } from "react";
import { MigrationReport } from "@/components/branches/migration-report";

export default async function Page({ params }: { params: Promise<{ pipelineId: string }> }) {
  const { pipelineId } = await params;
  return (
    <Suspense>
      <MigrationReport pipelineId={pipelineId} />
    </Suspense>
  );
}
