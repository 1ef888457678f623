"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { AlertTriangle, Loader2, Play, Workflow } from "lucide-react";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useEffect, useMemo, useRef, useState } from "react";
import { TryArchitecture } from "@/components/branches/try-architecture";
import { FlowGraph, type GraphEdge, type GraphNode } from "@/components/lineage/flow-graph";
import { fmtDate, fmtInt, fmtUsd, runTotals } from "@/components/runs/format";
import { RunStatusBadge } from "@/components/runs/run-status-badge";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC, type RouterOutputs } from "@/lib/trpc";
import { PipelineTabs } from "./pipeline-tabs";
import { QuickAdd } from "./quick-add";
import { UploadDropzone } from "./upload-dropzone";

/** Above this estimated cost the Run button asks first. */
export const RUN_CONFIRM_THRESHOLD_USD = 1;

const fromList = (from: string | string[]) => (Array.isArray(from) ? from : [from]);

/** A plan row: the engine's plan, with the cost fields when the costed plan answered. */
type PlanRow = RouterOutputs["run"]["plan"][number] &
  Partial<
    Pick<
      RouterOutputs["provider"]["planCost"]["steps"][number],
      "model" | "estimatedTokensIn" | "estimatedTokensOut" | "estimatedCostUsd" | "estimatedTokensRange" | "estimatedCostRange" | "basis" | "calibrationRuns" | "calls"
    >
  >;

/** Where a step's token estimate comes from, in words. */
function basisText(r: PlanRow): string | null {
  const runs = `${r.calibrationRuns ?? 0} earlier run${r.calibrationRuns === 1 ? "" : "s"}`;
  if (!r.calls) return null;
  if (r.basis === "calibrated") return `from ${runs} of this step`;
  if (r.basis === "calibrated-prompt") return `from ${runs} with this prompt`;
  if (r.basis === "tokenizer") return "tokenizer estimate (no run yet)";
  return null;
}

/** "1.2k–4.8k" for an uncalibrated range, the point estimate once a run calibrated it. */
function rangeText(point: number, range: [number, number] | null | undefined, fmt: (n: number) => string) {
  return range && fmt(range[0]) !== fmt(range[1]) ? `${fmt(range[0])}–${fmt(range[1])}` : fmt(point);
}
const fmtTokens = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : fmtInt(Math.round(n)));

/** ": summaries gpt-4o vs gpt-4o-mini" for the steps whose model differs from main's. */
function modelChange(rows: PlanRow[], mainModels: Map<string, string | null>): string {
  const parts = rows
    .filter((r) => r.model && mainModels.has(r.step) && mainModels.get(r.step) !== r.model)
    .map((r) => `${r.step} ${r.model} vs ${mainModels.get(r.step) ?? "no model"}`);
  return parts.length ? `: ${parts.join(", ")}` : "";
}

