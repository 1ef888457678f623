/**
 * A hit's snippet and the character ranges to highlight in it: from PostgreSQL's ts_headline
 * (full-text search, with HL_START / HL_STOP as its markers) or around a literal phrase (exact).
 */
/** ts_headline's start and stop markers: control characters that never occur in stored text. */
export const HL_START = "\u0002";
export const HL_STOP = "\u0003";

export function parseHighlights(raw: string): { snippet: string; highlights: Array<[number, number]> } {
  let snippet = "";
  const highlights: Array<[number, number]> = [];
  let start = -1;
  for (const ch of raw) {
    if (ch === HL_START) start = snippet.length;
    else if (ch === HL_STOP) {
      if (start >= 0 && snippet.length > start) highlights.push([start, snippet.length]);
      start = -1;
    } else snippet += ch;
  }
  return { snippet, highlights };
}

export function phraseSnippet(content: string, phrase: string): { snippet: string; highlights: Array<[number, number]> } {
  const lower = content.toLowerCase();
  const p = phrase.toLowerCase();
  const at = lower.indexOf(p);
  if (at < 0) return { snippet: content.slice(0, 240), highlights: [] };
  const from = Math.max(0, at - 100);
  const to = Math.min(content.length, at + p.length + 100);
  const snippet = `${from > 0 ? "…" : ""}${content.slice(from, to)}${to < content.length ? "…" : ""}`;
  const offset = (from > 0 ? 1 : 0) + at - from;
  const highlights: Array<[number, number]> = [];
  let i = offset;
  const lowSnippet = snippet.toLowerCase();
  while (i >= 0 && i < snippet.length) {
    highlights.push([i, i + p.length]);
    i = lowSnippet.indexOf(p, i + p.length);
  }
  return { snippet, highlights };
}
