"use client";
import { LOWER_IS_BETTER } from "@/server/eval/metrics";
import { RunDot } from "./run-dot";
import { fmtDelta, fmtMetric, type CompareChartsData } from "./format";
import { heatmapShade, signalMax } from "./heatmap-shade";

/**
 * Per category, each run against the baseline: runs × categories, each cell the delta (the
 * baseline's row its values), coloured by direction and size only when the difference is outside
 * noise (heatmap-shade.ts), neutral otherwise — one glance instead of ten bars.
 */
export function CategoryHeatmap({ data, colors, names }: { data: CompareChartsData; colors: Map<string, string>; names: Record<string, string> }) {
  const { categories, rows } = data.categories;
  const labels = new Map(data.runs.map((r) => [r.id, r.label]));
  const lower = LOWER_IS_BETTER.has(data.metric);
  const max = signalMax(rows.filter((r) => r.runId !== data.baselineId).flatMap((r) => r.cells));
  return (
    <div className="w-full overflow-x-auto" data-testid="chart-category-heatmap">
      <table className="w-full border-separate border-spacing-1 text-sm">
        <thead>
          <tr>
            <th className="w-[30%] text-left text-xs font-medium text-muted-foreground">Run</th>
            {categories.map((c) => (
              <th key={c.key} className="text-center align-bottom text-xs font-medium text-muted-foreground" data-testid="heatmap-category">
                {names[c.key] ? (
                  <>
                    {names[c.key]}
                    <span className="block font-normal">
                      cat. {c.key} · {c.questions} q
                    </span>
                  </>
                ) : (
                  <>
                    {c.key}
                    <span className="block font-normal">{c.questions} q</span>
                  </>
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const baseline = r.runId === data.baselineId;
            return (
              <tr key={r.runId} data-testid="heatmap-row">
                <td className="py-1 pr-2">
                  <span className="flex min-w-0 items-center gap-2">
                    <RunDot color={colors.get(r.runId)!} />
                    <span className="min-w-0 break-words">
                      {labels.get(r.runId)}
                      {baseline && <span className="block text-xs text-muted-foreground">baseline</span>}
                    </span>
                  </span>
                </td>
                {r.cells.map((c) => {
                  const d = !baseline && c.delta !== null ? fmtDelta(data.metric, c.delta) : null;
                  const base = rows.find((x) => x.runId === data.baselineId)?.cells.find((x) => x.category === c.category)?.value ?? null;
                  return (
                    <td
                      key={c.category}
                      data-testid="heatmap-cell"
                      data-delta={c.delta ?? ""}
                      data-noise={baseline || c.delta === null ? undefined : c.withinNoise === false ? "outside" : "within"}
                      data-shaded={!baseline && heatmapShade(c, max, lower) ? "true" : undefined}
                      title={`${labels.get(r.runId)} · ${names[c.category] ?? c.category}: ${fmtMetric(data.metric, c.value)}${
                        baseline ? "" : ` (baseline ${fmtMetric(data.metric, base)})${c.ci95 ? ` · 95% interval ${c.ci95.map((x) => x.toFixed(3)).join(" to ")}` : ""}${c.withinNoise === false ? "" : " · within noise"}`
                      }`}
                      className="rounded px-2 py-1.5 text-center tabular-nums"
                      style={{ background: baseline ? "var(--muted)" : heatmapShade(c, max, lower) }}
                    >
                      {baseline ? fmtMetric(data.metric, c.value) : (d?.text ?? "—")}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className="mt-1 text-xs text-muted-foreground" data-testid="heatmap-legend">
        The baseline&apos;s row shows its {data.metric}; the others their delta to it. A cell is coloured (green better, red worse) only when the difference is outside noise — its 95% interval from
        the leaderboard&apos;s paired bootstrap over that category&apos;s questions excludes zero; uncoloured cells are within noise.
      </p>
    </div>
  );
}
