/**
 * The recency boost of search: a record's score is multiplied by `1 - w + w · 0.5^(age / halfLife)`.
 * Age is counted from the time the question is asked (`asOf`), else from the newest candidate the
 * search ranks (the present of that memory: history a year old still has a newest and an oldest
 * record), and from the wall clock only when no candidate has a time.
 */

export interface Recency {
  halfLifeDays: number;
  /** 0..1, default 0.3. */
  weight?: number;
}

/** The time recency counts age from: the question's asOf, else the newest of `times` (ISO), else now. */
export function recencyClock(times: Iterable<string | null>, asOf: number | null): number {
  if (asOf !== null) return asOf;
  let newest = -Infinity;
  for (const time of times) {
    const t = time ? Date.parse(time) : NaN;
    if (t > newest) newest = t;
  }
  return Number.isFinite(newest) ? newest : Date.now();
}

/** The factor a record of time `time` gets at clock `now` (1 without a recency setting). */
export function recencyFactor(time: string | null, recency: Recency | undefined, now: number): number {
  if (!recency) return 1;
  const weight = Math.min(1, Math.max(0, recency.weight ?? 0.3));
  const t = time ? Date.parse(time) : NaN;
  if (Number.isNaN(t)) return 1 - weight;
  const ageDays = Math.max(0, (now - t) / 86_400_000);
  return 1 - weight + weight * Math.pow(0.5, ageDays / recency.halfLifeDays);
}
