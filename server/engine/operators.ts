/** Built-in operators: steps that run with no model at all (chunking, regex entities, PII, JSON pick, extractive summary). */
import type { Operator } from "../pipeline/spec";
import { compactDates } from "../text/compact-dates";
import { extractiveSummary, splitSentences } from "../text/text-rank";
import { extractNarrative, narrativeText } from "./narrative";
import { classifyTopic } from "./topics";
import { conversationTurns } from "./turns";

const EMAIL = /[\w.+-]+@[\w-]+\.[\w.-]+/g;
const PHONE = /\+?\d[\d\s().-]{7,}\d/g;
const CARD = /\b(?:\d[ -]?){13,16}\b/g;

export function piiFindings(text: string): string[] {
  const found = new Set<string>();
  for (const [kind, re] of [
    ["email", EMAIL],
    ["phone", PHONE],
    ["card", CARD],
  ] as const) {
    if (text.match(re)) found.add(kind);
  }
  return [...found].sort();
}

function chunk(text: string, size: number, overlap: number): string[] {
  const out: string[] = [];
  const step = Math.max(1, size - overlap);
  for (let start = 0; start < text.length; start += step) {
    out.push(text.slice(start, start + size));
    if (start + size >= text.length) break;
  }
  return out.filter((c) => c.trim().length > 0);
}

function regexEntities(text: string): string[] {
  // Capitalised multi-word names, @handles, #tags, URLs: cheap, deterministic entity candidates.
  const patterns = [/\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b/g, /@[A-Za-z0-9_]{2,}/g, /#[A-Za-z][\w-]+/g, /https?:\/\/\S+/g];
  const seen = new Set<string>();
  for (const re of patterns) for (const m of text.matchAll(re)) seen.add(m[0]);
  return [...seen];
}

function pickField(text: string, field: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`json-pick: the input is not JSON, so field "${field}" cannot be picked`);
  }
  for (const part of field.split(".")) {
    value = value && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
  }
  if (value === undefined) throw new Error(`json-pick: the input has no field "${field}"`);
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** 1 → 1 operators. */
export function applyTransformOperator(op: Operator, content: string): { content: string; metadata?: Record<string, unknown> } {
  switch (op.kind) {
    case "identity":
      return { content };
    case "extractive-summary":
      return { content: extractiveSummary(content, { maxSentences: op.sentences ?? 3 }) };
    case "pii-flag": {
      const pii = piiFindings(content);
      return { content, metadata: { pii } };
    }
    case "json-pick":
      return { content: pickField(content, op.field) };
    case "narrative": {
      const narrative = extractNarrative(content);
      return { content: narrativeText(narrative), metadata: { ...narrative } };
    }
    case "topic":
      return { content, metadata: { topic: classifyTopic(content, op.topics, op.fallback) } };
    default:
      throw new Error(`operator ${op.kind} cannot be used in a transform`);
  }
}

/**
 * Overlapping windows of `size` turns, one every `stride` turns, each headed by the conversation's
 * header (title, date) so a window is understandable and findable on its own. Metadata: the
 * 1-based turn numbers it covers (provenance down to the turn). A text without turns is one window.
 * `centered`: every `stride`-th turn is the centre of a window (so the first and last windows are
 * shorter); otherwise windows start at every `stride`-th turn and the last one ends the conversation.
 * `compactDate`: the header's dates are written in fewer words ("1:56 pm on 8 May, 2023" →
 * "8 May 2023 13:56"): the header is repeated in every window, so with one-turn windows its date
 * was about a sixth of each record.
 */
function turnWindows(content: string, size: number, stride: number, centered: boolean, compactDate: boolean): SplitPart[] {
  const parts = conversationTurns(content);
  const { turns } = parts;
  const header = compactDate ? compactDates(parts.header) : parts.header;
  if (turns.length === 0) return content.trim() ? [{ content: content.trim(), metadata: { turns: [] } }] : [];
  const out: SplitPart[] = [];
  const window = (start: number, end: number) => {
    const numbers = Array.from({ length: end - start }, (_, i) => start + i + 1);
    out.push({ content: [header, ...turns.slice(start, end)].filter(Boolean).join("\n\n"), metadata: { turns: numbers, turn_count: turns.length } });
  };
  if (centered) {
    const before = Math.floor((size - 1) / 2);
    for (let centre = 0; centre < turns.length; centre += stride) window(Math.max(0, centre - before), Math.min(turns.length, centre - before + size));
    return out;
  }
  for (let start = 0; start < turns.length; start += stride) {
    const end = Math.min(turns.length, start + size);
    window(start, end);
    if (end >= turns.length) break;
  }
  return out;
}

export interface SplitPart {
  content: string;
  /** Stored under the record's `metadata.custom`. */
  metadata?: Record<string, unknown>;
}

/** 1 → N operators. */
export function applySplitOperator(op: Operator, content: string): Array<string | SplitPart> {
  switch (op.kind) {
    case "turns":
      return turnWindows(content, op.size ?? 3, op.stride ?? 1, op.centered ?? false, op.date === "compact");
    case "chunk":
      return chunk(content, op.size ?? 1200, op.overlap ?? 0);
    case "sentences": {
      const per = Math.max(1, op.per ?? 1);
      const sentences = splitSentences(content);
      const out: string[] = [];
      for (let i = 0; i < sentences.length; i += per) out.push(sentences.slice(i, i + per).join(" "));
      return out;
    }
    case "regex-entities":
      return regexEntities(content);
    default:
      throw new Error(`operator ${op.kind} cannot be used in a split`);
  }
}

/** N → 1 operator for aggregates. */
export function applyAggregateOperator(op: Operator, contents: string[]): string {
  if (op.kind !== "extractive-summary") throw new Error(`operator ${op.kind} cannot be used in an aggregate`);
  return extractiveSummary(contents.join("\n\n"), { maxSentences: op.sentences ?? 5 });
}
