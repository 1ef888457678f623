/**
 * Sentence splitting, used by the offline model, TextRank (text-rank.ts) and the split operators:
 * deterministic (no randomness, no clocks); sentences are always verbatim (trimmed) substrings of
 * the input text, with their offsets, block and whether they are a fenced code block.
 */
export interface Sentence {
  /** Verbatim substring of the source (trimmed; a leading bullet / heading marker is left out). */
  text: string;
  /** Offsets of `text` in the source: source.slice(start, end) === text. */
  start: number;
  end: number;
  /** Sentences of one paragraph / list item / line share a block; joins use " " inside a block. */
  block: number;
  /** A fenced code block kept as one unit. */
  code: boolean;
}

export interface SplitOptions {
  /** Fenced code blocks (``` or ~~~): kept as one unit each (default) or skipped. */
  code?: "keep" | "skip";
}

/** Never a sentence end, whatever follows ("Dr. Smith", "e.g. Paris", "vs. Python"). */
const ABBREVIATIONS = new Set([
  "mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "st", "mt", "ft", "gen", "col", "capt", "lt",
  "sgt", "cmdr", "adm", "gov", "sen", "rep", "rev", "hon", "pres", "supt", "messrs", "mme", "mlle",
  "e.g", "i.e", "eg", "ie", "cf", "vs", "viz", "approx", "ca", "al", "resp", "incl", "esp", "dept",
  "univ", "assn", "bros", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
  "nov", "dec", "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
]);

/** Not a sentence end when a number follows ("No. 5", "Fig. 3", "p. 12"). */
const NUMBER_ABBREVIATIONS = new Set([
  "no", "nos", "fig", "figs", "vol", "vols", "p", "pp", "ch", "chap", "sec", "sect", "art", "eq",
  "eqs", "ref", "refs", "op", "nr", "tab", "ex",
]);

