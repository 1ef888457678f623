/**
 * Relative time in a conversation ("last night", "yesterday", "last week", "two days ago"),
 * resolved against the date the conversation happened: the calendar range each phrase means, so a
 * question that names a date ("on 1 May 2022") can find the session of 2 May that says "last
 * night". No model: phrases are matched by pattern, ranges are UTC days.
 */
import { z } from "zod";

const IsoDay = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
/** One resolved phrase: as stored in a record's `metadata.time.mentions` at index time. */
export const ResolvedDateSchema = z.object({
  /** The phrase as written. */
  text: z.string(),
  /** Inclusive ISO day bounds (YYYY-MM-DD). */
  from: IsoDay,
  to: IsoDay,
});
export type ResolvedDate = z.infer<typeof ResolvedDateSchema>;

/** The mentions a record's metadata carries (`time.mentions`); [] when absent or malformed. */
export function dateMentions(value: unknown): ResolvedDate[] {
  const parsed = z.array(ResolvedDateSchema).safeParse(value);
  return parsed.success ? parsed.data : [];
}

/**
 * `metadata.time.mentions` of a record's metadata object. With `fingerprint` (the record's content
 * fingerprint), only when they were resolved from this content (`time.mentions_of`), not copied from a source.
 */
export function mentionsInMetadata(metadata: unknown, fingerprint?: string): ResolvedDate[] {
  const time = z.object({ time: z.object({ mentions: z.unknown(), mentions_of: z.string().optional() }) }).safeParse(metadata);
  if (!time.success || (fingerprint !== undefined && time.data.time.mentions_of !== fingerprint)) return [];
  return dateMentions(time.data.time.mentions);
}

/** "last night → 2022-05-01", "last week → 2022-04-25 – 2022-05-01". */
export function mentionLabel(m: ResolvedDate): string {
  return `${m.text} → ${m.from === m.to ? m.from : `${m.from} – ${m.to}`}`;
}

const NUMBERS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, couple: 2, few: 3 };
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const DAY = 86_400_000;

const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
const range = (text: string, from: number, to: number): ResolvedDate => ({ text, from: dayOf(from), to: dayOf(to) });

function count(word: string): number | null {
  const w = word.toLowerCase();
  if (/^\d+$/.test(w)) return Number(w);
  return NUMBERS[w] ?? null;
}

/** Midnight UTC of the anchor's calendar day. */
function startOfDay(anchor: Date): number {
  return Date.UTC(anchor.getUTCFullYear(), anchor.getUTCMonth(), anchor.getUTCDate());
}

/** Monday-based week start of the day `t`. */
function startOfWeek(t: number): number {
  const wd = (new Date(t).getUTCDay() + 6) % 7;
  return t - wd * DAY;
}

/**
 * Every relative time phrase in `text`, resolved against `anchor` (when the text was said), in
 * order of appearance. Unknown or absolute phrases are left out (see dates.ts for those).
 */
export function resolveRelativeDates(text: string, anchor: Date): ResolvedDate[] {
  if (Number.isNaN(anchor.getTime())) return [];
  const today = startOfDay(anchor);
  const found: Array<ResolvedDate & { at: number }> = [];
  const add = (at: number, r: ResolvedDate) => found.push({ ...r, at });
  const scan = (re: RegExp, resolve: (m: RegExpExecArray) => ResolvedDate | null) => {
    for (const m of text.matchAll(new RegExp(re.source, "gi"))) {
      const r = resolve(m as RegExpExecArray);
      if (r) add(m.index ?? 0, r);
    }
  };
  scan(/\b(?:last night|(?<!day before )yesterday(?: (?:morning|afternoon|evening))?)\b/, (m) => range(m[0], today - DAY, today - DAY));
  scan(/\b(?:today|this (?:morning|afternoon|evening)|tonight|earlier today)\b/, (m) => range(m[0], today, today));
  scan(/\b(?:the day before yesterday)\b/, (m) => range(m[0], today - 2 * DAY, today - 2 * DAY));
  scan(/\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few) (day|week|month|year)s? ago\b/, (m) => {
    const n = count(m[1]!.replace(/^a (couple|few) of$/i, "$1"));
    if (n === null) return null;
    if (m[2]!.toLowerCase() === "day") return range(m[0], today - n * DAY, today - n * DAY);
    if (m[2]!.toLowerCase() === "week") return range(m[0], today - n * 7 * DAY - 3 * DAY, today - n * 7 * DAY + 3 * DAY);
    const a = new Date(today);
    if (m[2]!.toLowerCase() === "month") {
      const start = Date.UTC(a.getUTCFullYear(), a.getUTCMonth() - n, 1);
      return range(m[0], start, Date.UTC(a.getUTCFullYear(), a.getUTCMonth() - n + 1, 1) - DAY);
    }
    return range(m[0], Date.UTC(a.getUTCFullYear() - n, 0, 1), Date.UTC(a.getUTCFullYear() - n, 11, 31));
  });
  scan(/\blast (week|weekend|month|year)\b/, (m) => {
    const unit = m[1]!.toLowerCase();
    const a = new Date(today);
    if (unit === "week") {
      const start = startOfWeek(today) - 7 * DAY;
      return range(m[0], start, start + 6 * DAY);
    }
    if (unit === "weekend") {
      const saturday = startOfWeek(today) - 2 * DAY;
      return range(m[0], saturday, saturday + DAY);
    }
    if (unit === "month") return range(m[0], Date.UTC(a.getUTCFullYear(), a.getUTCMonth() - 1, 1), Date.UTC(a.getUTCFullYear(), a.getUTCMonth(), 1) - DAY);
    return range(m[0], Date.UTC(a.getUTCFullYear() - 1, 0, 1), Date.UTC(a.getUTCFullYear() - 1, 11, 31));
  });
  scan(/\blast (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/, (m) => {
    const want = WEEKDAYS.indexOf(m[1]!.toLowerCase());
    const now = new Date(today).getUTCDay();
    const back = ((now - want + 7) % 7) || 7;
    return range(m[0], today - back * DAY, today - back * DAY);
  });
  return found.sort((a, b) => a.at - b.at).map((r) => ({ text: r.text, from: r.from, to: r.to }));
}
