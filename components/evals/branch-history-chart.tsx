"use client";
import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { AXIS_TICK, ChartFrame, SHARE_DOMAIN } from "./chart-frame";
import { RunDot } from "./run-dot";
import { fmtMetric, type CompareChartsData } from "./format";
import { plural } from "@/components/ui/plural";

const OTHER = "#94a3b8";
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** Tick text for a time axis: seconds within the hour, clock time within a day, the date beyond. */
function timeTick(span: number) {
  const fmt = new Intl.DateTimeFormat(
    "en-US",
    span < HOUR ? { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false } : span < DAY ? { hour: "2-digit", minute: "2-digit", hour12: false } : { month: "short", day: "numeric" },
  );
  return (v: number) => fmt.format(new Date(v));
}

/**
 * A metric over time for the branches on the page (and the baseline pipeline's other branches,
 * in grey): one line per pipeline@branch or template, coloured as its run is everywhere else.
 */
export function BranchHistoryChart({ data, colors }: { data: CompareChartsData; colors: Map<string, string> }) {
  const runByLabel = new Map(data.runs.map((r) => [r.label, r.id]));
  const series = data.history.map((s) => ({ ...s, color: colors.get(runByLabel.get(s.label) ?? "") ?? OTHER, onPage: runByLabel.has(s.label), points: s.points.map((p) => ({ t: Date.parse(p.at), value: p.value, runId: p.runId })) }));
  const times = series.flatMap((s) => s.points.map((p) => p.t));
  const span = times.length ? Math.max(...times) - Math.min(...times) : 0;
  const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });
  if (!times.length) return <p className="text-sm text-muted-foreground">No completed runs of these branches measured {data.metric}.</p>;
  return (
    <div className="grid gap-2">
      <ChartFrame testId="chart-branch-history" height={240}>
        <LineChart margin={{ left: 4, right: 16, top: 8, bottom: 4 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis type="number" dataKey="t" scale="time" domain={span ? ["dataMin", "dataMax"] : ["dataMin - 60000", "dataMax + 60000"]} tick={AXIS_TICK} tickFormatter={timeTick(span || 1)} minTickGap={32} padding={{ left: 16, right: 16 }} allowDuplicatedCategory={false} />
          <YAxis tick={AXIS_TICK} tickFormatter={(v: number) => fmtMetric(data.metric, v)} width={56} domain={SHARE_DOMAIN} />
          <Tooltip labelFormatter={(v) => when.format(new Date(Number(v)))} formatter={(v, n) => [fmtMetric(data.metric, Number(v)), String(n)]} />
          {series.map((s) => (
            <Line key={s.label} data={s.points} dataKey="value" name={s.label} stroke={s.color} strokeDasharray={s.onPage ? undefined : "4 3"} dot={{ r: 3, fill: s.color }} connectNulls isAnimationActive={false} />
          ))}
        </LineChart>
      </ChartFrame>
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs" data-testid="history-legend">
        {series.map((s) => (
          <li key={s.label} className="flex items-center gap-1.5">
            <RunDot color={s.color} hollow={!s.onPage} />
            {s.label} <span className="text-muted-foreground">({plural(s.points.length, "run")})</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
