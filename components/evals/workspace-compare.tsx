"use client";
import { useQuery } from "@tanstack/react-query";
import { FlaskConical, Link as LinkIcon } from "lucide-react";
import { usePathname, useSearchParams } from "next/navigation";
import { useCallback, useMemo, useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { Button } from "@/components/ui/button";
import { toast } from "@/components/ui/sonner";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { useTRPC } from "@/lib/trpc";
import { CompareView } from "./compare-view";
import type { EvalLeaderboard } from "./format";
import { chosenDataset as chooseDataset, latestRuns, MAX_COMPARE_RUNS, parseSelection, selectedRunIds } from "./compare-selection";
import { Leaderboard } from "./leaderboard";
import { RunPicker } from "./run-picker";
import { ScoreTemplates } from "./score-templates";

const selectClass = "h-9 rounded-md border bg-background px-2 text-sm";

/** `?dataset=…&baseline=…&runs=a,b`: the selection lives in the URL, so a link shows the same comparison. */
function useSelection() {
  const params = useSearchParams();
  const pathname = usePathname();
  const set = useCallback(
    (patch: Record<string, string | null>) => {
      const next = new URLSearchParams(params.toString());
      for (const [k, v] of Object.entries(patch)) {
        if (v) next.set(k, v);
        else next.delete(k);
      }
      // The browser's own history (Next keeps useSearchParams in step): no server round trip, the
      // leaderboard query follows the new selection.
      window.history.replaceState(null, "", `${pathname}?${next.toString()}`);
    },
    [params, pathname],
  );
  return { ...parseSelection((k) => params.get(k)), set };
}

/** Several pipelines (architectures) on one benchmark in one screen: the leaderboard of the latest eval of each, then the details. */
export function WorkspaceCompare() {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const canScore = useCan("evals:write");
  const selection = useSelection();
  const runs = useQuery({
    ...trpc.evals.list.queryOptions({ workspaceId: workspace.id }),
    refetchInterval: (q) => (q.state.data?.some((r) => r.status === "queued" || r.status === "running") ? 1500 : false),
  });
  const datasets = useQuery(trpc.evals.datasets.queryOptions({ workspaceId: workspace.id }));
  const [board, setBoard] = useState<EvalLeaderboard | null>(null);
  const all = useMemo(() => runs.data ?? [], [runs.data]);
  const chosenDataset = chooseDataset(selection, all, datasets.data ?? []);
  const latest = useMemo(() => latestRuns(all, chosenDataset), [all, chosenDataset]);
  const runIds = selectedRunIds(selection, latest);
  const onLoaded = useCallback((b: EvalLeaderboard) => setBoard(b), []);
  const baselineId = board?.baselineId ?? null;
  const others = (board?.rows ?? []).filter((r) => r.status === "completed" && !r.isBaseline && !r.note).map((r) => r.id).slice(0, 10);
  // The baseline is any completed run of the comparison (the leaderboard's rows once it answered).
  const choices = (board?.rows ?? latest).map((r) => ({ id: r.id, label: r.label, version: r.version, status: r.status })).filter((r) => r.status === "completed");
  const addRun = (id: string) => selection.set({ runs: [...runIds.filter((r) => r !== id), id].join(",") });
  const copyLink = async () => {
    const url = new URL(window.location.href);
    url.searchParams.set("dataset", chosenDataset);
    if (baselineId) url.searchParams.set("baseline", baselineId);
    url.searchParams.set("runs", runIds.join(","));
    await navigator.clipboard.writeText(url.toString());
    toast.success("Link to this comparison copied");
  };

  return (
    <>
      <PageHeader title="Compare architectures" description="Every pipeline and template scored on one benchmark, side by side with their cost." />
      <div className="grid gap-4">
        {canScore ? <ScoreTemplates datasetId={chosenDataset} onDataset={(id) => selection.set({ dataset: id, runs: null, baseline: null })} /> : null}
        {runs.isPending ? (
          <Skeleton className="h-64 w-full" />
        ) : all.length === 0 ? (
          <EmptyState icon={FlaskConical} title="No completed evals yet" description="Score templates above, run an eval from a pipeline's Evals tab, or `synthex eval locomo --data <file> --template all`; the results compare here." />
        ) : (
          <div className="grid gap-4">
            <div className="flex flex-wrap items-end gap-4">
              <label className="grid gap-1.5 text-sm">
                Benchmark
                <select className={selectClass} value={chosenDataset} onChange={(e) => selection.set({ dataset: e.target.value, runs: null, baseline: null })} data-testid="compare-dataset">
                  {(datasets.data ?? []).map((d) => (
                    <option key={d.id} value={d.id}>
                      {d.benchmark} · {d.name}
                    </option>
                  ))}
                </select>
              </label>
              <label className="grid gap-1.5 text-sm">
                Baseline
                <select className={selectClass} value={selection.baseline || baselineId || ""} onChange={(e) => selection.set({ baseline: e.target.value })} data-testid="compare-baseline">
                  {choices.map((r) => (
                    <option key={r.id} value={r.id}>
                      {r.label}
                      {r.version ? ` ${r.version}` : ""}
                    </option>
                  ))}
                </select>
              </label>
              <RunPicker selected={[...runIds, ...(baselineId ? [baselineId] : [])]} full={runIds.length >= MAX_COMPARE_RUNS} onAdd={addRun} />
              <Button size="sm" variant="outline" onClick={copyLink} data-testid="compare-copy-link">
                <LinkIcon className="size-3.5" /> Copy link
              </Button>
              {selection.runs ? (
                <Button size="sm" variant="ghost" onClick={() => selection.set({ runs: null })}>
                  Show every run
                </Button>
              ) : null}
            </div>
            <Leaderboard
              runIds={runIds}
              baselineId={selection.baseline || undefined}
              onLoaded={onLoaded}
              onRemove={(id) => selection.set({ runs: runIds.filter((r) => r !== id).join(",") })}
            />
            {/* The details read every question: loaded after the leaderboard, so it shows first. */}
            {board && baselineId ? <CompareView key={`${baselineId}-${others.join(",")}`} baselineId={baselineId} otherIds={others} /> : null}
          </div>
        )}
      </div>
    </>
  );
}
