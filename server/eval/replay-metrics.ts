/**
 * How two rankings of the same query differ (issue 37's replay): overlap@k, rank-biased overlap
 * (extrapolated, Webber et al. 2010: identical lists score 1), hits gained and lost, citation
 * recall of the records an `ask` cited, and a paired 95% interval of per-query differences
 * (Student's t; identical inputs give [0, 0]).
 */

/** |A_k ∩ B_k| / max(|A_k|, |B_k|): 1 for identical lists (also shorter than k), 1 for two empty ones. */
export function overlapAtK(a: string[], b: string[], k: number): number {
  const A = a.slice(0, k);
  const B = new Set(b.slice(0, k));
  const denom = Math.max(A.length, B.size);
  if (denom === 0) return 1;
  return A.filter((id) => B.has(id)).length / denom;
}

/**
 * Extrapolated rank-biased overlap at depth k = min(k, longer list):
 * RBO_ext = (X_k / k)·p^k + ((1 − p) / p)·Σ_{d=1..k} (X_d / d)·p^d, X_d = |A_d ∩ B_d|.
 */
export function rankBiasedOverlap(a: string[], b: string[], k: number, p = 0.9): number {
  const depth = Math.min(k, Math.max(a.length, b.length));
  if (depth === 0) return 1;
  const seenA = new Set<string>();
  const seenB = new Set<string>();
  let x = 0;
  let sum = 0;
  for (let d = 1; d <= depth; d++) {
    const ia = a[d - 1];
    const ib = b[d - 1];
    if (ia !== undefined && ia === ib) x++;
    else {
      if (ia !== undefined && seenB.has(ia)) x++;
      if (ib !== undefined && seenA.has(ib)) x++;
    }
    if (ia !== undefined) seenA.add(ia);
    if (ib !== undefined) seenB.add(ib);
    sum += (x / d) * p ** d;
  }
  return (x / depth) * p ** depth + ((1 - p) / p) * sum;
}

/** What the branch serves that main does not (gained) and the reverse (lost), in the top k. */
export function gainedLost(main: string[], branch: string[], k: number): { gained: string[]; lost: string[] } {
  const M = main.slice(0, k);
  const B = branch.slice(0, k);
  const m = new Set(M);
  const b = new Set(B);
  return { gained: B.filter((id) => !m.has(id)), lost: M.filter((id) => !b.has(id)) };
}

/** Share of `cited` found in the top k of `served`; null when nothing was cited. */
export function citationRecall(cited: string[], served: string[], k: number): number | null {
  const C = [...new Set(cited)];
  if (!C.length) return null;
  const top = new Set(served.slice(0, k));
  return C.filter((id) => top.has(id)).length / C.length;
}

/** Two-sided 95% critical values of Student's t for 1..30 degrees of freedom; 1.96 past that. */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

export interface PairedInterval {
  n: number;
  /** Mean of branch − main. */
  mean: number;
  /** 95% interval of the mean difference; null with fewer than two pairs. */
  low: number | null;
  high: number | null;
}

/** The paired 95% interval of branch − main over the queries where both have a value. */
export function pairedInterval(pairs: Array<{ main: number; branch: number }>): PairedInterval {
  const d = pairs.map((p) => p.branch - p.main);
  const n = d.length;
  if (n === 0) return { n, mean: 0, low: null, high: null };
  const mean = d.reduce((s, x) => s + x, 0) / n;
  if (n < 2) return { n, mean, low: null, high: null };
  const sd = Math.sqrt(d.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  const half = (T95[n - 2] ?? 1.96) * (sd / Math.sqrt(n));
  return { n, mean, low: mean - half, high: mean + half };
}

/** Both sides of one compared query: what each served (ids in rank order) and how long it took. */
export interface ComparedSide {
  ids: string[];
  latencyMs: number;
}

/** One query's comparison, as replay and shadow traffic report it. */
export interface QueryComparison {
  k: number;
  main: ComparedSide & { citationRecall: number | null };
  branch: ComparedSide & { citationRecall: number | null };
  overlap: number;
  rbo: number;
  gained: string[];
  lost: string[];
  cited: string[];
}

/** Compare what main and the branch served for one query, to depth k. */
export function compareServed(main: ComparedSide, branch: ComparedSide, cited: string[], k: number): QueryComparison {
  return {
    k,
    main: { ...main, citationRecall: citationRecall(cited, main.ids, k) },
    branch: { ...branch, citationRecall: citationRecall(cited, branch.ids, k) },
    overlap: overlapAtK(main.ids, branch.ids, k),
    rbo: rankBiasedOverlap(main.ids, branch.ids, k),
    ...gainedLost(main.ids, branch.ids, k),
    cited,
  };
}

export interface ComparisonSummary {
  replayed: number;
  meanOverlap: number;
  meanRbo: number;
  gained: number;
  lost: number;
  meanLatencyMs: { main: number; branch: number };
  citationRecall: { main: number | null; branch: number | null; diff: PairedInterval };
  latencyDiff: PairedInterval;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** The per-run report over compared queries (those without an error): means, totals and paired intervals of branch − main. */
export function summarizeComparisons(ok: QueryComparison[]): ComparisonSummary {
  const cit = ok.filter((q) => q.main.citationRecall !== null && q.branch.citationRecall !== null);
  return {
    replayed: ok.length,
    meanOverlap: mean(ok.map((q) => q.overlap)),
    meanRbo: mean(ok.map((q) => q.rbo)),
    gained: ok.reduce((s, q) => s + q.gained.length, 0),
    lost: ok.reduce((s, q) => s + q.lost.length, 0),
    meanLatencyMs: { main: mean(ok.map((q) => q.main.latencyMs)), branch: mean(ok.map((q) => q.branch.latencyMs)) },
    citationRecall: {
      main: cit.length ? mean(cit.map((q) => q.main.citationRecall!)) : null,
      branch: cit.length ? mean(cit.map((q) => q.branch.citationRecall!)) : null,
      diff: pairedInterval(cit.map((q) => ({ main: q.main.citationRecall!, branch: q.branch.citationRecall! }))),
    },
    latencyDiff: pairedInterval(ok.map((q) => ({ main: q.main.latencyMs, branch: q.branch.latencyMs }))),
  };
}
