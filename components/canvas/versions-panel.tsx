"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { History } from "lucide-react";
import { useState } from "react";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Skeleton } from "@/components/ui/skeleton";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";
import type { NodeDiff } from "@/server/pipeline/diff";
import { formatReason } from "@/server/pipeline/diff-reasons";
import { PromptDiff } from "./prompt-diff";

const STATUS_VARIANT = { added: "success", removed: "destructive", changed: "warning", unchanged: "secondary" } as const;

/**
 * The pipeline's versions, newest first: the diff between any two (with each changed prompt as
 * text) and "Restore", which saves an older version again as the branch's newest (audited).
 */
export function VersionsPanel({
  pipelineId,
  branch,
  headVersionId,
  restoreBlocker,
  compare,
  onCompare,
  onSelectNode,
  onRestored,
}: {
  pipelineId: string;
  branch: string;
  /** The branch's current version: restoring it would change nothing. */
  headVersionId: string;
  /** Why this person may not restore here (a protected main, a read-only role), else null. */
  restoreBlocker: string | null;
  compare: { from: string; to: string } | null;
  onCompare: (c: { from: string; to: string } | null) => void;
  onSelectNode: (name: string) => void;
  /** A restore saved a new version: the canvas reloads it and shows the diff it made. */
  onRestored: (compare: { from: string; to: string } | null) => void;
}) {
  const trpc = useTRPC();
  const { workspace } = useWorkspace();
  const queryClient = useQueryClient();
  const canWrite = useCan("pipelines:write");
  const [restoring, setRestoring] = useState<{ id: string; hash: string; message: string } | null>(null);
  const restore = useMutation(
    trpc.pipeline.restoreVersion.mutationOptions({
      onSuccess: async (res) => {
        toast.success(`Restored ${res.restoredFrom.hash.slice(0, 8)} as a new version on ${branch}`);
        setRestoring(null);
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.versions.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.status.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.get.queryKey() });
        onRestored(res.version.parentId ? { from: res.version.parentId, to: res.version.id } : null);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const versions = useQuery(trpc.pipeline.versions.queryOptions({ workspaceId: workspace.id, pipelineId }));
  const diff = useQuery({
    ...trpc.pipeline.diff.queryOptions({ workspaceId: workspace.id, pipelineId, fromVersionId: compare?.from ?? "", toVersionId: compare?.to ?? "" }),
    enabled: Boolean(compare),
  });
  if (versions.isPending) return <Skeleton className="h-24 w-full" />;
  if (versions.isError) return <p className="text-sm text-destructive">{errorMessage(versions.error)}</p>;
  const list = versions.data;
  const label = (id: string) => {
    const v = list.find((x) => x.id === id);
    return v ? `${v.message || v.hash.slice(0, 8)}` : id.slice(0, 8);
  };
  return (
    <div className="space-y-4" data-testid="versions-panel">
      <div>
        <div className="mb-1 text-[11px] font-medium uppercase tracking-wide text-muted-foreground">Versions ({list.length})</div>
        <ul className="divide-y rounded-md border">
          {list.map((v, i) => (
            <li key={v.id} data-testid="version-row" className={cn("flex items-start gap-2 px-2 py-1.5 text-xs", compare?.to === v.id && "bg-accent/60")}>
              <div className="min-w-0 flex-1">
                <div className="truncate font-medium">
                  {v.message || "(no message)"} {i === 0 ? <Badge variant="secondary" className="ml-1">head</Badge> : null}
                </div>
                <div className="text-muted-foreground">
                  <code>{v.hash.slice(0, 8)}</code> · {new Date(v.createdAt).toLocaleString()}
                </div>
              </div>
              {v.parentId ? (
                <Button size="sm" variant="outline" className="h-6 px-2 text-xs" onClick={() => onCompare({ from: v.parentId!, to: v.id })} data-testid="version-diff">
                  Diff
                </Button>
              ) : null}
              {canWrite && v.id !== headVersionId ? (
                <Button
                  size="sm"
                  variant="ghost"
                  className="h-6 px-2 text-xs"
                  title={restoreBlocker ?? `Save this version again as the newest on ${branch}`}
                  disabled={Boolean(restoreBlocker)}
                  onClick={() => setRestoring({ id: v.id, hash: v.hash, message: v.message })}
                  data-testid="version-restore"
                >
                  <History /> Restore
                </Button>
              ) : null}
            </li>
          ))}
        </ul>
      </div>
      {list.length > 1 ? (
        <div className="grid grid-cols-2 gap-2 text-xs">
          <label className="space-y-1">
            <span className="text-muted-foreground">From</span>
            <select
              className="h-8 w-full rounded-md border bg-transparent px-1"
              value={compare?.from ?? ""}
              onChange={(e) => onCompare({ from: e.target.value, to: compare?.to ?? list[0]!.id })}
            >
              <option value="">—</option>
              {list.map((v) => (
                <option key={v.id} value={v.id}>
                  {v.hash.slice(0, 8)} {v.message}
                </option>
              ))}
            </select>
          </label>
          <label className="space-y-1">
            <span className="text-muted-foreground">To</span>
            <select
              className="h-8 w-full rounded-md border bg-transparent px-1"
              value={compare?.to ?? ""}
              onChange={(e) => onCompare({ from: compare?.from ?? list.at(-1)!.id, to: e.target.value })}
            >
              <option value="">—</option>
              {list.map((v) => (
                <option key={v.id} value={v.id}>
                  {v.hash.slice(0, 8)} {v.message}
                </option>
              ))}
            </select>
          </label>
        </div>
      ) : (
        <p className="text-xs text-muted-foreground">Save a version to compare it with this one.</p>
      )}
      {compare ? (
        <div data-testid="version-diff-result" className="space-y-2">
          <div className="text-xs text-muted-foreground">
            {label(compare.from)} → {label(compare.to)}
          </div>
          {diff.isPending ? (
            <Skeleton className="h-16 w-full" />
          ) : diff.isError ? (
            <p className="text-xs text-destructive">{errorMessage(diff.error)}</p>
          ) : !diff.data.changed ? (
            <p className="text-xs text-muted-foreground">No changes.</p>
          ) : (
            <>
              {diff.data.prompts.length ? (
                <div className="space-y-2" data-testid="prompt-diffs">
                  {diff.data.prompts.map((p) => (
                    <PromptDiff key={p.step} change={p} />
                  ))}
                </div>
              ) : null}
              <ul className="space-y-1">
                {[...diff.data.sources, ...diff.data.steps, ...diff.data.outputs]
                  .filter((n) => n.status !== "unchanged")
                  .map((n: NodeDiff) => (
                    <li key={`${n.kind}:${n.name}`} data-testid={`diff-${n.name}`} className="rounded-md border px-2 py-1 text-xs">
                      <div className="flex items-center gap-2">
                        <Badge variant={STATUS_VARIANT[n.status]}>{n.status}</Badge>
                        <button type="button" className="font-medium hover:underline" onClick={() => onSelectNode(n.name)}>
                          {n.name}
                        </button>
                        <span className="text-muted-foreground">{n.kind === "step" ? n.type : n.kind}</span>
                        {n.rerun && n.kind === "step" ? <Badge variant="outline" className="ml-auto">re-run</Badge> : null}
                      </div>
                      {n.reasons.length ? <div className="mt-0.5 text-muted-foreground">{n.reasons.map(formatReason).join("; ")}</div> : null}
                    </li>
                  ))}
              </ul>
              <p className="text-xs text-muted-foreground">
                {diff.data.invalidated.length ? `Re-run: ${diff.data.invalidated.join(", ")}` : "Nothing to re-run."}
              </p>
            </>
          )}
        </div>
      ) : null}
      <Dialog open={Boolean(restoring)} onOpenChange={(open) => (open ? null : setRestoring(null))}>
        <DialogContent>
          <DialogHeader>
            <DialogTitle>Restore version {restoring?.hash.slice(0, 8)}?</DialogTitle>
            <DialogDescription>
              “{restoring?.message || "(no message)"}” becomes a new version on {branch}, after the current one: nothing is deleted, and the restore is in the
              audit log. Unsaved edits in the canvas are replaced by it. Steps whose definition changes will re-run.
            </DialogDescription>
          </DialogHeader>
          <DialogFooter>
            <Button type="button" variant="outline" onClick={() => setRestoring(null)}>
              Cancel
            </Button>
            <Button
              type="button"
              disabled={restore.isPending}
              data-testid="confirm-restore"
              onClick={() => restoring && restore.mutate({ workspaceId: workspace.id, pipelineId, branch, versionId: restoring.id })}
            >
              {restore.isPending ? "Restoring…" : "Restore as a new version"}
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </div>
  );
}
