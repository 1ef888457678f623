"use client";
/**
 * A memory's history on the record page (records of a consolidate step): every version, newest
 * first, with the fact that changed it, and Restore when the branch shows the memory as deleted.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { RotateCcw } from "lucide-react";
import Link from "next/link";
import { toast } from "@/components/ui/sonner";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";

const EVENT_VARIANT = { ADD: "secondary", UPDATE: "secondary", DELETE: "warning", NONE: "outline", RESTORE: "secondary" } as const;

export function MemoryHistoryCard({ workspaceId, recordId, branch, base }: { workspaceId: string; recordId: string; branch: string; base: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const input = { workspaceId, id: recordId, branch };
  const history = useQuery(trpc.record.history.queryOptions(input));
  const restore = useMutation(
    trpc.record.restore.mutationOptions({
      onSuccess: (h) => {
        toast.success(`Memory restored on ${h.branch}`);
        void queryClient.invalidateQueries({ queryKey: trpc.record.history.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.record.get.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.record.deletedMemories.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.search.search.queryKey() });
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const href = (id: string) => `${base}/records/${id}?branch=${encodeURIComponent(branch)}`;

  return (
    <Card className="mt-6" data-testid="memory-history">
      <CardHeader>
        <CardTitle className="flex items-center gap-2">
          Memory history
          {history.data ? (
            <Badge variant={history.data.status === "deleted" ? "warning" : history.data.status === "active" ? "secondary" : "outline"} data-testid="memory-status">
              {history.data.status === "absent" ? `not on ${branch}` : `${history.data.status} on ${branch}`}
            </Badge>
          ) : null}
          {history.data?.restorable ? (
            <Button size="sm" variant="outline" className="ml-auto" disabled={restore.isPending} onClick={() => restore.mutate(input)} data-testid="memory-restore">
              <RotateCcw className="mr-1 h-4 w-4" /> Restore
            </Button>
          ) : null}
        </CardTitle>
        <CardDescription>Every version of this memory, newest first: what it said, when, and the fact that changed it. Nothing is erased.</CardDescription>
      </CardHeader>
      <CardContent>
        {history.isPending ? <Skeleton className="h-24 w-full" /> : null}
        {history.isError ? <p className="text-sm text-destructive">{errorMessage(history.error)}</p> : null}
        {history.data ? (
          <ol className="space-y-3">
            {history.data.versions.map((v) => (
              <li key={v.recordId} className="border-l-2 pl-3 text-sm" data-testid="memory-version">
                <div className="flex flex-wrap items-center gap-2">
                  <Badge variant={EVENT_VARIANT[v.event]}>{v.event}</Badge>
                  <span className="text-muted-foreground">v{v.version} · {v.at}</span>
                  {v.recordId === recordId ? <span className="text-xs text-muted-foreground">(this record)</span> : <Link href={href(v.recordId)} className="text-xs underline">open</Link>}
                </div>
                <p className={v.status === "deleted" ? "mt-1 line-through decoration-muted-foreground" : "mt-1"}>{v.content}</p>
                <p className="mt-0.5 text-xs text-muted-foreground">
                  {v.fact ? (
                    <>
                      fact <Link href={href(v.fact.id)} className="underline">{v.fact.content.slice(0, 120)}</Link>
                      {" — "}
                    </>
                  ) : null}
                  {v.reason}
                </p>
              </li>
            ))}
          </ol>
        ) : null}
      </CardContent>
    </Card>
  );
}

/** The deleted memories of a consolidate step on the branch, each a link to its history (and Restore). */
export function DeletedMemoriesPanel({ workspaceId, pipelineId, step, branch, base }: { workspaceId: string; pipelineId: string; step: string; branch: string; base: string }) {
  const trpc = useTRPC();
  const deleted = useQuery(trpc.record.deletedMemories.queryOptions({ workspaceId, pipelineId, step, branch }));
  if (!deleted.data?.length) return null;
  return (
    <details className="mb-4 rounded-xl border px-3 py-2 text-sm" data-testid={`deleted-memories-${step}`}>
      <summary className="cursor-pointer text-muted-foreground">
        Deleted memories in <strong>{step}</strong> ({deleted.data.length}): soft-deleted by later facts, restorable
      </summary>
      <ul className="mt-2 space-y-1">
        {deleted.data.map((m) => (
          <li key={m.recordId}>
            <Link href={`${base}/records/${m.recordId}?branch=${encodeURIComponent(branch)}`} className="underline" data-testid="deleted-memory">
              {m.content.slice(0, 140)}
            </Link>{" "}
            <span className="text-xs text-muted-foreground">
              {m.scope ? `${m.scope} · ` : ""}
              {m.deletedAt}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}
