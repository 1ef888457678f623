/**
 * The per-category heatmap's colour rule: a cell is coloured only when its difference to the
 * baseline is outside noise — its 95% interval (the leaderboard's paired bootstrap, over that
 * category's questions) excludes zero. Green better, red worse; the strength follows the size of
 * the change among the cells that are outside noise. Within noise, or with no interval (too few
 * questions), the cell is neutral: a −0.013 the leaderboard calls noise is never painted red.
 */
export interface HeatmapCell {
  delta: number | null;
  withinNoise: boolean | null;
}

/** The largest |delta| among cells outside noise (what full strength means on this grid). */
export function signalMax(cells: readonly HeatmapCell[]): number {
  return Math.max(0, ...cells.filter((c) => c.withinNoise === false).map((c) => Math.abs(c.delta ?? 0)));
}

/** The cell's background, or undefined (neutral) when the difference may be noise. */
export function heatmapShade(cell: HeatmapCell, max: number, lowerIsBetter: boolean): string | undefined {
  const { delta } = cell;
  if (cell.withinNoise !== false || delta === null || Math.abs(delta) < 1e-9 || max === 0) return undefined;
  const good = lowerIsBetter ? delta < 0 : delta > 0;
  const alpha = 0.2 + 0.42 * Math.min(1, Math.abs(delta) / max);
  return good ? `rgba(22, 163, 74, ${alpha.toFixed(2)})` : `rgba(220, 38, 38, ${alpha.toFixed(2)})`;
}
