"use client";
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { fmtMetric, RUN_COLORS, type EvalRunSummary } from "./format";

const axis = { fontSize: 11 };

function Frame({ testId, height = 260, children }: { testId: string; height?: number; children: React.ReactElement }) {
  return (
    <div data-testid={testId} className="w-full rounded-lg border p-3" style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        {children}
      </ResponsiveContainer>
    </div>
  );
}

/** A metric across eval runs over time, one line per pipeline/branch/template. */
export function HistoryChart({ runs, metric }: { runs: EvalRunSummary[]; metric: string }) {
  const ordered = [...runs].sort((a, b) => +new Date(a.createdAt) - +new Date(b.createdAt));
  const labels = [...new Set(ordered.map((r) => r.label))];
  const data = ordered.map((r, i) => ({ at: i + 1, when: new Date(r.createdAt).toLocaleString("en-US"), [r.label]: r.metrics[metric as keyof typeof r.metrics] ?? null }));
  return (
    <Frame testId="chart-history" height={220}>
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
    </Frame>
  );
}
