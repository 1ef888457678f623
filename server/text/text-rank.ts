/**
 * Sentence splitting and TextRank extractive summarization (Mihalcea & Tarau, 2004), used by the
 * offline model. Everything here is deterministic: no randomness, no clocks, ties broken by
 * position. Sentences are always verbatim (trimmed) substrings of the input text.
 */
import { countTokens, truncateToTokens } from "./tokens";

// ---------------------------------------------------------------------------------------------
// Sentence splitting
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Words
// ---------------------------------------------------------------------------------------------

// prettier-ignore
export const STOP_WORDS: ReadonlySet<string> = new Set([
  "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
  "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
  "by", "can", "can't", "cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't",
  "doing", "don't", "down", "during", "each", "else", "etc", "even", "ever", "every", "few", "for",
  "from", "further", "get", "gets", "got", "had", "hadn't", "has", "hasn't", "have", "haven't",
  "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him",
  "himself", "his", "how", "how's", "however", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into",
  "is", "isn't", "it", "it's", "its", "itself", "just", "let's", "like", "may", "me", "might", "more",
  "most", "much", "must", "mustn't", "my", "myself", "no", "nor", "not", "now", "of", "off", "on",
  "once", "one", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own",
  "quite", "rather", "really", "same", "shall", "shan't", "she", "she'd", "she'll", "she's",
  "should", "shouldn't", "since", "so", "some", "such", "than", "that", "that's", "the", "their",
  "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll",
  "they're", "they've", "this", "those", "though", "through", "thus", "to", "too", "under", "until",
  "up", "upon", "us", "very", "via", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've",
  "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "whether", "which",
  "while", "who", "who's", "whom", "whose", "why", "why's", "will", "with", "within", "without",
  "won't", "would", "wouldn't", "yes", "yet", "you", "you'd", "you'll", "you're", "you've", "your",
  "yours", "yourself", "yourselves", "s", "t", "d", "ll", "re", "ve", "m", "im", "ok", "okay",
]);

