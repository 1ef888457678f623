/**
 * Runs that land on the same point of the Pareto chart (equal value and equal cost, e.g. the same
 * pipeline scored twice): issue 48 — they were one dot. Each coincident run gets its place in a
 * small row centred on the point (`offset`, in dot widths), the group's size and every run of it,
 * so the chart draws them side by side with a count and the tooltip lists them all.
 */
export interface StackedPoint {
  id: string;
  /** This run's place in its group, centred on the true point: −0.5 and 0.5 for two, −1, 0, 1 for three. */
  offset: number;
  /** Runs at this point (1: alone). */
  size: number;
  /** The ids of every run at this point, in the input order. */
  group: string[];
}

export function stackCoincident(points: ReadonlyArray<{ id: string; cost: number; value: number }>): Map<string, StackedPoint> {
  const groups = new Map<string, string[]>();
  for (const p of points) {
    const key = `${p.cost}|${p.value}`;
    groups.set(key, [...(groups.get(key) ?? []), p.id]);
  }
  const out = new Map<string, StackedPoint>();
  for (const group of groups.values()) {
    group.forEach((id, i) => out.set(id, { id, offset: i - (group.length - 1) / 2, size: group.length, group }));
  }
  return out;
}
