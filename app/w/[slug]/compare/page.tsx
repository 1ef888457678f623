import { Suspense } from "react";
import { WorkspaceCompare } from "@/components/evals/workspace-compare";

export default function Page() {
  return (
    <Suspense>
      <WorkspaceCompare />
    </Suspense>
  );
}
