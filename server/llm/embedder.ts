/**
 * Embedders turn text into vectors. Embeddings are stored per (record, embedder id), so a branch
 * can try another embedder. The offline default needs no weights: feature hashing.
 */
import { createHash } from "node:crypto";

export interface Embedder {
  /** Stored with every vector, e.g. "offline/hash-384" or "openai/text-embedding-3-small". */
  id: string;
  dimensions: number;
  embed(texts: string[]): Promise<number[][]>;
}

export const OFFLINE_EMBEDDER_ID = "offline/hash-384";

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

/** Deterministic feature hashing of words, bigrams and character trigrams; L2-normalised. */
export function hashEmbedding(text: string, dimensions = 384): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const feature of features(text)) {
    const digest = createHash("md5").update(feature).digest();
    const index = digest.readUInt32LE(0) % dimensions;
    const sign = digest[4]! & 1 ? 1 : -1;
    const weight = feature.startsWith("c:") ? 0.5 : 1;
    vector[index]! += sign * weight;
  }
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector : vector.map((v) => v / norm);
}

export class OfflineHashEmbedder implements Embedder {
  readonly id: string;
  constructor(readonly dimensions = 384) {
    this.id = `offline/hash-${dimensions}`;
  }
  async embed(texts: string[]) {
    return texts.map((t) => hashEmbedding(t, this.dimensions));
  }
}
