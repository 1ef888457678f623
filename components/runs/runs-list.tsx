"use client";
import { useQuery } from "@tanstack/react-query";
import { AlertTriangle, History } from "lucide-react";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { fmtDate, fmtDuration, fmtInt, fmtUsd, runDuration, runTotals } from "./format";
import { RunStatusBadge } from "./run-status-badge";

export function RunsList({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const params = useSearchParams();
  const branch = params.get("branch") ?? "main";
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const pipeline = useQuery(trpc.pipeline.get.queryOptions({ workspaceId: workspace.id, pipelineId, branch }));
  const runs = useQuery({
    ...trpc.run.list.queryOptions({ workspaceId: workspace.id, pipelineId }),
    refetchInterval: (q) => (q.state.data?.some((r) => r.status === "queued" || r.status === "running") ? 1000 : false),
  });
  const branchName = new Map((pipeline.data?.branches ?? []).map((b) => [b.id, b.name]));

  return (
    <>
      <PageHeader title={pipeline.data ? `${pipeline.data.pipeline.name} · runs` : "Runs"} description="Every execution of this pipeline, newest first." />
      <PipelineTabs pipelineId={pipelineId} />
      {runs.isPending ? (
        <Skeleton className="h-48 w-full" />
      ) : runs.isError ? (
        <EmptyState icon={AlertTriangle} title="Runs could not be loaded" description={errorMessage(runs.error)} />
      ) : runs.data.length === 0 ? (
        <EmptyState
          icon={History}
          title="No runs yet"
          description="Upload data to a source on the overview, check the plan, then press Run."
          action={
            <Button asChild>
              <Link href={`${base}?branch=${encodeURIComponent(branch)}`}>Go to the overview</Link>
            </Button>
          }
        />
      ) : (
        <Table data-testid="runs-table">
          <TableHeader>
            <TableRow>
              <TableHead>Run</TableHead>
              <TableHead>Status</TableHead>
              <TableHead>Branch</TableHead>
              <TableHead>Started</TableHead>
              <TableHead className="text-right">Duration</TableHead>
              <TableHead className="text-right">Made</TableHead>
              <TableHead className="text-right">Skipped</TableHead>
              <TableHead className="text-right">Errors</TableHead>
              <TableHead className="text-right">Tokens</TableHead>
              <TableHead className="text-right">Cost</TableHead>
            </TableRow>
          </TableHeader>
          <TableBody>
            {runs.data.map((r) => {
              const t = runTotals(r.stats);
              return (
                <TableRow key={r.id} data-testid="run-row">
                  <TableCell>
                    <Link className="font-mono text-xs text-primary hover:underline" href={`${base}/runs/${r.id}?branch=${encodeURIComponent(branch)}`}>
                      {r.id.slice(-8)}
                    </Link>
                  </TableCell>
                  <TableCell>
                    <RunStatusBadge status={r.status} />
                  </TableCell>
                  <TableCell>{branchName.get(r.branchId) ?? "—"}</TableCell>
                  <TableCell>{fmtDate(r.startedAt ?? r.createdAt)}</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtDuration(runDuration(r))}</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtInt(t.output)}</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtInt(t.skipped)}</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtInt(t.errors)}</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtInt(t.tokens)}</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtUsd(t.cost)}</TableCell>
                </TableRow>
              );
            })}
          </TableBody>
        </Table>
      )}
    </>
  );
}
