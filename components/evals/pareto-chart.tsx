"use client";
import { CartesianGrid, Scatter, ScatterChart, Tooltip, XAxis, YAxis, ZAxis } from "recharts";
import { AXIS_TICK, ChartFrame, compactNumber, SHARE_DOMAIN } from "./chart-frame";
import { RunDot } from "./run-dot";
import { fmtMetric, type CompareChartsData } from "./format";
import { stackCoincident, type StackedPoint } from "./pareto-stacks";

/** Pixels between the centres of runs drawn at one point. */
const SPREAD = 13;

/** One run's dot; runs sharing the point sit side by side around it, the last one carrying their count. */
function StackDot({ cx, cy, stack, fill, stroke }: { cx: number; cy: number; stack: StackedPoint; fill: string; stroke: string }) {
  const last = stack.group[stack.group.length - 1] === stack.id;
  return (
    <g data-testid="pareto-dot" data-run={stack.id} data-stack={stack.size}>
      <circle cx={cx + stack.offset * SPREAD} cy={cy} r={6} fill={fill} stroke={stroke} strokeWidth={2} />
      {last && stack.size > 1 ? (
        <text data-testid="pareto-stack-count" x={cx} y={cy - 11} textAnchor="middle" fontSize={10} fill="currentColor">
          ×{stack.size}
        </text>
      ) : null}
    </g>
  );
}

type Datum = { x: number; y: number; runs?: string[] };

/**
 * Accuracy against cost: one point per run (hollow when another run is at least as accurate for
 * at most the cost), the frontier of the undominated runs as a dashed line, and beside it the list
 * that says, per run, whether it is on the frontier or which runs beat it.
 */
export function ParetoChart({ data, colors }: { data: CompareChartsData; colors: Map<string, string> }) {
  const labels = new Map(data.runs.map((r) => [r.id, r.label]));
  const points = data.pareto.points;
  const stacks = stackCoincident(points);
  const frontier = data.pareto.frontier.map((id) => points.find((p) => p.id === id)!).map((p) => ({ x: p.cost, y: p.value }));
  return (
    <div className="grid gap-3 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
      <ChartFrame testId="chart-pareto" height={280}>
        <ScatterChart margin={{ left: 4, right: 16, top: 8, bottom: 24 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis type="number" dataKey="x" name={data.costLabel} tick={AXIS_TICK} tickFormatter={compactNumber} minTickGap={16} domain={[0, "auto"]} label={{ value: data.costLabel, position: "insideBottom", offset: -14, fontSize: 11 }} />
          <YAxis type="number" dataKey="y" name={data.metric} tick={AXIS_TICK} tickFormatter={(v: number) => fmtMetric(data.metric, v)} width={56} domain={SHARE_DOMAIN} />
          <ZAxis range={[110, 110]} />
          <Tooltip
            cursor={{ strokeDasharray: "3 3" }}
            content={({ active, payload }) => {
              const d = (active ? payload?.[0]?.payload : undefined) as Datum | undefined;
              if (!d?.runs) return null;
              // Every run at the point, not only the one under the pointer.
              return (
                <div className="rounded-md border bg-background px-2 py-1.5 text-xs shadow-sm" data-testid="pareto-tooltip">
                  {d.runs.map((r) => (
                    <div key={r} className="font-medium">
                      {r}
                    </div>
                  ))}
                  <div className="tabular-nums text-muted-foreground">
                    {fmtMetric(data.metric, d.y)} at {compactNumber(d.x)} {data.costLabel}
                  </div>
                </div>
              );
            }}
          />
          <Scatter name="frontier" data={frontier} line={{ stroke: "#334155", strokeDasharray: "5 4" }} shape={() => <g />} legendType="none" isAnimationActive={false} />
          {points.map((p) => (
            <Scatter
              key={p.id}
              name={labels.get(p.id)}
              data={[{ x: p.cost, y: p.value, runs: stacks.get(p.id)!.group.map((id) => labels.get(id) ?? id) } satisfies Datum]}
              fill={p.dominated ? "#ffffff" : colors.get(p.id)}
              stroke={colors.get(p.id)}
              strokeWidth={2}
              shape={(props: { cx?: number; cy?: number }) => (
                <StackDot cx={props.cx ?? 0} cy={props.cy ?? 0} stack={stacks.get(p.id)!} fill={p.dominated ? "#ffffff" : (colors.get(p.id) ?? "#64748b")} stroke={colors.get(p.id) ?? "#64748b"} />
              )}
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
              {stacks.get(p.id)!.size > 1 ? (
                <span className="block text-xs text-muted-foreground" data-testid="pareto-same-point">
                  same point as {stacks.get(p.id)!.group.filter((id) => id !== p.id).map((id) => labels.get(id) ?? id).join(", ")}
                </span>
              ) : null}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
