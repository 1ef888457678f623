"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { GitBranchPlus } from "lucide-react";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { draftStorageKey, removeDraft, writeDraft } from "./drafts";
import type { CanvasLayout, DraftSpec } from "./spec-graph";

/**
 * "Save as new branch…" for whoever may not save on a protected main: creates a branch from the
 * current one and saves the canvas there as its first version. The edits travel with it: they are
 * parked as the new branch's draft before anything is sent, so a failed save leaves them waiting
 * there (not on main), and the draft on the current branch is removed once they have moved.
 */
export function SaveAsBranch({
  pipelineId,
  branch,
  spec,
  layout,
  baseVersionId,
  onMoved,
}: {
  pipelineId: string;
  branch: string;
  spec: DraftSpec;
  layout: CanvasLayout;
  baseVersionId: string;
  /** The edits left this branch: the editor treats them as saved (no draft is written back). */
  onMoved: () => void;
}) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [message, setMessage] = useState("");
  const [error, setError] = useState<string | null>(null);
  const createBranch = useMutation(trpc.branch.create.mutationOptions());
  const saveVersion = useMutation(trpc.pipeline.saveVersion.mutationOptions());
  const pending = createBranch.isPending || saveVersion.isPending;

  const go = (next: string) => {
    const q = new URLSearchParams(params.toString());
    q.set("branch", next);
    router.push(`${pathname}?${q.toString()}`);
  };

  const submit = async () => {
    const target = name.trim();
    setError(null);
    const ref = { workspaceId: workspace.id, pipelineId };
    let created: Awaited<ReturnType<typeof createBranch.mutateAsync>>;
    try {
      created = await createBranch.mutateAsync({ ...ref, branch, name: target, description: message.trim() });
    } catch (err) {
      setError(errorMessage(err));
      return;
    }
    const branchName = created.branch.name;
    // The edits wait on the new branch before they are sent: a failed save leaves them there.
    writeDraft(draftStorageKey(pipelineId, branchName), { spec, layout, baseVersionId, savedAt: new Date().toISOString() });
    removeDraft(draftStorageKey(pipelineId, branch));
    onMoved();
    try {
      await saveVersion.mutateAsync({ ...ref, branch: branchName, spec, layout, message: message.trim() });
      removeDraft(draftStorageKey(pipelineId, branchName));
      toast.success(`Saved your edits on the new branch "${branchName}"`);
    } catch (err) {
      toast.error(`Branch "${branchName}" was created, but saving on it failed: ${errorMessage(err)}. Your edits wait there as unsaved changes.`);
    }
    setOpen(false);
    await queryClient.invalidateQueries({ queryKey: trpc.branch.list.queryKey() });
    await queryClient.invalidateQueries({ queryKey: trpc.pipeline.get.queryKey() });
    await queryClient.invalidateQueries({ queryKey: trpc.pipeline.versions.queryKey() });
    go(branchName);
  };

  return (
    <>
      <Button size="sm" variant="outline" onClick={() => setOpen(true)} data-testid="save-as-branch">
        <GitBranchPlus /> Save as new branch…
      </Button>
      <Dialog open={open} onOpenChange={setOpen}>
        <DialogContent>
          <form
            className="space-y-4"
            onSubmit={(e) => {
              e.preventDefault();
              void submit();
            }}
          >
            <DialogHeader>
              <DialogTitle>Save as a new branch</DialogTitle>
              <DialogDescription>
                {branch} is protected. A new branch from {branch} takes your edits as its first version; {branch} stays as it is. Compare the branch with {branch} and ask an
                admin to promote it.
              </DialogDescription>
            </DialogHeader>
            <div className="space-y-2">
              <Label htmlFor="save-as-branch-name">Branch name</Label>
              <Input
                id="save-as-branch-name"
                data-testid="save-as-branch-name"
                autoFocus
                placeholder="better-summaries"
                value={name}
                maxLength={64}
                onChange={(e) => setName(e.target.value)}
              />
            </div>
            <div className="space-y-2">
              <Label htmlFor="save-as-branch-message">What changed and why</Label>
              <Input
                id="save-as-branch-message"
                data-testid="save-as-branch-message"
                placeholder="Summaries: focus on decisions"
                value={message}
                maxLength={500}
                onChange={(e) => setMessage(e.target.value)}
              />
            </div>
            {error ? (
              <p className="text-sm text-destructive" data-testid="save-as-branch-error">
                {error}
              </p>
            ) : null}
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => setOpen(false)}>
                Cancel
              </Button>
              <Button type="submit" disabled={pending || !name.trim()} data-testid="confirm-save-as-branch">
                {createBranch.isPending ? "Creating branch…" : saveVersion.isPending ? "Saving…" : "Create branch and save"}
              </Button>
            </DialogFooter>
          </form>
        </DialogContent>
      </Dialog>
    </>
  );
}
