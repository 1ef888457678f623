"use client";
import { useQuery } from "@tanstack/react-query";
import { Plus, Workflow } from "lucide-react";
import Link from "next/link";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { LocalWorkspaceHint } from "./local-hint";

const STATUS_VARIANT: Record<string, "success" | "destructive" | "warning" | "secondary"> = {
  succeeded: "success",
  completed: "success",
  success: "success",
  failed: "destructive",
  cancelled: "secondary",
  canceled: "secondary",
  running: "warning",
  queued: "warning",
  pending: "warning",
};

export function PipelinesPage() {
  const { workspace } = useWorkspace();
  const canWrite = useCan("pipelines:write");
  const trpc = useTRPC();
  const list = useQuery(trpc.pipeline.list.queryOptions({ workspaceId: workspace.id }));
  const base = `/w/${workspace.slug}/pipelines`;
  const newButton = canWrite ? (
    <Button asChild data-testid="new-pipeline">
      <Link href={`${base}/new`}>
        <Plus /> New pipeline
      </Link>
    </Button>
  ) : null;

  let body;
  if (list.isPending) {
    body = (
      <div className="space-y-2">
        <Skeleton className="h-10 w-full" />
        <Skeleton className="h-10 w-full" />
        <Skeleton className="h-10 w-full" />
      </div>
    );
  } else if (list.isError) {
    body = (
      <EmptyState
        title="Could not load pipelines"
        description={errorMessage(list.error)}
        action={
          <Button variant="outline" onClick={() => list.refetch()}>
            Try again
          </Button>
        }
      />
    );
  } else if (!list.data.length) {
    body = (
      <EmptyState
        icon={Workflow}
        title="No pipelines yet"
        description={
          canWrite
            ? "A pipeline turns raw history (chat exports, transcripts, agent events) into memory your agents can search. Start from the chat-memory template."
            : "Nobody has created a pipeline here yet. Your role (viewer) can read pipelines but not create them."
        }
        action={
          canWrite ? (
            <Button asChild data-testid="create-pipeline">
              <Link href={`${base}/new`}>Create your first pipeline</Link>
            </Button>
          ) : null
        }
      />
    );
  } else {
    body = (
      <Card className="py-0">
        <CardContent className="px-0">
          <Table data-testid="pipelines-table">
            <TableHeader>
              <TableRow>
                <TableHead className="pl-4">Name</TableHead>
                <TableHead>Agent</TableHead>
                <TableHead className="text-right">Records</TableHead>
                <TableHead>Last run</TableHead>
                <TableHead className="pr-4 text-right">Open</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {list.data.map((p) => (
                <TableRow key={p.id} data-testid={`pipeline-row-${p.name}`}>
                  <TableCell className="pl-4">
                    <Link href={`${base}/${p.id}`} className="font-medium hover:underline">
                      {p.name}
                    </Link>
                    {p.description ? <div className="max-w-md truncate text-xs text-muted-foreground">{p.description}</div> : null}
                  </TableCell>
                  <TableCell className="text-muted-foreground">{p.agent || "—"}</TableCell>
                  <TableCell className="text-right tabular-nums">{p.records.toLocaleString()}</TableCell>
                  <TableCell>
                    {p.lastRun ? (
                      <span className="flex items-center gap-2">
                        <Badge variant={STATUS_VARIANT[p.lastRun.status] ?? "outline"}>{p.lastRun.status}</Badge>
                        <span className="text-xs text-muted-foreground">{new Date(p.lastRun.createdAt).toLocaleString()}</span>
                      </span>
                    ) : (
                      <span className="text-xs text-muted-foreground">never run</span>
                    )}
                  </TableCell>
                  <TableCell className="pr-4 text-right">
                    <div className="flex justify-end gap-1">
                      <Button asChild size="sm" variant="ghost">
                        <Link href={`${base}/${p.id}`}>Overview</Link>
                      </Button>
                      <Button asChild size="sm" variant="outline">
                        <Link href={`${base}/${p.id}/canvas`}>Canvas</Link>
                      </Button>
                    </div>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </CardContent>
      </Card>
    );
  }

  return (
    <>
      <PageHeader
        title="Pipelines"
        description="Memory architectures for your agents: sources in, queryable memory out."
        actions={list.data?.length ? newButton : null}
      />
      <LocalWorkspaceHint currentSlug={workspace.slug} />
      {body}
    </>
  );
}