const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** Light, deterministic plural folding so "memories"/"memory" and "users"/"user" overlap. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return word.slice(0, -3) + "y";
  if (word.length > 3 && word.endsWith("s") && !/(?:ss|us|is|ous|sis)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Content words of a text: lower-cased, stop words removed, plurals folded; with surface forms. */
function contentWords(text: string, onWord: (term: string, surface: string) => void): void {
  const lower = text.toLowerCase();
  WORD_RE.lastIndex = 0;
  for (let m = WORD_RE.exec(lower); m !== null; m = WORD_RE.exec(lower)) {
    let w = m[0];
    if (w.includes("’")) w = w.replace(/’/g, "'");
    if (STOP_WORDS.has(w)) continue;
    if (w.endsWith("'s")) w = w.slice(0, -2);
    if (w.length < 2 && !/\d/.test(w)) continue;
    if (STOP_WORDS.has(w)) continue;
    onWord(stem(w), w);
  }
}

/** The content terms of a text (lower-cased, stop words removed), in order, with repeats. */
export function terms(text: string): string[] {
  const out: string[] = [];
  contentWords(text, (t) => out.push(t));
  return out;
}

/**
 * The `n` most frequent content words of `text` (stop words and numbers excluded, at least 3
 * characters), most frequent first, ties by first occurrence. Plurals count with their singular;
 * each keyword is reported in its most frequent surface form.
 */
export function keywords(text: string, n: number): string[] {
  if (!(n > 0)) return [];
  const stats = new Map<string, { count: number; first: number; surfaces: Map<string, number> }>();
  let position = 0;
  contentWords(text, (term, surface) => {
    position++;
    if (term.length < 3 || !/\p{L}/u.test(term)) return;
    let s = stats.get(term);
    if (!s) stats.set(term, (s = { count: 0, first: position, surfaces: new Map() }));
    s.count++;
    s.surfaces.set(surface, (s.surfaces.get(surface) ?? 0) + 1);
  });
  return [...stats.values()]
    .sort((a, b) => b.count - a.count || a.first - b.first)
    .slice(0, Math.floor(n))
    .map((s) => {
      let best = "";
      let bestCount = -1;
      for (const [surface, count] of s.surfaces) if (count > bestCount) [best, bestCount] = [surface, count];
      return best;
    });
}

// ---------------------------------------------------------------------------------------------
// TextRank
// ---------------------------------------------------------------------------------------------

export interface RankOptions {
  /** PageRank damping factor (default 0.85, as in the paper). */
  damping?: number;
  /** Stop when no score moves more than this (default 1e-6) ... */
  tolerance?: number;
  /** ... or after this many iterations (default 100). */
  maxIterations?: number;
  /**
   * The graph is quadratic in sentences: above this many (default 1000), a linear pre-pass keeps
   * the sentences with the highest expected degree (sum over their terms of how many other
   * sentences share the term, normalized like the edge weights) and ranks those; the rest score 0.
   */
  maxNodes?: number;
}

export interface RankedSentence {
  /** Position in the input array. */
  index: number;
  sentence: string;
  score: number;
}

/** Scores rounded so that floating-point noise never beats position as a tie-break. */
function quantize(score: number): number {
  return Math.round(score * 1e9);
}

/** TextRank scores for the sentences, in input order. */
export function textRankScores(sentences: readonly string[], options: RankOptions = {}): number[] {
  const damping = options.damping ?? 0.85;
  const tolerance = options.tolerance ?? 1e-6;
  const maxIterations = options.maxIterations ?? 100;
  const maxNodes = Math.max(1, options.maxNodes ?? 1000);
  const n = sentences.length;
  const scores = new Array<number>(n).fill(0);
  if (n === 0) return scores;

  // Unique term ids per sentence.
  const vocab = new Map<string, number>();
  const termIds: Int32Array[] = new Array(n);
  const seen: number[] = [];
  for (let i = 0; i < n; i++) {
    const ids: number[] = [];
    contentWords(sentences[i]!, (t) => {
      let id = vocab.get(t);
      if (id === undefined) {
        id = vocab.size;
        vocab.set(t, id);
        seen.push(-1);
      }
      if (seen[id] !== i) {
        seen[id] = i;
        ids.push(id);
      }
    });
    termIds[i] = Int32Array.from(ids);
  }

  // Choose the nodes: all sentences, or the maxNodes with the highest expected degree.
  let nodes: number[] = [];
  if (n <= maxNodes) {
    for (let i = 0; i < n; i++) nodes.push(i);
  } else {
    const df = new Int32Array(vocab.size);
    for (const ids of termIds) for (const id of ids) df[id]!++;
    const proxy = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const ids = termIds[i]!;
      if (ids.length === 0) continue;
      let shared = 0;
      for (const id of ids) shared += df[id]! - 1;
      proxy[i] = shared / Math.max(1, Math.log(ids.length) + 1);
    }
    const order = Array.from({ length: n }, (_, i) => i);
    order.sort((a, b) => quantize(proxy[b]!) - quantize(proxy[a]!) || a - b);
    nodes = order.slice(0, maxNodes).sort((a, b) => a - b);
  }

  // Edge weights: |Si ∩ Sj| / (log|Si| + log|Sj|), dense (m ≤ maxNodes).
  const m = nodes.length;
  const weights = new Float64Array(m * m);
  const stamp = new Int32Array(vocab.size).fill(-1);
  const logLen = new Float64Array(m);
  for (let a = 0; a < m; a++) logLen[a] = termIds[nodes[a]!]!.length > 0 ? Math.log(termIds[nodes[a]!]!.length) : 0;
  for (let a = 0; a < m; a++) {
    const idsA = termIds[nodes[a]!]!;
    if (idsA.length === 0) continue;
    for (const id of idsA) stamp[id] = a;
    for (let b = a + 1; b < m; b++) {
      const idsB = termIds[nodes[b]!]!;
      let overlap = 0;
      for (let k = 0; k < idsB.length; k++) if (stamp[idsB[k]!] === a) overlap++;
      if (overlap === 0) continue;
      const denominator = logLen[a]! + logLen[b]!;
      // Two one-word sentences: log 1 + log 1 = 0; count the shared word as weight 1.
      const w = overlap / (denominator > 0 ? denominator : 1);
      weights[a * m + b] = w;
      weights[b * m + a] = w;
    }
  }

  // Weighted PageRank: WS(i) = (1 - d) + d * Σ_j w_ji / Σ_k w_jk * WS(j).
  const outSum = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    let s = 0;
    for (let k = 0; k < m; k++) s += weights[j * m + k]!;
    outSum[j] = s;
  }
  // Normalize rows in place: weights[j][i] / outSum[j].
  for (let j = 0; j < m; j++) {
    const s = outSum[j]!;
    if (s === 0) continue;
    for (let k = 0; k < m; k++) weights[j * m + k]! /= s;
  }
  let current = new Float64Array(m).fill(1);
  let next = new Float64Array(m);
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    next.fill(0);
    for (let j = 0; j < m; j++) {
      const sj = current[j]!;
      if (outSum[j] === 0) continue;
      const row = j * m;
      for (let i = 0; i < m; i++) next[i]! += weights[row + i]! * sj;
    }
    let delta = 0;
    for (let i = 0; i < m; i++) {
      const v = 1 - damping + damping * next[i]!;
      const d = Math.abs(v - current[i]!);
      if (d > delta) delta = d;
      next[i] = v;
    }
    [current, next] = [next, current];
    if (delta < tolerance) break;
  }
  for (let a = 0; a < m; a++) scores[nodes[a]!] = current[a]!;
  return scores;
}

