"use client";
import { CartesianGrid, Scatter, ScatterChart, Tooltip, XAxis, YAxis, ZAxis } from "recharts";
import { AXIS_TICK, ChartFrame, compactNumber, SHARE_DOMAIN } from "./chart-frame";
import { RunDot } from "./run-dot";
import { fmtMetric, type CompareChartsData } from "./format";

/**
 * Accuracy against cost: one point per run (hollow when another run is at least as accurate for
 * at most the cost), the frontier of the undominated runs as a dashed line, and beside it the list
 * that says, per run, whether it is on the frontier or which runs beat it.
 */
export function ParetoChart({ data, colors }: { data: CompareChartsData; colors: Map<string, string> }) {
  const labels = new Map(data.runs.map((r) => [r.id, r.label]));
  const points = data.pareto.points;
  const frontier = data.pareto.frontier.map((id) => points.find((p) => p.id === id)!).map((p) => ({ x: p.cost, y: p.value }));
  return (
    <div className="grid gap-3 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
      <ChartFrame testId="chart-pareto" height={280}>
        <ScatterChart margin={{ left: 4, right: 16, top: 8, bottom: 24 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis type="number" dataKey="x" name={data.costLabel} tick={AXIS_TICK} tickFormatter={compactNumber} minTickGap={16} domain={[0, "auto"]} label={{ value: data.costLabel, position: "insideBottom", offset: -14, fontSize: 11 }} />
          <YAxis type="number" dataKey="y" name={data.metric} tick={AXIS_TICK} tickFormatter={(v: number) => fmtMetric(data.metric, v)} width={56} domain={SHARE_DOMAIN} />
          <ZAxis range={[110, 110]} />
          <Tooltip cursor={{ strokeDasharray: "3 3" }} formatter={(v, n) => [typeof v === "number" ? compactNumber(v) : String(v), String(n)]} />
          <Scatter name="frontier" data={frontier} line={{ stroke: "#334155", strokeDasharray: "5 4" }} shape={() => <g />} legendType="none" isAnimationActive={false} />
          {points.map((p) => (
            <Scatter
              key={p.id}
              name={labels.get(p.id)}
              data={[{ x: p.cost, y: p.value }]}
              fill={p.dominated ? "#ffffff" : colors.get(p.id)}
              stroke={colors.get(p.id)}
              strokeWidth={2}
              data-dominated={p.dominated}
              isAnimationActive={false}
            />
          ))}
        </ScatterChart>
      </ChartFrame>
      <ul className="grid content-start gap-1.5 text-sm" data-testid="pareto-legend">
        {points.map((p) => (
          <li key={p.id} className="flex min-w-0 items-start gap-2" data-testid="pareto-run" data-dominated={p.dominated}>
            <span className="pt-1">
              <RunDot color={colors.get(p.id)!} hollow={p.dominated} />
            </span>
            <span className="min-w-0 break-words">
              <span className="font-medium">{labels.get(p.id)}</span>{" "}
              <span className="tabular-nums text-muted-foreground">
                {fmtMetric(data.metric, p.value)} at {compactNumber(p.cost)}
              </span>
              <span className="block text-xs text-muted-foreground">{p.dominated ? `dominated by ${p.dominatedBy.map((id) => labels.get(id)).join(", ")}` : "on the frontier"}</span>
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
