/**
 * Dates written in fewer words, the same information: "1:56 pm on 8 May, 2023" → "8 May 2023 13:56",
 * "May 8, 2023 at 9:05 AM" → "8 May 2023 09:05", "2023/05/20 (Sat) 02:21" → "2023-05-20 02:21".
 * The day keeps the source's style (month by name stays by name, a numeric date stays numeric, as
 * ISO), a time of day beside it becomes 24-hour HH:MM, and the words joining them ("on", "at", a
 * comma, a weekday in brackets between day and time) go. Everything else is left as written: a
 * date that does not exist (31 February), a 12-hour time past 12, a time with seconds or a zone.
 * Used where a date is repeated many times (the conversation's header above every turn window).
 */
import { MONTH_NAMES, MONTH_PATTERN, monthIndex } from "./months";

const MONTH = `${MONTH_PATTERN}\\.?`;
const ORDINAL = "(?:st|nd|rd|th)?";
/** Day month year | month day, year | year-month-day (or with slashes). Groups: 1-3, 4-6, 7-10 (8: the separator). */
const DAY = new RegExp(
  `\\b(?:(\\d{1,2})${ORDINAL}\\s+(?:of\\s+)?${MONTH},?\\s+(\\d{4})|${MONTH}\\s+(\\d{1,2})${ORDINAL},?\\s+(\\d{4})|(\\d{4})([-/])(\\d{1,2})\\8(\\d{1,2}))\\b`,
  "gi",
);
/** A time of day: hours, minutes, optional am/pm. Groups: 1-3. */
const TIME = "(\\d{1,2}):(\\d{2})(?:\\s*([ap])\\.?m\\b\\.?)?";
/** A time just before the day: "1:56 pm on ", "13:56, ". */
const TIME_BEFORE = new RegExp(`(?:^|(?<=[\\s(#]))${TIME}(?:\\s*,)?\\s+(?:on\\s+)?$`, "i");
/** A time just after the day: ", 13:56", " at 1:56 pm", " (Sat) 02:21". Not followed by seconds or a zone. */
const TIME_AFTER = new RegExp(`^(?:\\s*\\([A-Za-z]{2,9}\\.?\\))?(?:\\s*,)?\\s+(?:at\\s+)?${TIME}(?![:\\d]|\\s*(?:[+-]\\d|z\\b|utc\\b|gmt\\b))`, "i");

const pad = (n: number) => String(n).padStart(2, "0");

/** "13:56" from hours, minutes and an optional am/pm letter; null when it is not a time of day. */
function clock(h: string, m: string, half: string | undefined): string | null {
  let hour = Number(h);
  const minute = Number(m);
  if (minute > 59) return null;
  if (half) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (half.toLowerCase() === "p" ? 12 : 0);
  } else if (hour > 23) return null;
  return `${pad(hour)}:${pad(minute)}`;
}

function exists(year: number, month: number, day: number): boolean {
  const d = new Date(Date.UTC(year, month, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month && d.getUTCDate() === day;
}

/** The day of one DAY match, in the source's style; null when that day does not exist. */
function dayOf(g: string[]): string | null {
  if (g[7]) {
    const [year, month, day] = [Number(g[7]), Number(g[9]) - 1, Number(g[10])];
    return exists(year, month, day) ? `${year}-${pad(month + 1)}-${pad(day)}` : null;
  }
  const [day, name, year] = g[1] ? [Number(g[1]), g[2]!, Number(g[3])] : [Number(g[5]), g[4]!, Number(g[6])];
  const month = monthIndex(name);
  return month >= 0 && exists(year, month, day) ? `${day} ${MONTH_NAMES[month]} ${year}` : null;
}

/** `text` with every date (and the time of day beside it) written compactly; the rest unchanged. */
export function compactDates(text: string): string {
  let out = "";
  let at = 0;
  for (const m of text.matchAll(DAY)) {
    const start = m.index;
    const day = dayOf([...m].map((g) => g ?? ""));
    if (!day) continue;
    let from = start;
    let to = start + m[0].length;
    let time: string | null = null;
    const before = TIME_BEFORE.exec(text.slice(at, start));
    if (before) {
      time = clock(before[1]!, before[2]!, before[3]);
      if (time) from = at + before.index;
    }
    const after = time ? null : TIME_AFTER.exec(text.slice(to));
    if (after) {
      time = clock(after[1]!, after[2]!, after[3]);
      if (time) to += after[0].length;
    }
    out += text.slice(at, from) + (time ? `${day} ${time}` : day);
    at = to;
  }
  return out + text.slice(at);
}
