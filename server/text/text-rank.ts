/**
 * TextRank extractive summarization (Mihalcea & Tarau, 2004), used by the offline model, over the
 * sentences of sentences.ts (re-exported here). Everything here is deterministic: no randomness,
 * no clocks, ties broken by position. Selected sentences stay verbatim substrings of the input.
 */
import { segmentSentences, type Sentence } from "./sentences";
import { countTokens, truncateToTokens } from "./tokens";

export { segmentSentences, splitSentences, type Sentence, type SplitOptions } from "./sentences";

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