/** Sentences ranked by TextRank score, best first; ties broken by position (earlier first). */
export function rankSentences(sentences: readonly string[], options: RankOptions = {}): RankedSentence[] {
  const scores = textRankScores(sentences, options);
  return rankOrder(scores).map((index) => ({ index, sentence: sentences[index]!, score: scores[index]! }));
}

/** Indices sorted by score (desc), then position. */
function rankOrder(scores: readonly number[]): number[] {
  const q = scores.map(quantize);
  return Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => q[b]! - q[a]! || a - b);
}

// ---------------------------------------------------------------------------------------------
// Selection
// ---------------------------------------------------------------------------------------------

export interface SelectOptions {
  maxSentences?: number;
  maxTokens?: number;
  maxChars?: number;
  /** Indices chosen first, in the given order, whatever their rank (still within the budget). */
  mustInclude?: readonly number[];
  /** Budget (tokens) the mustInclude sentences may use together (default: maxTokens). */
  mustIncludeMaxTokens?: number;
  rank?: RankOptions;
  /** Precomputed textRankScores of these sentences (to rank once and select several times). */
  scores?: readonly number[];
}

const MAX_CONSECUTIVE_MISSES = 64;

function normalizeForDedupe(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/** Cut `text` to the budget, preferring a word boundary in the second half of the cut. */
export function truncateSentence(text: string, maxTokens: number, maxChars: number): string {
  let out = Number.isFinite(maxTokens) ? truncateToTokens(text, maxTokens) : text;
  if (out.length > maxChars) out = out.slice(0, Math.max(0, Math.floor(maxChars)));
  if (out.length < text.length) {
    const space = out.search(/\s\S*$/);
    if (space > out.length / 2) out = out.slice(0, space);
    out = out.trimEnd();
  }
  return out;
}

/**
 * Pick sentences by rank (mustInclude first) within the budget, skipping duplicates, and return
 * them in original order. If nothing fits, the best sentence cut to the budget (a verbatim prefix).
 */
export function selectSentences(sentences: readonly Sentence[], options: SelectOptions = {}): Sentence[] {
  if (sentences.length === 0) return [];
  const maxSentences = options.maxSentences ?? Infinity;
  const maxTokens = options.maxTokens ?? Infinity;
  const maxChars = options.maxChars ?? Infinity;
  if (!(maxSentences > 0) || !(maxTokens > 0) || !(maxChars > 0)) return [];

  const scores =
    options.scores && options.scores.length === sentences.length
      ? options.scores
      : textRankScores(
          sentences.map((s) => s.text),
          options.rank,
        );
  const order = rankOrder(scores);
  const chosen: number[] = [];
  const chosenSet = new Set<number>();
  const seenText = new Set<string>();
  let tokens = 0;
  let chars = 0;

  const tryAdd = (index: number, tokenCap: number): boolean => {
    if (chosenSet.has(index) || chosen.length >= maxSentences) return false;
    const text = sentences[index]!.text;
    const key = normalizeForDedupe(text);
    if (seenText.has(key)) return false;
    const extraChars = text.length + (chosen.length > 0 ? 1 : 0);
    if (chars + extraChars > maxChars) return false;
    if (Number.isFinite(tokenCap)) {
      if (tokens >= tokenCap) return false;
      const extraTokens = countTokens(text) + (chosen.length > 0 ? 1 : 0);
      if (tokens + extraTokens > tokenCap) return false;
      tokens += extraTokens;
    }
    chars += extraChars;
    chosen.push(index);
    chosenSet.add(index);
    seenText.add(key);
    return true;
  };

  const mustCap = Math.min(maxTokens, options.mustIncludeMaxTokens ?? Infinity);
  for (const index of options.mustInclude ?? []) if (index >= 0 && index < sentences.length) tryAdd(index, mustCap);
  // Once the budget is nearly full most candidates miss; stop after a run of misses instead of
  // tokenizing every remaining sentence.
  let misses = 0;
  for (const index of order) {
    if (chosen.length >= maxSentences || misses >= MAX_CONSECUTIVE_MISSES) break;
    if (Number.isFinite(maxTokens) && maxTokens - tokens < 2) break;
    if (tryAdd(index, maxTokens)) misses = 0;
    else misses++;
  }

  if (chosen.length === 0) {
    const firstIndex = options.mustInclude?.find((i) => i >= 0 && i < sentences.length) ?? order[0]!;
    const best = sentences[firstIndex]!;
    const text = truncateSentence(best.text, maxTokens, maxChars);
    return text ? [{ ...best, text, end: best.start + text.length }] : [];
  }

  let result = chosen.sort((a, b) => a - b).map((i) => sentences[i]!);
  // Joining can merge tokens differently from counting pieces: drop the lowest-ranked until it fits.
  if (Number.isFinite(maxTokens) || Number.isFinite(maxChars)) {
    const rankOf = new Map(order.map((index, r) => [index, r]));
    const indexOf = new Map(sentences.map((s, i) => [s, i]));
    while (result.length > 1) {
      const joined = joinSentences(result);
      if (joined.length <= maxChars && countTokens(joined) <= maxTokens) break;
      let worst = 0;
      for (let k = 1; k < result.length; k++) {
        if (rankOf.get(indexOf.get(result[k]!)!)! > rankOf.get(indexOf.get(result[worst]!)!)!) worst = k;
      }
      result = result.filter((_, k) => k !== worst);
    }
  }
  return result;
}

/** Join selected sentences: " " within a block, a newline between blocks. */
export function joinSentences(sentences: readonly Sentence[]): string {
  let out = "";
  for (let i = 0; i < sentences.length; i++) {
    const s = sentences[i]!;
    if (i > 0) out += sentences[i - 1]!.block === s.block && !s.code ? " " : "\n";
    out += s.text;
  }
  return out;
}

export interface SummaryOptions {
  /** Default 5 when no budget is given; unbounded when maxTokens/maxChars is. */
  maxSentences?: number;
  maxTokens?: number;
  maxChars?: number;
  rank?: RankOptions;
}

/**
 * TextRank summary: the top sentences (code blocks skipped unless the text is only code) within
 * the budget, in their original order.
 */
export function extractiveSummary(text: string, options: SummaryOptions = {}): string {
  let sentences = segmentSentences(text, { code: "skip" });
  if (sentences.length === 0) sentences = segmentSentences(text, { code: "keep" });
  const budgeted = options.maxTokens !== undefined || options.maxChars !== undefined;
  const selected = selectSentences(sentences, {
    maxSentences: options.maxSentences ?? (budgeted ? undefined : 5),
    maxTokens: options.maxTokens,
    maxChars: options.maxChars,
    rank: options.rank,
  });
  return joinSentences(selected);
}
