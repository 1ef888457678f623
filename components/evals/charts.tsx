"use client";
import { CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { AXIS_TICK as axis, ChartFrame } from "./chart-frame";
import { fmtMetric, RUN_COLORS, type EvalRunSummary } from "./format";

/** A metric across eval runs over time, one line per pipeline/branch/template. */
export function HistoryChart({ runs, metric }: { runs: EvalRunSummary[]; metric: string }) {
  const ordered = [...runs].sort((a, b) => +new Date(a.createdAt) - +new Date(b.createdAt));
  const labels = [...new Set(ordered.map((r) => r.label))];
  const data = ordered.map((r, i) => ({ at: i + 1, when: new Date(r.createdAt).toLocaleString("en-US"), [r.label]: r.metrics[metric as keyof typeof r.metrics] ?? null }));
  return (
    <ChartFrame testId="chart-history" height={220} className="rounded-lg border p-3">
      <LineChart data={data} margin={{ left: 0, right: 8, top: 8 }}>
        <CartesianGrid strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="at" tick={axis} />
        <YAxis tick={axis} tickFormatter={(v: number) => fmtMetric(metric, v)} />
        <Tooltip labelFormatter={(_, p) => String(p?.[0]?.payload?.when ?? "")} />
        <Legend />
        {labels.map((l, i) => (
          <Line key={l} dataKey={l} name={l} stroke={RUN_COLORS[i % RUN_COLORS.length]} connectNulls dot isAnimationActive={false} />
        ))}
      </LineChart>
    </ChartFrame>
  );
}
