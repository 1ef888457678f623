"use client";
import { useQuery } from "@tanstack/react-query";
import { FlaskConical } from "lucide-react";
import { useMemo, useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { RunStatusBadge } from "@/components/runs/run-status-badge";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { useTRPC } from "@/lib/trpc";
import { CompareView } from "./compare-view";
import { ScoreTemplates } from "./score-templates";

const selectClass = "h-9 rounded-md border bg-background px-2 text-sm";

/** Several pipelines (architectures) on one benchmark in one screen: the latest completed eval of each. */
export function WorkspaceCompare() {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const canScore = useCan("evals:write");
  const runs = useQuery({
    ...trpc.evals.list.queryOptions({ workspaceId: workspace.id }),
    refetchInterval: (q) => (q.state.data?.some((r) => r.status === "queued" || r.status === "running") ? 1500 : false),
  });
  const datasets = useQuery(trpc.evals.datasets.queryOptions({ workspaceId: workspace.id }));
  const [datasetId, setDatasetId] = useState("");
  const [baselineLabel, setBaselineLabel] = useState("");
  const completed = useMemo(() => (runs.data ?? []).filter((r) => r.status === "completed"), [runs.data]);
  const chosenDataset = datasetId || completed[0]?.datasetId || datasets.data?.[0]?.id || "";
  const inProgress = (runs.data ?? []).filter((r) => r.datasetId === chosenDataset && (r.status === "queued" || r.status === "running"));
  // The latest completed run per pipeline@branch / template (and search setting) on this dataset.
  const latest = useMemo(() => {
    const seen = new Map<string, (typeof completed)[number]>();
    for (const r of completed.filter((x) => x.datasetId === chosenDataset)) {
      const key = `${r.label}|${r.mode}|${r.step ?? ""}`;
      if (!seen.has(key)) seen.set(key, r);
    }
    return [...seen.values()];
  }, [completed, chosenDataset]);
  const baseline = latest.find((r) => r.label === baselineLabel) ?? latest.find((r) => r.template === "bm25-sessions") ?? latest[0];
  const others = latest.filter((r) => r.id !== baseline?.id).map((r) => r.id);

  return (
    <>
      <PageHeader title="Compare architectures" description="Every pipeline and template scored on one benchmark, side by side with their cost." />
      <div className="grid gap-4">
        {canScore ? <ScoreTemplates datasetId={chosenDataset} onDataset={setDatasetId} /> : null}
        {inProgress.length ? (
          <ul className="grid gap-1 text-sm" data-testid="compare-in-progress">
            {inProgress.map((r) => (
              <li key={r.id} className="flex items-center gap-2 text-muted-foreground">
                <RunStatusBadge status={r.status} /> {r.label}
              </li>
            ))}
          </ul>
        ) : null}
        {runs.isPending ? (
          <Skeleton className="h-64 w-full" />
        ) : completed.length === 0 ? (
          <EmptyState icon={FlaskConical} title="No completed evals yet" description="Score templates above, run an eval from a pipeline's Evals tab, or `synthex eval locomo --data <file> --template all`; the results compare here." />
        ) : (
          <div className="grid gap-4">
            <div className="flex flex-wrap items-end gap-4">
              <label className="grid gap-1.5 text-sm">
                Benchmark
                <select className={selectClass} value={chosenDataset} onChange={(e) => setDatasetId(e.target.value)} data-testid="compare-dataset">
                  {(datasets.data ?? []).map((d) => (
                    <option key={d.id} value={d.id}>
                      {d.benchmark} · {d.name}
                    </option>
                  ))}
                </select>
              </label>
              <label className="grid gap-1.5 text-sm">
                Baseline
                <select className={selectClass} value={baseline?.label ?? ""} onChange={(e) => setBaselineLabel(e.target.value)} data-testid="compare-baseline">
                  {latest.map((r) => (
                    <option key={r.id} value={r.label}>
                      {r.label}
                    </option>
                  ))}
                </select>
              </label>
            </div>
            {baseline ? <CompareView key={`${baseline.id}-${others.join(",")}`} baselineId={baseline.id} otherIds={others} /> : <p className="text-sm text-muted-foreground">No completed eval on this benchmark yet.</p>}
          </div>
        )}
      </div>
    </>
  );
}
