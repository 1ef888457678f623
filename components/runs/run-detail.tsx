"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { AlertTriangle, Loader2, RotateCcw, Square } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { ACTIVE_RUN_STATUSES, fmtDate, fmtDuration, fmtInt, fmtUsd, runDuration, runSteps, runTotals, stepStateCounts } from "./format";
import { RunStatusBadge } from "./run-status-badge";

export function RunDetail({ pipelineId, runId }: { pipelineId: string; runId: string }) {
  const { workspace } = useWorkspace();
  const canRun = useCan("runs:write");
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const run = useQuery({
    ...trpc.run.get.queryOptions({ workspaceId: workspace.id, runId }),
    refetchInterval: (q) => (!q.state.data || ACTIVE_RUN_STATUSES.includes(q.state.data.status) ? 1000 : false),
  });
  const running = !run.data || ACTIVE_RUN_STATUSES.includes(run.data.status);
  const groups = useQuery({ ...trpc.run.failureGroups.queryOptions({ workspaceId: workspace.id, runId }), refetchInterval: running ? 2000 : false });
  const invalidate = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.run.get.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.run.failureGroups.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.run.list.queryKey() });
  };
  const finished = !!run.data && !ACTIVE_RUN_STATUSES.includes(run.data.status);
  useEffect(() => {
    // A finished run changes record counts, staleness and the next plan.
    if (!finished) return;
    void queryClient.invalidateQueries({ queryKey: trpc.run.failureGroups.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.pipeline.status.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.provider.planCost.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.run.plan.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.run.list.queryKey() });
  }, [finished, queryClient, trpc]);
  const cancel = useMutation(
    trpc.run.cancel.mutationOptions({
      onSuccess: () => {
        toast.success("Cancelling the run…");
        invalidate();
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const retry = useMutation(
    trpc.run.start.mutationOptions({
      onSuccess: (next) => {
        toast.success("New run started: only missing work runs");
        invalidate();
        router.push(`${base}/runs/${next.id}?branch=${encodeURIComponent(run.data?.branchName ?? "main")}`);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );

  if (run.isPending) return <Skeleton className="h-64 w-full" />;
  if (run.isError) {
    return (
      <>
        <PipelineTabs pipelineId={pipelineId} />
        <EmptyState icon={AlertTriangle} title="This run could not be loaded" description={errorMessage(run.error)} />
      </>
    );
  }
  const r = run.data;
  const steps = runSteps(r.stats);
  const totals = runTotals(r.stats);
  const active = ACTIVE_RUN_STATUSES.includes(r.status);
  const chart = steps.map((s) => ({ step: s.step, seconds: +(s.durationMs / 1000).toFixed(2), made: s.output, skipped: s.skipped }));

  return (
    <>
      <PageHeader
        title={`Run ${r.id.slice(-8)}`}
        description={
          <>
            on branch <b>{r.branchName}</b> · started {fmtDate(r.startedAt ?? r.createdAt)} · {fmtDuration(runDuration(r))}
          </>
        }
        actions={
          <>
            <RunStatusBadge status={r.status} testId="run-status" />
            {canRun && active ? (
              <Button variant="outline" data-testid="cancel-run" disabled={cancel.isPending || r.cancelRequested} onClick={() => cancel.mutate({ workspaceId: workspace.id, runId })}>
                <Square /> {r.cancelRequested ? "Cancelling…" : "Cancel"}
              </Button>
            ) : null}
            {canRun && !active ? (
              <Button
                variant="outline"
                data-testid="retry-run"
                disabled={retry.isPending}
                onClick={() => retry.mutate({ workspaceId: workspace.id, pipelineId, branch: r.branchName })}
                title="Starts a new run on the same branch; only missing or failed work runs."
              >
                <RotateCcw /> {r.failures.length ? "Retry failed" : "Run again"}
              </Button>
            ) : null}
          </>
        }
      />
      <PipelineTabs pipelineId={pipelineId} />
      {r.error ? <p className="mb-4 rounded-md border border-destructive/50 p-3 text-sm text-destructive">{r.error}</p> : null}

      <div className="mb-6 grid grid-cols-2 gap-3 sm:grid-cols-5">
        {[
          ["Made", fmtInt(totals.output)],
          ["Skipped (reused)", fmtInt(totals.skipped)],
          ["Errors", fmtInt(totals.errors)],
          ["Tokens", fmtInt(totals.tokens)],
          ["Cost", fmtUsd(totals.cost)],
        ].map(([k, v]) => (
          <div key={k} className="rounded-lg border p-3">
            <div className="text-xs text-muted-foreground">{k}</div>
            <div className="text-lg font-semibold tabular-nums">{v}</div>
          </div>
        ))}
      </div>

      <Card>
        <CardHeader>
          <CardTitle className="flex items-center gap-2">Steps {active ? <Loader2 className="size-4 animate-spin text-muted-foreground" /> : null}</CardTitle>
          <CardDescription>
            Every step of the run, from the start. Items = work items the step found to compute; skipped = work already done (by this or any branch) and reused, at no cost.
            {steps.length ? (
              <span className="mt-1 block" data-testid="step-counts">
                {stepStateCounts(steps)
                  .map(([state, n]) => `${n} ${state}`)
                  .join(" · ")}
              </span>
            ) : null}
          </CardDescription>
        </CardHeader>
        <CardContent>
          {steps.length === 0 ? (
            <p className="text-sm text-muted-foreground">{active ? "Waiting for the first step to start…" : "This run did not process any step."}</p>
          ) : (
            <Table data-testid="run-steps">
              <TableHeader>
                <TableRow>
                  <TableHead>Step</TableHead>
                  <TableHead>Status</TableHead>
                  <TableHead className="text-right">Items</TableHead>
                  <TableHead className="text-right">Input</TableHead>
                  <TableHead className="text-right">Made</TableHead>
                  <TableHead className="text-right">Skipped</TableHead>
                  <TableHead className="text-right">Errors</TableHead>
                  <TableHead className="text-right">Model calls</TableHead>
                  <TableHead className="text-right">Tokens in/out</TableHead>
                  <TableHead className="text-right">Cost</TableHead>
                  <TableHead className="text-right">Duration</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {steps.map((s) => (
                  <TableRow key={s.step} data-testid={`step-row-${s.step}`} data-status={s.status}>
                    <TableCell className="font-medium">
                      {s.step} <span className="text-xs text-muted-foreground">{s.type}</span>
                    </TableCell>
                    <TableCell data-testid={`state-${s.step}`}>
                      <RunStatusBadge status={s.status} />
                      {s.status === "running" && s.items !== undefined ? (
                        <span className="ml-2 text-xs text-muted-foreground">{fmtInt(s.items)} items</span>
                      ) : null}
                      {s.reason ? <span className="mt-1 block text-xs text-muted-foreground">{s.reason}</span> : null}
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid={`items-${s.step}`}>
                      {s.items === undefined ? "—" : fmtInt(s.items)}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">{fmtInt(s.input)}</TableCell>
                    <TableCell className="text-right tabular-nums" data-testid={`made-${s.step}`}>
                      {fmtInt(s.output)}
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid={`skipped-${s.step}`}>
                      {fmtInt(s.skipped)}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">{fmtInt(s.errors)}</TableCell>
                    <TableCell className="text-right tabular-nums">{fmtInt(s.modelCalls)}</TableCell>
                    <TableCell className="text-right tabular-nums">
                      {fmtInt(s.tokensIn)} / {fmtInt(s.tokensOut)}
                    </TableCell>
                    <TableCell className="text-right tabular-nums">{fmtUsd(s.costUsd)}</TableCell>
                    <TableCell className="text-right tabular-nums">{fmtDuration(s.durationMs)}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          )}
        </CardContent>
      </Card>

      {steps.length ? (
        <Card className="mt-6">
          <CardHeader>
            <CardTitle>Timeline</CardTitle>
            <CardDescription>Seconds per step, in execution order.</CardDescription>
          </CardHeader>
          <CardContent>
            <div style={{ height: Math.max(120, steps.length * 36 + 40) }} data-testid="run-timeline">
              <ResponsiveContainer width="100%" height="100%">
                <BarChart data={chart} layout="vertical" margin={{ left: 24, right: 24 }}>
                  <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                  <XAxis type="number" unit=" s" fontSize={12} />
                  <YAxis type="category" dataKey="step" width={110} fontSize={12} />
                  <Tooltip />
                  <Bar dataKey="seconds" fill="var(--color-primary, #6366f1)" radius={3} isAnimationActive={false} />
                </BarChart>
              </ResponsiveContainer>
            </div>
          </CardContent>
        </Card>
      ) : null}

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>
            Failures ({fmtInt(groups.data?.total ?? r.failures.length)}
            {groups.data && groups.data.groups.length > 0 ? ` in ${fmtInt(groups.data.groups.length)} group${groups.data.groups.length === 1 ? "" : "s"}` : ""})
          </CardTitle>
          <CardDescription>
            Identical failures are grouped: the count, the error, and one example with its input and the model’s raw response. “Retry failed” starts a new run that redoes only these.
          </CardDescription>
        </CardHeader>
        <CardContent className="space-y-3">
          {(groups.data?.total ?? r.failures.length) === 0 ? <p className="text-sm text-muted-foreground">No failures.</p> : null}
          {groups.data?.groups.map((g) => (
            <details key={`${g.step}:${g.error}`} className="rounded-md border p-3 text-sm" data-testid="run-failure-group">
              <summary className="cursor-pointer">
                <Badge variant="destructive" data-testid="failure-count">
                  {fmtInt(g.count)}×
                </Badge>{" "}
                <b>{g.step}</b> · {g.error} <span className="text-xs text-muted-foreground">({fmtInt(g.attempts)} attempts in all)</span>
              </summary>
              <div className="mt-2 space-y-2 text-xs" data-testid="run-failure">
                <div className="text-muted-foreground">{g.count > 1 ? `One example of ${fmtInt(g.count)}:` : "The failure:"}</div>
                <div>
                  <span className="text-muted-foreground">Input:</span> <code className="break-all">{g.example.inputKey}</code>
                </div>
                {g.example.rawResponse ? (
                  <pre className="max-h-64 overflow-auto rounded bg-muted p-2 whitespace-pre-wrap">{g.example.rawResponse}</pre>
                ) : (
                  <div className="text-muted-foreground">No raw response (the call failed before the model answered).</div>
                )}
              </div>
            </details>
          ))}
        </CardContent>
      </Card>
      <p className="mt-4 text-xs text-muted-foreground">
        <Link className="underline" href={`${base}/runs?branch=${encodeURIComponent(r.branchName)}`}>
          All runs
        </Link>
      </p>
    </>
  );
}
