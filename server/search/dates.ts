import { MONTH_PATTERN as MONTH_RE, monthIndex } from "../text/months";
import { resolveRelativeDates, type ResolvedDate } from "./relative-dates";

/**
 * Dates named in a query ("in May 2023", "March 2024", "in 2022", "2023-05"): the time range they
 * mean, so search can filter or boost records from that range (`SearchInput.dates`). Only explicit
 * calendar references count; relative ones ("last week") need an anchor the query does not have.
 */

export interface DateRange {
  /** Inclusive ISO bounds. */
  from: string;
  to: string;
  /** The text that named it. */
  text: string;
}

const iso = (d: Date) => d.toISOString();
const monthRange = (year: number, month: number): [Date, Date] => [new Date(Date.UTC(year, month, 1)), new Date(Date.UTC(year, month + 1, 1) - 1)];

/** The first explicit month or year in the query, as a UTC range; null when there is none. */
export function parseDateRange(query: string): DateRange | null {
  const q = query.toLowerCase();
  // "8 May 2023" / "May 8, 2023": that day.
  let m = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE},?\\s+((?:19|20)\\d{2})\\b`).exec(q);
  if (m) return day(Number(m[3]), monthIndex(m[2]!), Number(m[1]), m[0]);
  m = new RegExp(`\\b${MONTH_RE}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+((?:19|20)\\d{2})\\b`).exec(q);
  if (m) return day(Number(m[3]), monthIndex(m[1]!), Number(m[2]), m[0]);
  // "May 2023", "2023-05".
  m = new RegExp(`\\b${MONTH_RE}\\s+(?:of\\s+)?((?:19|20)\\d{2})\\b`).exec(q);
  if (m) {
    const [a, b] = monthRange(Number(m[2]), monthIndex(m[1]!));
    return { from: iso(a), to: iso(b), text: m[0] };
  }
  m = /\b((?:19|20)\d{2})-(0[1-9]|1[0-2])\b/.exec(q);
  if (m) {
    const [a, b] = monthRange(Number(m[1]), Number(m[2]) - 1);
    return { from: iso(a), to: iso(b), text: m[0] };
  }
  // "in 2023", "during 2022": the year.
  m = /\b(?:in|during|since|throughout)\s+((?:19|20)\d{2})\b/.exec(q);
  if (m) {
    const y = Number(m[1]);
    return { from: iso(new Date(Date.UTC(y, 0, 1))), to: iso(new Date(Date.UTC(y + 1, 0, 1) - 1)), text: m[0] };
  }
  return null;
}

function day(year: number, month: number, date: number, text: string): DateRange | null {
  const start = new Date(Date.UTC(year, month, date));
  if (month < 0 || start.getUTCDate() !== date) return null;
  return { from: iso(start), to: iso(new Date(start.getTime() + 86_400_000 - 1)), text };
}

/** Is an ISO time inside the range? */
export function inRange(time: string | null, range: DateRange): boolean {
  if (!time) return false;
  const t = Date.parse(time);
  return !Number.isNaN(t) && t >= Date.parse(range.from) && t <= Date.parse(range.to);
}

const DAY_MS = 86_400_000;

/**
 * A relative time in the query ("last week", "yesterday") resolved against `anchor` (when the
 * question is asked): the first one, as a range; null when there is none.
 */
export function parseRelativeRange(query: string, anchor: Date): DateRange | null {
  const r = resolveRelativeDates(query, anchor)[0];
  if (!r) return null;
  return { from: `${r.from}T00:00:00.000Z`, to: iso(new Date(Date.parse(`${r.to}T00:00:00.000Z`) + DAY_MS - 1)), text: r.text };
}

/** Days after a named range in which a conversation may still talk about it ("last night", "last week"). */
export const FORWARD_DAYS = 14;

/** The range and the `days` after it: when a record written about the range is dated. */
export function forwardWindow(range: DateRange, days = FORWARD_DAYS): DateRange {
  return { ...range, to: iso(new Date(Date.parse(range.to) + days * DAY_MS)) };
}

/** Does a resolved mention (ISO days, inclusive) overlap the range? */
export function mentionOverlaps(m: ResolvedDate, range: DateRange): boolean {
  return m.from <= range.to.slice(0, 10) && m.to >= range.from.slice(0, 10);
}
