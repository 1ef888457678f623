/**
 * Token counting for plans, budgets and the offline model's usage numbers.
 *
 * Uses gpt-tokenizer's cl100k_base encoding, imported directly (not the package root, which
 * pulls in o200k_base and model metadata): it loads in about half the time of o200k_base and
 * counts slightly faster; the two agree within a few percent on English text, which is all a
 * cost estimate needs. Texts over MAX_EXACT_CHARS are estimated at ~4 chars/token so one huge
 * record never costs more than a few tens of milliseconds.
 */
import { countTokens as bpeCountTokens, decode, encode } from "gpt-tokenizer/encoding/cl100k_base";

export const TOKENIZER_ENCODING = "cl100k_base";

/** Above this length, countTokens estimates (chars / 4) instead of running the BPE. */
export const MAX_EXACT_CHARS = 200_000;

/** Treat special-token text such as "<|endoftext|>" as ordinary text instead of throwing. */
const ENCODE_OPTIONS = { disallowedSpecial: new Set<string>() };

/** A cheap estimate: ~4 characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Tokens in `text` (exact BPE count up to MAX_EXACT_CHARS characters, estimated above). */
export function countTokens(text: string): number {
  if (!text) return 0;
  if (text.length > MAX_EXACT_CHARS) return estimateTokens(text);
  return bpeCountTokens(text, ENCODE_OPTIONS);
}

/**
 * The longest prefix of `text` that is at most `max` tokens (never splits a character; the
 * result is always a prefix of the input). Returns `text` unchanged when it already fits.
 */
export function truncateToTokens(text: string, max: number): string {
  if (!text) return "";
  const limit = Math.floor(max);
  if (!(limit > 0)) return "";
  if (text.length <= MAX_EXACT_CHARS && countTokens(text) <= limit) return text;

  // Encode only a prefix that certainly holds more than `limit` tokens (grown if it doesn't).
  let prefixLength = Math.min(text.length, limit * 8 + 64);
  let tokens = encode(text.slice(0, prefixLength), ENCODE_OPTIONS);
  while (tokens.length <= limit && prefixLength < text.length) {
    prefixLength = Math.min(text.length, prefixLength * 2);
    tokens = encode(text.slice(0, prefixLength), ENCODE_OPTIONS);
  }
  if (tokens.length <= limit) return text.slice(0, prefixLength);

  let out = decode(tokens.slice(0, limit));
  // A cut inside a multi-byte character decodes to U+FFFD: drop it, keep a true prefix.
  while (out.length > 0 && !text.startsWith(out)) out = out.slice(0, -1);
  // Lone high surrogate at the end: drop it.
  if (out.length > 0) {
    const last = out.charCodeAt(out.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
  }
  while (out.length > 0 && countTokens(out) > limit) out = out.slice(0, -1);
  return out;
}
