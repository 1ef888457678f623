/**
 * One colour per eval run, the same in every chart and table of a page (leaderboard, Pareto,
 * heatmap, history, cost per step). Distinct for up to 12 runs: each run id prefers a slot of the
 * palette by its hash (so a run keeps its colour when others join or leave the page, as far as
 * possible), and collisions move to the next free slot in id order — deterministic for a set of
 * ids, whatever order they are passed in. Past 12 runs colours repeat (in slot order).
 */

/** 12 colours distinguishable on white and from each other (Tableau 10 plus two dark ones). */
export const RUN_PALETTE = [
  "#1f77b4", // blue
  "#ff7f0e", // orange
  "#2ca02c", // green
  "#d62728", // red
  "#9467bd", // purple
  "#8c564b", // brown
  "#e377c2", // pink
  "#7f7f7f", // grey
  "#bcbd22", // olive
  "#17becf", // cyan
  "#393b79", // navy
  "#637939", // moss
] as const;

/** FNV-1a: a small stable hash of a run id (no crypto needed in the browser). */
function hash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The colour of each run id among `ids` (duplicates ignored): distinct for up to 12 ids. */
export function runColors(ids: readonly string[]): Map<string, string> {
  const unique = [...new Set(ids)].sort();
  const taken = new Set<number>();
  const out = new Map<string, string>();
  for (const id of unique) {
    let slot = hash(id) % RUN_PALETTE.length;
    if (taken.size < RUN_PALETTE.length) {
      while (taken.has(slot)) slot = (slot + 1) % RUN_PALETTE.length;
    }
    taken.add(slot);
    out.set(id, RUN_PALETTE[slot]!);
  }
  return out;
}

/** The colour one run id prefers on its own (its hash slot): for a run shown without the others. */
export function runColor(id: string): string {
  return RUN_PALETTE[hash(id) % RUN_PALETTE.length]!;
}
