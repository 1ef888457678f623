"use client";
import { useQuery } from "@tanstack/react-query";
import { Database } from "lucide-react";
import Link from "next/link";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { fmtDate } from "@/components/runs/format";
import { PageHeader } from "@/components/shell/page-header";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { metaString, recordLabel } from "./api";
import { useUrlState } from "./explorer";

/** Records a branch shows for one step, newest first, with scope/period/conversation filters. */
export function RecordBrowser({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const { params, set } = useUrlState();
  const branch = params.get("branch") ?? "main";
  const scope = params.get("scope") ?? "";
  const period = params.get("period") ?? "";
  const conversation = params.get("conversation") ?? "";
  const cursor = params.get("cursor");
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const pipeline = useQuery(trpc.pipeline.get.queryOptions({ workspaceId: workspace.id, pipelineId, branch }));
  const status = useQuery(trpc.pipeline.status.queryOptions({ workspaceId: workspace.id, pipelineId, branch }));
  const names = (status.data ?? []).map((s) => s.name);
  const step = params.get("step") ?? names[0] ?? "";
  const list = useQuery({
    ...trpc.record.listByStep.queryOptions({
      workspaceId: workspace.id,
      pipelineId,
      branch,
      step,
      ...(scope ? { scope } : {}),
      ...(period ? { period } : {}),
      ...(conversation ? { conversationId: conversation } : {}),
      cursor: cursor ?? undefined,
      limit: 25,
    }),
    enabled: !!step,
    retry: false,
  });
  const filter = (key: string, value: string) => set({ [key]: value.trim() || null, cursor: null }, true);

  return (
    <>
      <PageHeader title={pipeline.data ? `${pipeline.data.pipeline.name} · records` : "Records"} description="Every record a step shows on this branch." />
      <PipelineTabs pipelineId={pipelineId} />
      <div className="mb-4 flex flex-wrap items-end gap-2">
        <label className="flex flex-col gap-1 text-xs text-muted-foreground">
          Step
          <select
            data-testid="records-step"
            className="h-9 rounded-md border border-input bg-transparent px-2 text-sm text-foreground"
            value={step}
            onChange={(e) => set({ step: e.target.value, cursor: null }, true)}
          >
            {(status.data ?? []).map((s) => (
              <option key={s.name} value={s.name}>
                {s.name} ({s.records})
              </option>
            ))}
          </select>
        </label>
        {(
          [
            ["scope", "Scope prefix", scope, "acme:eng"],
            ["period", "Period", period, "2024-03"],
            ["conversation", "Conversation id", conversation, "conversation id"],
          ] as const
        ).map(([key, label, value, ph]) => (
          <label key={key} className="flex flex-col gap-1 text-xs text-muted-foreground">
            {label}
            <Input
              key={`${key}-${value}`}
              className="h-9 w-44"
              placeholder={ph}
              defaultValue={value}
              onBlur={(e) => e.target.value !== value && filter(key, e.target.value)}
              onKeyDown={(e) => e.key === "Enter" && filter(key, e.currentTarget.value)}
            />
          </label>
        ))}
      </div>
      {!step && status.isSuccess ? (
        <EmptyState icon={Database} title="No steps" description="This pipeline has no sources or steps yet." />
      ) : list.isPending ? (
        <Skeleton className="h-64 w-full" />
      ) : list.isError ? (
        <p className="text-sm text-destructive">{errorMessage(list.error)}</p>
      ) : list.data.records.length === 0 ? (
        <EmptyState
          icon={Database}
          title={cursor ? "No more records" : "No records here"}
          description={scope || period || conversation ? "Nothing matches these filters; clear one." : "Upload data and run the pipeline to fill this step."}
        />
      ) : (
        <>
          <Table data-testid="records-table">
            <TableHeader>
              <TableRow>
                <TableHead>Record</TableHead>
                <TableHead>Scope</TableHead>
                <TableHead>Period</TableHead>
                <TableHead>Content</TableHead>
                <TableHead className="text-right">Sources</TableHead>
                <TableHead>Created</TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {list.data.records.map((r) => (
                <TableRow key={r.id} data-testid="record-row">
                  <TableCell className="max-w-48 truncate">
                    <Link className="text-primary hover:underline" href={`${base}/records/${r.id}?branch=${encodeURIComponent(branch)}`}>
                      {recordLabel(r)}
                    </Link>
                  </TableCell>
                  <TableCell>{r.scope ? <Badge variant="outline">{r.scope}</Badge> : "—"}</TableCell>
                  <TableCell>{metaString(r.metadata, "time.period") ?? "—"}</TableCell>
                  <TableCell className="max-w-md truncate text-muted-foreground">{r.content.slice(0, 200)}</TableCell>
                  <TableCell className="text-right tabular-nums">{r.sourceCount}</TableCell>
                  <TableCell className="whitespace-nowrap">{fmtDate(r.createdAt)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
          <div className="mt-3 flex justify-end gap-2">
            {cursor ? (
              <Button variant="outline" onClick={() => set({ cursor: null })}>
                First page
              </Button>
            ) : null}
            <Button variant="outline" disabled={!list.data.nextCursor} onClick={() => set({ cursor: list.data.nextCursor })} data-testid="records-next">
              Next page
            </Button>
          </div>
        </>
      )}
    </>
  );
}