export function PipelineOverview({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const canRun = useCan("runs:write");
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const params = useSearchParams();
  const branch = params.get("branch") ?? "main";
  const ref = { workspaceId: workspace.id, pipelineId, branch };
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;

  const runs = useQuery({
    ...trpc.run.list.queryOptions({ workspaceId: workspace.id, pipelineId }),
    refetchInterval: (q) => (q.state.data?.some((r) => r.status === "queued" || r.status === "running") ? 1500 : false),
  });
  const active = runs.data?.some((r) => r.status === "queued" || r.status === "running") ?? false;
  const pipeline = useQuery(trpc.pipeline.get.queryOptions(ref));
  const mainPipeline = useQuery({ ...trpc.pipeline.get.queryOptions({ ...ref, branch: "main" }), enabled: branch !== "main" });
  const mainModels = useMemo(
    () => new Map((mainPipeline.data?.version.spec.steps ?? []).map((s) => [s.name, "model" in s ? ((s.model as string | undefined) ?? null) : null])),
    [mainPipeline.data],
  );
  const status = useQuery({ ...trpc.pipeline.status.queryOptions(ref), refetchInterval: active ? 2000 : false });
  const planCost = useQuery({ ...trpc.provider.planCost.queryOptions(ref), retry: false, refetchInterval: active ? 3000 : false });
  const planBasic = useQuery({ ...trpc.run.plan.queryOptions(ref), enabled: planCost.isError, refetchInterval: active ? 3000 : false });

  const [confirm, setConfirm] = useState(false);
  const start = useMutation(
    trpc.run.start.mutationOptions({
      onSuccess: (run) => {
        toast.success("Run started");
        void queryClient.invalidateQueries({ queryKey: trpc.run.list.queryKey() });
        router.push(`${base}/runs/${run.id}?branch=${encodeURIComponent(branch)}`);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );

  const refreshAll = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.pipeline.status.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.provider.planCost.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.run.plan.queryKey() });
  };

  // When a run finishes, counts, staleness and the plan change.
  const wasActive = useRef(active);
  useEffect(() => {
    if (wasActive.current && !active) refreshAll();
    wasActive.current = active;
  });

  const spec = pipeline.data?.version.spec;
  const statusBy = useMemo(() => new Map((status.data ?? []).map((s) => [s.name, s])), [status.data]);
  const planRows: PlanRow[] | undefined = planCost.data?.steps ?? planBasic.data;
  const planBy = useMemo(() => new Map((planRows ?? []).map((p) => [p.step, p])), [planRows]);
  // Only this branch's runs: another branch's last run is not this branch's state.
  const branchRuns = runs.data?.filter((r) => r.branchId === pipeline.data?.branch.id);
  const lastBranchRun = branchRuns?.[0];
  const lastRunSteps = useMemo(() => {
    return new Map((lastBranchRun?.stats.steps ?? []).map((x) => [x.step, x]));
  }, [lastBranchRun]);

  const graph = useMemo(() => {
    if (!spec) return { nodes: [] as GraphNode[], edges: [] as GraphEdge[] };
    const nodes: GraphNode[] = [];
    const edges: GraphEdge[] = [];
    for (const s of spec.sources) {
      const st = statusBy.get(s.name);
      nodes.push({
        id: s.name,
        kind: "source",
        title: s.name,
        subtitle: s.format,
        testId: `dag-node-${s.name}`,
        body: <span>{fmtInt(st?.records)} records</span>,
      });
    }
    for (const s of spec.steps) {
      const st = statusBy.get(s.name);
      const changed = (st?.stale ?? 0) > 0;
      const plan = planBy.get(s.name);
      const last = lastRunSteps.get(s.name);
      nodes.push({
        id: s.name,
        kind: "step",
        title: s.name,
        subtitle: s.type,
        testId: `dag-node-${s.name}`,
        body: (
          <div className="flex flex-wrap items-center gap-1">
            <span>{fmtInt(st?.records)} records</span>
            {changed ? (
              <Badge variant="warning" data-testid={`changed-${s.name}`}>
                changed · {fmtInt(st?.stale)} stale
              </Badge>
            ) : null}
            {plan && plan.pending > 0 ? <Badge variant="outline">{fmtInt(plan.pending)} pending</Badge> : null}
            {last ? <RunStatusBadge status={last.status} /> : null}
          </div>
        ),
      });
      for (const f of fromList(s.from)) edges.push({ from: f, to: s.name });
    }
    for (const o of spec.outputs) {
      nodes.push({ id: `output:${o.name}`, kind: "output", title: o.name, subtitle: o.surface });
      for (const f of fromList(o.from)) edges.push({ from: f, to: `output:${o.name}` });
    }
    return { nodes, edges };
  }, [spec, statusBy, planBy, lastRunSteps]);

  if (pipeline.isPending) {
    return (
      <div className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-80 w-full" />
      </div>
    );
  }
  if (pipeline.isError || !spec) {
    return (
      <EmptyState
        icon={AlertTriangle}
        title="This pipeline could not be loaded"
        description={errorMessage(pipeline.error)}
        action={
          <Button asChild variant="outline">
            <Link href={`/w/${workspace.slug}/pipelines`}>Back to pipelines</Link>
          </Button>
        }
      />
    );
  }
  const p = pipeline.data;
  const totalPending = (planRows ?? []).reduce((a, r) => a + r.pending, 0);
  const estCost = planCost.data?.totals.estimatedCostUsd ?? 0;
  const sourceRecords = spec.sources.reduce((a, s) => a + (statusBy.get(s.name)?.records ?? 0), 0);
  const missingProviders = planCost.data?.providerProblems ?? [];
  // The Run button waits for a current plan: the cost confirmation below reads it, and a stale
  // estimate (before an upload's refresh lands) would start an expensive run without asking.
  const planSettling = (!planRows && !planBasic.isError) || planCost.isFetching;
  const doRun = () => start.mutate(ref);
  const onRunClick = () => (estCost > RUN_CONFIRM_THRESHOLD_USD ? setConfirm(true) : doRun());

  return (
    <>
      <PageHeader
        title={p.pipeline.name}
        description={
          <>
            {p.pipeline.agent ? <>Agent: {p.pipeline.agent} · </> : null}
            {p.pipeline.description || "A memory pipeline."} · version {p.version.hash?.slice(0, 8)}
          </>
        }
        actions={<TryArchitecture pipelineId={pipelineId} />}
      />
      <PipelineTabs pipelineId={pipelineId} />

      <Card>
          <CardHeader>
            <CardTitle className="flex items-center gap-2">
              Graph
              {lastBranchRun ? (
                <span className="flex items-center gap-1 text-xs font-normal text-muted-foreground">
                  last run on {branch} <RunStatusBadge status={lastBranchRun.status} testId="last-run-status" /> {fmtDate(lastBranchRun.createdAt)}
                </span>
              ) : runs.data && pipeline.data ? (
                <span className="text-xs font-normal text-muted-foreground" data-testid="no-branch-runs">
                  no run on {branch} yet
                </span>
              ) : null}
            </CardTitle>
            <CardDescription>Records per step on {branch}. “changed” means some records were made by an older version of the step (its prompt, model or something upstream changed).</CardDescription>
          </CardHeader>
          <CardContent>
            {graph.nodes.length ? (
              <FlowGraph nodes={graph.nodes} edges={graph.edges} height={300} testId="pipeline-dag" />
            ) : (
              <EmptyState icon={Workflow} title="No steps yet" description="Open the canvas to add sources, steps and outputs." />
            )}
          </CardContent>
      </Card>

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>Sources</CardTitle>
          <CardDescription>Raw history goes in here once; it never moves again. Re-uploading a newer export adds only what changed.</CardDescription>
        </CardHeader>
        <CardContent>
          {spec.sources.length === 0 ? <p className="text-sm text-muted-foreground">No sources. Add one in the canvas.</p> : null}
          <div className="grid gap-5 md:grid-cols-2 xl:grid-cols-3">
            {spec.sources.map((s) => (
              <div key={s.name} className="space-y-2" data-testid={`source-${s.name}`}>
                <div className="flex items-center justify-between text-sm">
                  <span className="font-medium">{s.name}</span>
                  <span className="text-muted-foreground">
                    {s.format} · <span data-testid={`source-count-${s.name}`}>{fmtInt(statusBy.get(s.name)?.records)}</span> records
                  </span>
                </div>
                <UploadDropzone pipelineId={pipelineId} source={s.name} onImported={refreshAll} />
                <QuickAdd pipelineId={pipelineId} source={s.name} onAdded={refreshAll} />
              </div>
            ))}
          </div>
        </CardContent>
      </Card>

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>Plan</CardTitle>
          <CardDescription>
            What a run on <b>{branch}</b> would compute now: only missing work runs; everything already made (on any branch) is reused.
          </CardDescription>
        </CardHeader>
        <CardContent>
          {sourceRecords === 0 && !status.isPending ? (
            <EmptyState
              className="mb-4 py-6"
              title="Nothing to run yet"
              description="Upload a chat export (or any file) to a source above; the plan then shows what a run would make."
            />
          ) : null}
          {missingProviders.length ? (
            <div data-testid="provider-problems" className="mb-4 rounded-md border border-destructive/50 bg-destructive/5 px-3 py-2 text-sm text-destructive">
              <div className="font-medium">A run cannot start until every model has a provider:</div>
              <ul className="mt-1 list-disc pl-5">
                {missingProviders.map((m) => (
                  <li key={`${m.step}:${m.message}`}>
                    <b>{m.step}</b>: {m.message}
                  </li>
                ))}
              </ul>
              <Link className="mt-1 inline-block font-medium underline" href={`/w/${workspace.slug}/settings/models`}>
                Open Settings → Models
              </Link>
            </div>
          ) : null}
          {planCost.isPending && planBasic.isPending && !planRows ? (
            <Skeleton className="h-40 w-full" />
          ) : planRows ? (
            <Table data-testid="plan-table">
              <TableHeader>
                <TableRow>
                  <TableHead>Step</TableHead>
                  <TableHead>Type</TableHead>
                  <TableHead className="text-right">Records</TableHead>
                  <TableHead className="text-right">Pending</TableHead>
                  <TableHead className="text-right">Tokens (est.)</TableHead>
                  <TableHead className="text-right">Cost (est.)</TableHead>
                  <TableHead>State</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {planRows.map((r) => {
                  const st = statusBy.get(r.step);
                  return (
                    <TableRow key={r.step} data-testid={`step-row-${r.step}`} data-changed={(st?.stale ?? 0) > 0 ? "true" : "false"}>
                      <TableCell className="font-medium">{r.step}</TableCell>
                      <TableCell className="text-muted-foreground">
                        {r.type}
                        {r.model ? <span className="ml-1 text-xs">· {r.model}</span> : null}
                      </TableCell>
                      <TableCell className="text-right tabular-nums">{fmtInt(st?.records)}</TableCell>
                      <TableCell className="text-right tabular-nums" data-testid={`pending-${r.step}`} title={r.estimated ? "estimated: upstream work is pending" : undefined}>
                        {r.estimated ? "~" : ""}
                        {fmtInt(r.pending)}
                      </TableCell>
                      <TableCell
                        className="text-right tabular-nums"
                        data-testid={`tokens-${r.step}`}
                        title={r.estimatedTokensRange ? "a range until a run calibrates this step" : undefined}
                      >
                        {r.estimatedTokensIn != null ? rangeText((r.estimatedTokensIn ?? 0) + (r.estimatedTokensOut ?? 0), r.estimatedTokensRange, fmtTokens) : "—"}
                        {basisText(r) ? (
                          <span className="block text-[11px] text-muted-foreground" data-testid={`basis-${r.step}`}>
                            {basisText(r)}
                          </span>
                        ) : null}
                      </TableCell>
                      <TableCell className="text-right tabular-nums">{r.estimatedCostUsd != null ? rangeText(r.estimatedCostUsd, r.estimatedCostRange, fmtUsd) : "—"}</TableCell>
                      <TableCell>
                        {(st?.stale ?? 0) > 0 ? (
                          <Badge variant="warning" data-testid={`state-${r.step}`}>
                            changed
                          </Badge>
                        ) : r.pending > 0 ? (
                          <Badge variant="outline" data-testid={`state-${r.step}`}>
                            pending
                          </Badge>
                        ) : (
                          <Badge variant="success" data-testid={`state-${r.step}`}>
                            up to date
                          </Badge>
                        )}
                      </TableCell>
                    </TableRow>
                  );
                })}
              </TableBody>
            </Table>
          ) : (
            <p className="text-sm text-destructive">{errorMessage(planBasic.error ?? planCost.error)}</p>
          )}
          <div className="mt-4 flex flex-wrap items-center justify-between gap-3">
            <div className="text-sm text-muted-foreground">
              <span data-testid="plan-totals">
                {fmtInt(totalPending)} work items · estimated{" "}
                {planCost.data?.totals.estimatedTokensRange
                  ? `${rangeText(0, planCost.data.totals.estimatedTokensRange, fmtTokens)} tokens, ${rangeText(estCost, planCost.data.totals.estimatedCostRange, fmtUsd)} (a range until the first run calibrates it)`
                  : fmtUsd(estCost)}
              </span>
              {planCost.data && branch !== "main" ? (
                <div data-testid="cost-ratio" className="mt-1">
                  {planCost.data.costRatioVsMain === null || planCost.data.costRatioVsMain === undefined
                    ? `A full run of ${branch} costs ${fmtUsd(planCost.data.totals.fullCostUsd)}; main costs nothing.`
                    : `A full run of ${branch} costs ${planCost.data.costRatioVsMain}× main (${fmtUsd(planCost.data.totals.fullCostUsd)} vs ${fmtUsd(planCost.data.main?.fullCostUsd ?? 0)})${modelChange(planRows ?? [], mainModels)}.`}
                </div>
              ) : null}
              {planCost.data?.warning ? <span className="ml-2 text-warning-foreground">{planCost.data.warning}</span> : null}
              {planCost.isError ? <span className="ml-2">(cost estimate unavailable)</span> : null}
            </div>
            <div className="flex items-center gap-2">
              <Button asChild variant="outline">
                <Link href={`${base}/runs?branch=${encodeURIComponent(branch)}`}>Runs</Link>
              </Button>
              <Button asChild variant="outline">
                <Link href={`${base}/explore?branch=${encodeURIComponent(branch)}`}>Explore</Link>
              </Button>
              <Button asChild variant="outline">
                <Link href={`${base}/canvas?branch=${encodeURIComponent(branch)}`}>Canvas</Link>
              </Button>
              {canRun ? (
                <Button
                  data-testid="run-button"
                  onClick={onRunClick}
                  disabled={start.isPending || active || missingProviders.length > 0 || planSettling}
                  title={missingProviders.length ? missingProviders[0]!.message : undefined}
                >
                  {start.isPending || active ? <Loader2 className="animate-spin" /> : <Play />}
                  {active ? "Running…" : totalPending === 0 ? "Run (nothing pending)" : "Run"}
                </Button>
              ) : (
                <span className="text-xs text-muted-foreground">Your role cannot start runs.</span>
              )}
            </div>
          </div>
        </CardContent>
      </Card>

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>Outputs</CardTitle>
          <CardDescription>What agents query.</CardDescription>
        </CardHeader>
        <CardContent>
          {spec.outputs.length === 0 ? (
            <p className="text-sm text-muted-foreground">No outputs: add a search index or a projection in the canvas so agents can read this memory.</p>
          ) : (
            <Table>
              <TableHeader>
                <TableRow>
                  <TableHead>Output</TableHead>
                  <TableHead>Surface</TableHead>
                  <TableHead>Reads</TableHead>
                  <TableHead>Endpoint</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                {spec.outputs.map((o) => (
                  <TableRow key={o.name}>
                    <TableCell className="font-medium">{o.name}</TableCell>
                    <TableCell>{o.surface}</TableCell>
                    <TableCell className="text-muted-foreground">{fromList(o.from).join(", ")}</TableCell>
                    <TableCell className="font-mono text-xs">
                      {o.surface === "search"
                        ? `GET /api/v1/pipelines/${pipelineId}/search?output=${o.name}&query=…`
                        : `GET /api/v1/pipelines/${pipelineId}/outputs/${o.name}`}
                      <Link className="ml-2 font-sans text-primary underline-offset-4 hover:underline" href={`/w/${workspace.slug}/api`}>
                        API reference
                      </Link>
                      {o.surface === "search" ? (
                        <Link className="ml-2 font-sans text-primary underline-offset-4 hover:underline" href={`${base}/explore?branch=${encodeURIComponent(branch)}`}>
                          try it
                        </Link>
                      ) : null}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          )}
        </CardContent>
      </Card>

      {lastBranchRun ? (
        <p className="mt-4 text-xs text-muted-foreground">
          Last run on {branch}: <RunStatusBadge status={lastBranchRun.status} />{" "}
          <Link className="underline" href={`${base}/runs/${lastBranchRun.id}?branch=${encodeURIComponent(branch)}`}>
            {fmtInt(runTotals(lastBranchRun.stats).output)} records made, {fmtInt(runTotals(lastBranchRun.stats).skipped)} skipped
          </Link>
        </p>
      ) : null}

      <Dialog open={confirm} onOpenChange={setConfirm}>
        <DialogContent>
          <DialogHeader>
            <DialogTitle>Run for about {fmtUsd(estCost)}?</DialogTitle>
            <DialogDescription>
              This run is estimated at {fmtUsd(estCost)} ({fmtInt(totalPending)} work items), above the {fmtUsd(RUN_CONFIRM_THRESHOLD_USD)} confirmation threshold.
            </DialogDescription>
          </DialogHeader>
          <DialogFooter>
            <Button variant="outline" onClick={() => setConfirm(false)}>
              Cancel
            </Button>
            <Button
              data-testid="confirm-run"
              onClick={() => {
                setConfirm(false);
                doRun();
              }}
            >
              Run
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </>
  );
}
