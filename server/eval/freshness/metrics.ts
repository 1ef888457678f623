/**
 * Freshness metrics of one question (pure): does the top hit state the current value and no stale
 * one (current@1); does a stale value rank above the current one (stale-above-current); is an
 * attribute that ended still returned as current (ended-as-current: the top hit names the ended
 * value without saying it ended).
 */
import type { FreshnessQuestion } from "./generate";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
export const mentions = (text: string, value: string) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(value)}(?![\\p{L}\\p{N}])`, "iu").test(text);

/** Words that say an attribute ended (a hit that says so does not return it as current). */
const ENDED_WORDS = /\b(?:no longer|not any ?more|anymore|no more|broke up|split up|separated|single|divorce|ended|called it off|passed away|died|put (?:\w+ )?down|rehomed|ran away|gone|lost|gave up|quit|stopped|done with|not for me|won't go back|haven't done)\b/i;

export interface FreshnessCase {
  /** Null when the question has no current value (the attribute ended). */
  current1: boolean | null;
  staleAboveCurrent: boolean | null;
  endedAsCurrent: boolean | null;
}

export function scoreFreshness(q: FreshnessQuestion, hits: string[]): FreshnessCase {
  const firstIndex = (pred: (h: string) => boolean) => {
    const i = hits.findIndex(pred);
    return i < 0 ? Infinity : i;
  };
  const stale = firstIndex((h) => q.stale.some((v) => mentions(h, v)));
  if (q.current === null) {
    const ended = q.stale.at(-1)!;
    const top = hits[0] ?? "";
    return { current1: null, staleAboveCurrent: null, endedAsCurrent: mentions(top, ended) && !ENDED_WORDS.test(top) };
  }
  const current = firstIndex((h) => mentions(h, q.current!));
  const top = hits[0] ?? "";
  return {
    current1: mentions(top, q.current) && !q.stale.some((v) => mentions(top, v)),
    staleAboveCurrent: q.stale.length ? stale < current || (stale === current && stale !== Infinity && !mentions(hits[stale]!, q.current)) : null,
    endedAsCurrent: null,
  };
}

export interface FreshnessSummary {
  questions: number;
  /** Over attributes that changed and still hold a value. */
  current1: number;
  currentN: number;
  /** Over attributes with a stale value and a current one. */
  staleAboveCurrent: number;
  staleN: number;
  /** Over attributes that ended. */
  endedAsCurrent: number;
  endedN: number;
  /** Over attributes that never changed (a control: the memory must still hold them). */
  unchangedCurrent1: number;
  unchangedN: number;
}

export function summarize(cases: Array<{ q: FreshnessQuestion; c: FreshnessCase }>): FreshnessSummary {
  const rate = (xs: boolean[]) => (xs.length ? xs.filter(Boolean).length / xs.length : 0);
  const changed = cases.filter((x) => x.q.changes > 0 && x.q.current !== null);
  const unchanged = cases.filter((x) => x.q.changes === 0);
  const staleCases = cases.filter((x) => x.c.staleAboveCurrent !== null);
  const ended = cases.filter((x) => x.c.endedAsCurrent !== null);
  return {
    questions: cases.length,
    current1: rate(changed.map((x) => x.c.current1!)),
    currentN: changed.length,
    staleAboveCurrent: rate(staleCases.map((x) => x.c.staleAboveCurrent!)),
    staleN: staleCases.length,
    endedAsCurrent: rate(ended.map((x) => x.c.endedAsCurrent!)),
    endedN: ended.length,
    unchangedCurrent1: rate(unchanged.map((x) => x.c.current1!)),
    unchangedN: unchanged.length,
  };
}
