"use client";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis, ZAxis } from "recharts";
import { fmtMetric, RUN_COLORS, type ComparedRun, type EvalRunSummary } from "./format";

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

const fixed3 = (v: unknown) => (typeof v === "number" ? v.toFixed(3) : String(v));

/** One bar chart shape for every bar chart here: a category axis, one bar (or stack segment) per series. */
function Bars({ testId, data, xKey, series, stacked, yDomain, format }: {
  testId: string;
  data: Array<Record<string, string | number>>;
  xKey: string;
  series: Array<{ key: string; name: string }>;
  /** Stack the series (cost plan) instead of grouping them side by side. */
  stacked?: boolean;
  yDomain?: [number, number];
  format?: (v: unknown) => string;
}) {
  return (
    <Frame testId={testId}>
      <BarChart data={data} margin={{ left: 0, right: 8, top: 8 }}>
        <CartesianGrid strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey={xKey} tick={axis} interval={0} />
        <YAxis tick={axis} domain={yDomain} />
        <Tooltip formatter={format} />
        <Legend />
        {series.map((s, i) => (
          <Bar key={s.key} dataKey={s.key} name={s.name} stackId={stacked ? "stack" : undefined} fill={RUN_COLORS[(stacked ? i + 1 : i) % RUN_COLORS.length]} isAnimationActive={false} />
        ))}
      </BarChart>
    </Frame>
  );
}

const runSeries = (runs: ComparedRun[]) => runs.map((r) => ({ key: r.id, name: r.label }));

/** Grouped bars: one group per metric, one bar per run. */
export function MetricBars({ runs, metrics }: { runs: ComparedRun[]; metrics: readonly string[] }) {
  const data = metrics.map((m) => ({ metric: m, ...Object.fromEntries(runs.map((r) => [r.id, r.metrics[m as keyof typeof r.metrics] ?? 0])) }));
  return <Bars testId="chart-metrics" data={data} xKey="metric" series={runSeries(runs)} yDomain={[0, 1]} format={fixed3} />;
}

/** Grouped bars of one metric per benchmark category. */
export function CategoryBars({ runs, metric, names }: { runs: ComparedRun[]; metric: string; names: Record<string, string> }) {
  const categories = [...new Set(runs.flatMap((r) => Object.keys(r.perCategory)))].sort();
  const data = categories.map((c) => ({
    category: names[c] ? `${c} ${names[c]}` : c,
    ...Object.fromEntries(runs.map((r) => [r.id, (r.perCategory[c] as Record<string, number> | undefined)?.[metric] ?? 0])),
  }));
  return <Bars testId="chart-categories" data={data} xKey="category" series={runSeries(runs)} format={fixed3} />;
}

/** Accuracy vs cost: x = build cost (USD) or context tokens per query, y = the chosen metric. */
export function CostScatter({ runs, metric, x }: { runs: ComparedRun[]; metric: string; x: "buildCostUsd" | "contextTokens" | "buildTokens" }) {
  const xOf = (r: ComparedRun) => (x === "contextTokens" ? (r.metrics.context_tokens ?? 0) : x === "buildTokens" ? (r.cost.buildTokens ?? 0) : (r.cost.buildCostUsd ?? 0));
  const xLabel = x === "contextTokens" ? "context tokens per query" : x === "buildTokens" ? "build tokens" : "build cost (USD)";
  return (
    <Frame testId="chart-scatter" height={280}>
      <ScatterChart margin={{ left: 0, right: 16, top: 8, bottom: 16 }}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis type="number" dataKey="x" name={xLabel} tick={axis} label={{ value: xLabel, position: "insideBottom", offset: -8, fontSize: 11 }} />
        <YAxis type="number" dataKey="y" name={metric} tick={axis} />
        <ZAxis range={[120, 120]} />
        <Tooltip cursor={{ strokeDasharray: "3 3" }} formatter={(v, n) => [typeof v === "number" ? v.toFixed(4) : String(v), String(n)]} />
        <Legend />
        {runs.map((r, i) => (
          <Scatter key={r.id} name={r.label} data={[{ x: xOf(r), y: r.metrics[metric as keyof typeof r.metrics] ?? 0 }]} fill={RUN_COLORS[i % RUN_COLORS.length]} isAnimationActive={false} />
        ))}
      </ScatterChart>
    </Frame>
  );
}

/** Cost plan per step, side by side: stacked tokens per step, one bar per run. */
export function CostPlanBars({ runs }: { runs: ComparedRun[] }) {
  const steps = [...new Set(runs.flatMap((r) => (r.cost.perStep ?? []).map((s) => s.step)))];
  const data = runs.map((r) => ({ run: r.label, ...Object.fromEntries((r.cost.perStep ?? []).map((s) => [s.step, s.tokensIn + s.tokensOut])) }));
  return <Bars testId="chart-cost-plan" data={data} xKey="run" series={steps.map((s) => ({ key: s, name: `${s} tokens` }))} stacked />;
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
