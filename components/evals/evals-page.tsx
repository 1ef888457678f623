"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { AlertTriangle, FlaskConical, GitCompare } from "lucide-react";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { HistoryChart } from "./charts";
import { EvalRunsTable } from "./eval-runs-table";
import { QuestionSetsPanel } from "./question-sets-panel";
import { RunEvalForm } from "./run-eval-form";

/** The Evals tab of a pipeline: start an eval, the runs table, a metric's history, pick runs to compare. */
export function EvalsPage({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const branch = params.get("branch") ?? "main";
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const pipeline = useQuery(trpc.pipeline.get.queryOptions({ workspaceId: workspace.id, pipelineId, branch }));
  // One list (the pipeline's runs and the template runs beside them) polled while any of them is in
  // progress: a second, unpolled query left template rows frozen at their first state.
  const runs = useQuery({
    ...trpc.evals.list.queryOptions({ workspaceId: workspace.id, pipelineId, withTemplates: true }),
    refetchInterval: (q) => (q.state.data?.some((r) => r.status === "queued" || r.status === "running") ? 1000 : false),
  });
  const all = runs.data ?? [];
  const [selected, setSelected] = useState<string[]>([]);
  const [metric, setMetric] = useState("session_hit@5");
  const queryClient = useQueryClient();
  const cancel = useMutation(trpc.evals.cancel.mutationOptions({ onSettled: () => queryClient.invalidateQueries({ queryKey: trpc.evals.list.queryKey() }) }));

  const toggle = (id: string) => setSelected((s) => (s.includes(id) ? s.filter((x) => x !== id) : [...s, id]));
  const compareHref = selected.length >= 2 ? `${base}/evals/compare?branch=${encodeURIComponent(branch)}&baseline=${selected[0]}&others=${selected.slice(1).join(",")}` : null;
  const completed = all.filter((r) => r.status === "completed");

  return (
    <>
      <PageHeader
        title={pipeline.data ? `${pipeline.data.pipeline.name} · evals` : "Evals"}
        description="Score branches on benchmarks with their cost, and compare them question by question."
      />
      <PipelineTabs pipelineId={pipelineId} />
      <div className="grid gap-6">
        <RunEvalForm
          pipelineId={pipelineId}
          branches={(pipeline.data?.branches ?? []).map((b) => b.name)}
          defaultBranch={branch}
          steps={pipeline.data ? [...pipeline.data.version.spec.sources.map((s) => s.name), ...pipeline.data.version.spec.steps.map((s) => s.name)] : []}
        />
        {runs.isPending ? (
          <Skeleton className="h-48 w-full" />
        ) : runs.isError ? (
          <EmptyState icon={AlertTriangle} title="Evals could not be loaded" description={errorMessage(runs.error)} />
        ) : all.length === 0 ? (
          <EmptyState icon={FlaskConical} title="No evals yet" description="Upload a LoCoMo file above (or pick an imported benchmark) and press Run eval. Add the BM25 baselines to have something to beat." />
        ) : (
          <section className="grid gap-3">
            <div className="flex flex-wrap items-center justify-between gap-3">
              <h2 className="text-base font-semibold">Eval runs</h2>
              <div className="flex flex-wrap items-center gap-2 text-sm text-muted-foreground">
                {selected.length ? `Baseline: ${all.find((r) => r.id === selected[0])?.label ?? "?"} · ${selected.length - 1} other(s)` : "Tick runs to compare: the first ticked is the baseline."}
                <Button size="sm" disabled={!compareHref} onClick={() => compareHref && router.push(compareHref)} data-testid="compare-selected">
                  <GitCompare className="size-4" /> Compare
                </Button>
              </div>
            </div>
            <EvalRunsTable runs={all} selected={selected} onToggle={toggle} onCancel={(id) => cancel.mutate({ workspaceId: workspace.id, id })} />
          </section>
        )}
        {completed.length > 1 && (
          <section className="grid gap-2">
            <div className="flex items-center justify-between">
              <h2 className="text-base font-semibold">History</h2>
              <select className="rounded-md border bg-background px-2 py-1 text-sm" value={metric} onChange={(e) => setMetric(e.target.value)} aria-label="History metric">
                {["session_hit@1", "session_hit@5", "evidence_recall@2k", "mrr", "context_tokens"].map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
            </div>
            <HistoryChart runs={completed} metric={metric} />
          </section>
        )}
        <QuestionSetsPanel pipelineId={pipelineId} />
        <p className="text-sm text-muted-foreground">
          Several architectures on one benchmark: the workspace <Link className="text-primary hover:underline" href={`/w/${workspace.slug}/compare`}>Compare</Link> page.
        </p>
      </div>
    </>
  );
}
