/**
 * Embedders turn text into vectors. Embeddings are stored per (record, embedder id), so a branch
 * can try another embedder. The offline default needs no weights: feature hashing.
 */
import { createHash } from "node:crypto";
import { STOP_WORDS } from "../text/text-rank";

export interface Embedder {
  /** Stored with every vector, e.g. "offline/hash-384" or "openai/text-embedding-3-small". */
  id: string;
  dimensions: number;
  embed(texts: string[]): Promise<number[][]>;
}

/** The default offline embedder: hashing v2 (see `OfflineHashEmbedder`), 512 dimensions. */
export const OFFLINE_EMBEDDER_ID = "offline/hash2-512";

function features(text: string): string[] {
  const words = text.toLowerCase().normalize("NFKD").match(/[\p{L}\p{N}]+/gu) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    out.push(`w:${w}`);
    if (i + 1 < words.length) out.push(`b:${w} ${words[i + 1]}`);
    const padded = `#${w}#`;
    for (let j = 0; j + 3 <= padded.length; j++) out.push(`c:${padded.slice(j, j + 3)}`);
  }
  return out;
}

function bucket(feature: string, dimensions: number): { index: number; sign: number } {
  const digest = createHash("md5").update(feature).digest();
  return { index: digest.readUInt32LE(0) % dimensions, sign: digest[4]! & 1 ? 1 : -1 };
}

function normalize(vector: number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum);
  return norm === 0 ? vector : vector.map((v) => v / norm);
}

/**
 * The first offline embedder ("offline/hash-<dims>", kept so stored vectors stay comparable):
 * feature hashing of words, bigrams and character trigrams; L2-normalised.
 */
export function hashEmbedding(text: string, dimensions = 384): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const feature of features(text)) {
    const { index, sign } = bucket(feature, dimensions);
    vector[index]! += sign * (feature.startsWith("c:") ? 0.5 : 1);
  }
  return normalize(vector);
}

const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** Light suffix folding so "painting"/"paints"/"painted" share a feature (character n-grams catch the rest). */
function fold(word: string): string {
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith("ies")) return word.slice(0, -3) + "y";
  if (word.length > 3 && word.endsWith("s") && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Content words (lower-cased, stop words and possessives removed), with their surface form. */
export function contentTokens(text: string): Array<{ surface: string; key: string }> {
  const out: Array<{ surface: string; key: string }> = [];
  const lower = text.toLowerCase().normalize("NFKC");
  for (const m of lower.matchAll(WORD_RE)) {
    let w = m[0].replace(/’/g, "'");
    if (w.endsWith("'s")) w = w.slice(0, -2);
    if (STOP_WORDS.has(w) || (w.length < 2 && !/\d/.test(w))) continue;
    out.push({ surface: w, key: fold(w) });
  }
  return out;
}

/** Feature weights: a word counts 1, the next-word bigram 0.6, its character n-grams 0.5 in all. */
const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.6;
const CHAR_WEIGHT = 0.5;

/**
 * Hashing v2: content words (stop words dropped, suffixes folded), word bigrams and character
 * 3- and 4-grams of each word, each feature with sublinear tf (1 + ln tf), hashed with a sign
 * into `dimensions` buckets, L2-normalised. `weightOf(surface)` scales every feature a word
 * contributes: queries pass the corpus idf of each word (search does, from the BM25 statistics),
 * records use 1 — so the stored vectors never depend on the corpus, yet the cosine behaves like
 * a tf-idf match that also forgives spelling variants (character n-grams).
 */
export function hashEmbeddingV2(text: string, dimensions = 512, weightOf?: (surface: string) => number): number[] {
  const tokens = contentTokens(text);
  const tf = new Map<string, number>();
  const weight = new Map<string, number>();
  const add = (feature: string, w: number) => {
    tf.set(feature, (tf.get(feature) ?? 0) + 1);
    weight.set(feature, Math.max(weight.get(feature) ?? 0, w));
  };
  const wOf = tokens.map((t) => (weightOf ? Math.max(0, weightOf(t.surface)) : 1));
  tokens.forEach((t, i) => {
    const w = wOf[i]!;
    if (w === 0) return;
    add(`w:${t.key}`, WORD_WEIGHT * w);
    const next = tokens[i + 1];
    if (next && wOf[i + 1]! > 0) add(`b:${t.key} ${next.key}`, BIGRAM_WEIGHT * Math.sqrt(w * wOf[i + 1]!));
    const padded = `#${t.key}#`;
    const grams: string[] = [];
    for (const n of [3, 4]) for (let j = 0; j + n <= padded.length; j++) grams.push(`c${n}:${padded.slice(j, j + n)}`);
    for (const g of grams) add(g, (CHAR_WEIGHT * w) / Math.sqrt(grams.length));
  });
  const vector = new Array<number>(dimensions).fill(0);
  for (const [feature, count] of tf) {
    const { index, sign } = bucket(feature, dimensions);
    vector[index]! += sign * (1 + Math.log(count)) * weight.get(feature)!;
  }
  return normalize(vector);
}

export interface QueryEmbedder extends Embedder {
  /** A query vector whose words are weighted (e.g. by corpus idf); same space as `embed`. */
  embedQuery(text: string, weightOf: (surface: string) => number): number[];
}

export function isQueryEmbedder(e: Embedder): e is QueryEmbedder {
  return typeof (e as Partial<QueryEmbedder>).embedQuery === "function";
}

/** "offline/hash2-<dims>" (default) or the legacy "offline/hash-<dims>". */
export class OfflineHashEmbedder implements Embedder {
  readonly id: string;
  constructor(
    readonly dimensions = 512,
    readonly version: 1 | 2 = 2,
  ) {
    this.id = version === 1 ? `offline/hash-${dimensions}` : `offline/hash2-${dimensions}`;
  }
  async embed(texts: string[]) {
    return texts.map((t) => (this.version === 1 ? hashEmbedding(t, this.dimensions) : hashEmbeddingV2(t, this.dimensions)));
  }
  embedQuery(text: string, weightOf: (surface: string) => number): number[] {
    return this.version === 1 ? hashEmbedding(text, this.dimensions) : hashEmbeddingV2(text, this.dimensions, weightOf);
  }
}