const FENCE_RE = /^\s{0,3}(`{3,}|~{3,})/;
/** List item / heading / quote markers at the start of a line (the marker is not part of the sentence). */
const MARKER_RE = /^\s*(?:[-*+•·‣▪◦–—>]|\d{1,3}[.)]|[a-z]\)|#{1,6}|\[[ xX]\])(?:\s+|$)/;
/** Lines of punctuation only (rules, table separators, stray fences) are not sentences. */
const HAS_WORD_RE = /[\p{L}\p{N}]/u;
const LOWER_START_RE = /^\p{Ll}/u;
const DIGIT_START_RE = /^\d/;
/** "assistant: …", "user 2: …": a transcript turn, never a wrapped continuation. */
const SPEAKER_RE = /^[\p{L}\p{N}_ .'-]{1,32}:\s/u;
const ENDS_CLAUSE_RE = /[.!?:;…]["'”’)\]]*$/;

interface Line {
  start: number; // offset of the first character
  end: number; // offset after the last character (without "\r\n")
  text: string;
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start <= text.length) {
    let nl = text.indexOf("\n", start);
    if (nl === -1) nl = text.length;
    let end = nl;
    if (end > start && text.charCodeAt(end - 1) === 13) end--;
    lines.push({ start, end, text: text.slice(start, end) });
    start = nl + 1;
  }
  return lines;
}

function isWhitespaceCode(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 160 || (c >= 0x2000 && c <= 0x200a) || c === 0x3000;
}

/** Push `source.slice(start, end)` trimmed, if it contains a word. */
function pushTrimmed(out: Sentence[], source: string, start: number, end: number, block: number): void {
  while (start < end && isWhitespaceCode(source.charCodeAt(start))) start++;
  while (end > start && isWhitespaceCode(source.charCodeAt(end - 1))) end--;
  if (end <= start) return;
  const text = source.slice(start, end);
  if (!HAS_WORD_RE.test(text)) return;
  out.push({ text, start, end, block, code: false });
}

/** Is the "." at `dot` (with `next` being the first character after the whitespace) a sentence end? */
function periodEndsSentence(source: string, segStart: number, dot: number, next: string): boolean {
  if (LOWER_START_RE.test(next)) return false; // "e.g. foo", "approx. five", "etc. and so on"
  // The token before the period: "(Dr" → "dr", "e.g" → "e.g", "U.S" → "u.s".
  let k = dot;
  while (k > segStart && !isWhitespaceCode(source.charCodeAt(k - 1))) k--;
  const word = source.slice(k, dot).replace(/^[("'“‘[]+/, "");
  const lower = word.toLowerCase();
  if (ABBREVIATIONS.has(lower)) return false;
  if (NUMBER_ABBREVIATIONS.has(lower) && DIGIT_START_RE.test(next)) return false;
  if (/^\p{Lu}$/u.test(word)) return false; // an initial: "J. R. R. Tolkien"
  if (/^(?:\p{L}\.)+\p{L}$/u.test(word)) return false; // dotted acronym: "U.S. Army", "a.m. Monday"
  return true;
}

/** Unicode sentence boundaries (UAX #29): the candidates; our abbreviation rules then veto some. */
const SENTENCE_SEGMENTER = new Intl.Segmenter("en", { granularity: "sentence" });
const TERMINAL_RE = /[.!?…。！？]/;
const CLOSER_RE = /["'”’)\]」』]/;

/**
 * Split one prose segment (no blank lines, no fences) into sentences. Intl.Segmenter proposes the
 * boundaries; a boundary stands only after terminal punctuation (a line break inside wrapped prose
 * is not one), and a single period stands only if it is not an abbreviation, an initial or a
 * dotted acronym (ICU's own suppressions are not exposed through Intl).
 */
function splitSegment(out: Sentence[], source: string, start: number, end: number, block: number): void {
  let sentenceStart = start;
  for (const { index } of SENTENCE_SEGMENTER.segment(source.slice(start, end))) {
    const nextAt = start + index;
    if (index === 0 || nextAt >= end) continue;
    let cut = nextAt;
    while (cut > sentenceStart && isWhitespaceCode(source.charCodeAt(cut - 1))) cut--;
    let p = cut;
    while (p > sentenceStart && CLOSER_RE.test(source[p - 1]!)) p--;
    const punct = source[p - 1] ?? "";
    if (!TERMINAL_RE.test(punct)) continue;
    const single = punct === "." && source[p - 2] !== ".";
    if (single && !periodEndsSentence(source, start, p - 1, source[nextAt]!)) continue;
    pushTrimmed(out, source, sentenceStart, cut, block);
    sentenceStart = nextAt;
  }
  pushTrimmed(out, source, sentenceStart, end, block);
}

/**
 * Sentences with offsets and blocks. Boundaries: terminal punctuation (not after abbreviations,
 * initials, or inside decimals / URLs), blank lines, list items, headings, and line breaks (a
 * line break inside hard-wrapped prose — a long line without closing punctuation followed by a
 * lower-case continuation — is not a boundary). Fenced code blocks are one unit each, or skipped.
 */
export function segmentSentences(text: string, options: SplitOptions = {}): Sentence[] {
  const keepCode = options.code !== "skip";
  const out: Sentence[] = [];
  const lines = splitLines(text);
  let block = 0;
  // The open prose segment: [segStart, segEnd) in the source, and whether it is a list item.
  let segStart = -1;
  let segEnd = -1;
  let segIsItem = false;
  let lastLine = "";

  const flush = () => {
    if (segStart >= 0) {
      splitSegment(out, text, segStart, segEnd, block);
      block++;
    }
    segStart = -1;
    segIsItem = false;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE_RE.exec(line.text);
    if (fence) {
      flush();
      const marker = fence[1]!;
      const closeRe = new RegExp(`^\\s{0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
      let j = i + 1;
      while (j < lines.length && !closeRe.test(lines[j]!.text)) j++;
      const last = lines[Math.min(j, lines.length - 1)]!;
      if (keepCode) {
        let s = line.start;
        while (s < last.end && isWhitespaceCode(text.charCodeAt(s))) s++;
        let e = last.end;
        while (e > s && isWhitespaceCode(text.charCodeAt(e - 1))) e--;
        if (e > s) out.push({ text: text.slice(s, e), start: s, end: e, block, code: true });
      }
      block++;
      i = j;
      lastLine = "";
      continue;
    }
    const trimmed = line.text.trim();
    if (trimmed === "" || !HAS_WORD_RE.test(trimmed)) {
      flush();
      lastLine = "";
      continue;
    }
    const marker = MARKER_RE.exec(line.text);
    if (marker) {
      flush();
      segStart = line.start + marker[0].length;
      segEnd = line.end;
      segIsItem = true;
      lastLine = trimmed;
      continue;
    }
    const indented = isWhitespaceCode(line.text.charCodeAt(0));
    const hardWrapped =
      segStart >= 0 &&
      ((segIsItem && indented) ||
        (lastLine.length >= 40 &&
          !ENDS_CLAUSE_RE.test(lastLine) &&
          LOWER_START_RE.test(trimmed) &&
          !SPEAKER_RE.test(trimmed)));
    if (hardWrapped) {
      segEnd = line.end;
    } else {
      flush();
      segStart = line.start;
      segEnd = line.end;
    }
    lastLine = trimmed;
  }
  flush();
  return out;
}

/** The sentences of `text`, verbatim (see segmentSentences for the rules). */
export function splitSentences(text: string, options: SplitOptions = {}): string[] {
  return segmentSentences(text, options).map((s) => s.text);
}
