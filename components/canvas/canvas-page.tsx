"use client";
/**
 * The pipeline canvas page: loads the branch's saved version and opens the editor on it (and on a
 * kept draft), with a loading and an error state; a discard or a restore opens it again.
 */
import { useQuery } from "@tanstack/react-query";
import { ReactFlowProvider } from "@xyflow/react";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { LoadedEditor, type Resume } from "./canvas-editor";

export function CanvasEditor({ pipelineId }: { pipelineId: string }) {
  return (
    <ReactFlowProvider>
      <Editor pipelineId={pipelineId} />
    </ReactFlowProvider>
  );
}

/** Loads the branch's version; the editor below starts from it (and from a kept draft) once loaded. */
function Editor({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const branch = useSearchParams().get("branch") ?? "main";
  const trpc = useTRPC();
  const loaded = useQuery(trpc.pipeline.get.queryOptions({ workspaceId: workspace.id, pipelineId, branch }, { staleTime: Infinity, refetchOnWindowFocus: false }));
  // Bumped to start over from the saved version (discarding a draft); `resume` reopens a tab after it.
  const [generation, setGeneration] = useState(0);
  const [resume, setResume] = useState<Resume | undefined>(undefined);
  if (loaded.isPending) {
    return (
      <div className="space-y-3">
        <Skeleton className="h-9 w-80" />
        <Skeleton className="h-[60vh] w-full" />
      </div>
    );
  }
  if (loaded.isError) {
    return (
      <EmptyState
        title="Could not open this pipeline"
        description={errorMessage(loaded.error)}
        action={
          <Button asChild variant="outline">
            <Link href={`/w/${workspace.slug}/pipelines`}>Back to pipelines</Link>
          </Button>
        }
      />
    );
  }
  return (
    <LoadedEditor
      key={`${branch}:${generation}`}
      pipelineId={pipelineId}
      branch={branch}
      data={loaded.data}
      resume={resume}
      onReload={(next) => {
        setResume(next);
        setGeneration((g) => g + 1);
      }}
    />
  );
}

