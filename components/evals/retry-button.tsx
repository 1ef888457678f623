"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { RotateCcw } from "lucide-react";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";

/**
 * Retry of a failed or cancelled eval (server/eval/retry.ts: a new run with its settings), for
 * whoever may start evals: the leaderboard's rows and the Evals tab's runs table both show it.
 */
export function RetryButton({ run, testId }: { run: { id: string; label: string; status: string }; testId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canRetry = useCan("evals:write");
  const retry = useMutation(
    trpc.evals.retry.mutationOptions({
      onSuccess: (created) => {
        toast.success(`Retrying ${run.label} (${created.id})`);
        void queryClient.invalidateQueries({ queryKey: trpc.evals.list.queryKey() });
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  if (!canRetry || (run.status !== "failed" && run.status !== "cancelled")) return null;
  return (
    <Button size="sm" variant="outline" disabled={retry.isPending} onClick={() => retry.mutate({ workspaceId: workspace.id, id: run.id })} data-testid={testId}>
      <RotateCcw className="size-3.5" /> Retry
    </Button>
  );
}
