"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { FileBarChart, GitCompare, Shield, ShieldOff, Trash2 } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { fmtDate, fmtInt } from "@/components/runs/format";
import { RunStatusBadge } from "@/components/runs/run-status-badge";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Skeleton } from "@/components/ui/skeleton";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { useBranch } from "./branch-bar";
import { TryArchitecture } from "./try-architecture";

const ACTIVE_RUN = ["queued", "running"];

/** The pipeline's branches (compare, delete), main's protection, and who promoted what. */
export function BranchesPage({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const branch = useBranch();
  const canWrite = useCan("branches:write");
  const canAdmin = useCan("branches:admin");
  const ref = { workspaceId: workspace.id, pipelineId };
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  // While a branch's last run is queued or running, its badge follows it every 2 s; otherwise the
  // list still looks every 10 s, so a run started elsewhere (another tab, the CLI, an agent) shows up.
  const list = useQuery({
    ...trpc.branch.list.queryOptions(ref),
    refetchInterval: (query) => (query.state.data?.branches.some((b) => b.lastRun && ACTIVE_RUN.includes(b.lastRun.status)) ? 2000 : 10_000),
  });
  const promotions = useQuery(trpc.branch.promotions.queryOptions(ref));
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.branch.list.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.pipeline.get.queryKey() });
  };
  const remove = useMutation(
    trpc.branch.delete.mutationOptions({
      onSuccess: (res) => {
        toast.success(res.message);
        refresh();
        if (res.deleted === branch) router.replace(`${base}/branches?branch=main`);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const protect = useMutation(
    trpc.branch.setProtection.mutationOptions({
      onSuccess: (res) => {
        toast.success(res.protectedMain ? "Main is protected" : "Main is no longer protected");
        refresh();
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );

  return (
    <>
      <PageHeader
        title="Branches"
        description="Try another prompt, model or architecture without touching main; compare; promote the winner."
        actions={<TryArchitecture pipelineId={pipelineId} />}
      />
      <PipelineTabs pipelineId={pipelineId} />
      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">
            Branches
            {list.data ? (
              <Badge variant={list.data.protectedMain ? "success" : "outline"} data-testid="main-protection">
                main {list.data.protectedMain ? "protected" : "not protected"}
              </Badge>
            ) : null}
            {canAdmin && list.data ? (
              <Button
                size="sm"
                variant="ghost"
                data-testid="toggle-protection"
                onClick={() => protect.mutate({ ...ref, protectedMain: !list.data.protectedMain })}
                disabled={protect.isPending}
              >
                {list.data.protectedMain ? <ShieldOff /> : <Shield />}
                {list.data.protectedMain ? "Unprotect main" : "Protect main"}
              </Button>
            ) : null}
          </CardTitle>
          <CardDescription>
            A protected main takes versions and promotions only from admins and owners; editors save on branches. Records stay shared: a branch is a set of pointers.
          </CardDescription>
        </CardHeader>
        <CardContent>
          {list.isPending ? (
            <Skeleton className="h-32 w-full" />
          ) : list.isError ? (
            <p className="text-sm text-destructive">{errorMessage(list.error)}</p>
          ) : (
            <Table data-testid="branches-table">
              <TableHeader>
                <TableRow>
                  <TableHead>Branch</TableHead>
                  <TableHead>Version</TableHead>
                  <TableHead className="text-right">Records</TableHead>
                  <TableHead>Last run</TableHead>
                  <TableHead>Created</TableHead>
                  <TableHead />
                </TableRow>
              </TableHeader>
              <TableBody>
                {list.data.branches.map((b) => (
                  <TableRow key={b.id} data-testid={`branch-row-${b.name}`}>
                    <TableCell className="font-medium">
                      <Link className="hover:underline" href={`${base}?branch=${encodeURIComponent(b.name)}`}>
                        {b.name}
                      </Link>
                      {b.description ? <div className="text-xs text-muted-foreground">{b.description}</div> : null}
                    </TableCell>
                    <TableCell className="text-xs text-muted-foreground">
                      <code>{b.version?.hash.slice(0, 8)}</code> {b.version?.message}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">{fmtInt(b.pointers)}</TableCell>
                    <TableCell>{b.lastRun ? <RunStatusBadge status={b.lastRun.status} /> : <span className="text-xs text-muted-foreground">never</span>}</TableCell>
                    <TableCell className="text-xs text-muted-foreground">{fmtDate(b.createdAt)}</TableCell>
                    <TableCell className="text-right">
                      {b.isMain ? null : (
                        <div className="flex justify-end gap-2">
                          <Button asChild size="sm" variant="outline" data-testid={`report-${b.name}`}>
                            <Link href={`${base}/branches/report?branch=${encodeURIComponent(b.name)}`}>
                              <FileBarChart /> Report
                            </Link>
                          </Button>
                          <Button asChild size="sm" variant="outline" data-testid={`compare-${b.name}`}>
                            <Link href={`${base}/branches/diff?branch=${encodeURIComponent(b.name)}&against=main`}>
                              <GitCompare /> Compare with main
                            </Link>
                          </Button>
                          {canWrite ? (
                            <Button
                              size="sm"
                              variant="ghost"
                              data-testid={`delete-${b.name}`}
                              disabled={remove.isPending}
                              onClick={() => {
                                if (window.confirm(`Delete branch "${b.name}"? Its pointers go; records stay until gc.`)) remove.mutate({ ...ref, branch: b.name });
                              }}
                            >
                              <Trash2 /> Delete
                            </Button>
                          ) : null}
                        </div>
                      )}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          )}
        </CardContent>
      </Card>

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>Promotions</CardTitle>
          <CardDescription>Who promoted which branch into main, when, and which steps moved.</CardDescription>
        </CardHeader>
        <CardContent>
          {promotions.data?.length ? (
            <Table data-testid="promotions-table">
              <TableHeader>
                <TableRow>
                  <TableHead>When</TableHead>
                  <TableHead>Branch</TableHead>
                  <TableHead>By</TableHead>
                  <TableHead>Steps moved</TableHead>
                  <TableHead>Stale on main</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {promotions.data.map((p) => (
                  <TableRow key={p.id} data-testid="promotion-row">
                    <TableCell className="text-xs">{fmtDate(p.createdAt)}</TableCell>
                    <TableCell className="font-medium">
                      {p.branchName} → {p.targetName}
                    </TableCell>
                    <TableCell>{p.promotedBy}</TableCell>
                    <TableCell className="text-xs">
                      {p.steps.length ? p.steps.map((s) => `${s.step} (${fmtInt(s.upserted)} upserted${s.removed ? `, ${fmtInt(s.removed)} removed` : ""})`).join(", ") : "none"}
                    </TableCell>
                    <TableCell className="text-xs">{p.staleSteps.join(", ") || "none"}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          ) : (
            <p className="text-sm text-muted-foreground">No promotion yet. Compare a branch with main and promote it from there.</p>
          )}
        </CardContent>
      </Card>
    </>
  );
}
