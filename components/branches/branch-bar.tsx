"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { GitBranchPlus } from "lucide-react";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";

/** The selected branch: `?branch=` on every pipeline page. */
export function useBranch() {
  return useSearchParams().get("branch") ?? "main";
}

/** The branch picker (keeps the page, changes `?branch=`) and "New branch" from the selected one. */
export function BranchBar({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const branch = useBranch();
  const canCreate = useCan("branches:write");
  const queryClient = useQueryClient();
  const list = useQuery(trpc.branch.list.queryOptions({ workspaceId: workspace.id, pipelineId }));
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");

  const go = (next: string) => {
    const q = new URLSearchParams(params.toString());
    q.set("branch", next);
    router.push(`${pathname}?${q.toString()}`);
  };
  const create = useMutation(
    trpc.branch.create.mutationOptions({
      onSuccess: async (res) => {
        toast.success(res.message);
        setOpen(false);
        setName("");
        setDescription("");
        await queryClient.invalidateQueries({ queryKey: trpc.branch.list.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.get.queryKey() });
        go(res.branch.name);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const names = list.data?.branches.map((b) => b.name) ?? [branch];

  return (
    <div className="flex items-center gap-2">
      <label className="flex items-center gap-2 text-sm">
        <span className="text-muted-foreground">Branch</span>
        <select
          data-testid="branch-select"
          className="h-8 rounded-md border border-input bg-transparent px-2 text-sm"
          value={branch}
          onChange={(e) => go(e.target.value)}
        >
          {(names.includes(branch) ? names : [branch, ...names]).map((b) => (
            <option key={b} value={b}>
              {b}
              {b === "main" && list.data?.protectedMain ? " (protected)" : ""}
            </option>
          ))}
        </select>
      </label>
      {canCreate ? (
        <Button size="sm" variant="outline" data-testid="new-branch" onClick={() => setOpen(true)}>
          <GitBranchPlus /> New branch
        </Button>
      ) : null}
      <Dialog open={open} onOpenChange={setOpen}>
        <DialogContent>
          <form
            className="space-y-4"
            onSubmit={(e) => {
              e.preventDefault();
              create.mutate({ workspaceId: workspace.id, pipelineId, branch, name: name.trim(), description });
            }}
          >
            <DialogHeader>
              <DialogTitle>New branch from {branch}</DialogTitle>
              <DialogDescription>
                A branch copies {branch}&apos;s pointers, never its records: creating it computes nothing. Edit it in the canvas, run it, compare it with main, promote it.
              </DialogDescription>
            </DialogHeader>
            <div className="space-y-2">
              <Label htmlFor="branch-name">Name</Label>
              <Input id="branch-name" data-testid="branch-name" autoFocus placeholder="better-summaries" value={name} maxLength={64} onChange={(e) => setName(e.target.value)} />
            </div>
            <div className="space-y-2">
              <Label htmlFor="branch-description">What it tries (optional)</Label>
              <Input id="branch-description" value={description} maxLength={2000} onChange={(e) => setDescription(e.target.value)} />
            </div>
            <DialogFooter>
              <Button type="button" variant="outline" onClick={() => setOpen(false)}>
                Cancel
              </Button>
              <Button type="submit" data-testid="create-branch" disabled={create.isPending}>
                {create.isPending ? "Creating…" : "Create branch"}
              </Button>
            </DialogFooter>
          </form>
        </DialogContent>
      </Dialog>
    </div>
  );
}
