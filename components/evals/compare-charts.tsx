"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { COST_AXES, COST_AXIS_LABELS, type CostAxis } from "@/server/eval/compare-kinds";
import { BranchHistoryChart } from "./branch-history-chart";
import { CategoryHeatmap } from "./category-heatmap";
import { CostPerStep } from "./cost-per-step";
import { CATEGORY_NAMES, HEADLINE_METRICS } from "./format";
import { ParetoChart } from "./pareto-chart";

const selectClass = "rounded-md border bg-background px-2 py-1 text-sm";
type ChartMetric = Exclude<(typeof HEADLINE_METRICS)[number], "context_tokens">;
const CHART_METRICS = HEADLINE_METRICS.filter((m): m is ChartMetric => m !== "context_tokens");

/** The compare page's charts, each answering one question, over the runs of one comparison. */
export function CompareCharts({ baselineId, otherIds, benchmark, colors }: { baselineId: string; otherIds: string[]; benchmark: string; colors: Map<string, string> }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const [metric, setMetric] = useState<ChartMetric>("evidence_recall@2k");
  const [cost, setCost] = useState<CostAxis>("contextTokens");
  const charts = useQuery({ ...trpc.evals.compareCharts.queryOptions({ workspaceId: workspace.id, baselineId, otherIds, metric, cost }), placeholderData: (prev) => prev });
  const names = CATEGORY_NAMES[benchmark] ?? {};
  return (
    <div className="grid gap-6" data-testid="compare-charts">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <label className="flex items-center gap-2">
          Metric
          <select className={selectClass} aria-label="Chart metric" value={metric} onChange={(e) => setMetric(e.target.value as ChartMetric)}>
            {CHART_METRICS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <label className="flex items-center gap-2">
          Cost
          <select className={selectClass} aria-label="Cost axis" value={cost} onChange={(e) => setCost(e.target.value as CostAxis)}>
            {COST_AXES.map((c) => (
              <option key={c} value={c}>
                {COST_AXIS_LABELS[c]}
              </option>
            ))}
          </select>
        </label>
      </div>
      {charts.isPending ? (
        <Skeleton className="h-72 w-full" />
      ) : charts.isError ? (
        <p className="text-sm text-destructive">The charts could not be loaded: {errorMessage(charts.error)}</p>
      ) : (
        <>
          <section className="grid gap-2">
            <h2 className="text-base font-semibold">Accuracy against cost: which runs are dominated</h2>
            <ParetoChart data={charts.data} colors={colors} />
          </section>
          <section className="grid gap-2">
            <h2 className="text-base font-semibold">Per category, against the baseline</h2>
            <CategoryHeatmap data={charts.data} colors={colors} names={names} />
          </section>
          <section className="grid gap-2">
            <h2 className="text-base font-semibold">Over time, per branch</h2>
            <BranchHistoryChart data={charts.data} colors={colors} />
          </section>
          <section className="grid gap-2">
            <h2 className="text-base font-semibold">Cost per step</h2>
            <CostPerStep data={charts.data} colors={colors} />
          </section>
        </>
      )}
    </div>
  );
}
