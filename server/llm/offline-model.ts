/**
 * The offline provider (DESIGN §2): deterministic, network-free, extractive. It does not follow
 * the prompt's prose; it works on `request.inputs` (and `request.state`) and selects sentences
 * from them with TextRank. The same request always yields byte-for-byte the same text.
 *
 * One exception: a request to rewrite a conversation as a transcript (the prompt asks for a
 * "transcript", "every turn" or "verbatim") is never a selection, because a transcript must not
 * lose what was said. It gets a deterministic clean-up of the inputs instead: every turn kept,
 * in order, whitespace normalised, the date written out in words so it can be searched.
 */
import { ModelError, type ModelInput, type ModelProvider, type ModelRequest, type ModelResponse } from "../engine/model";
import {
  joinSentences,
  keywords,
  segmentSentences,
  selectSentences,
  textRankScores,
  truncateSentence,
  type Sentence,
} from "../text/text-rank";
import { countTokens } from "../text/tokens";
import { asksForVerbatimRewrite } from "../text/prompt-intent";
import { conversationFacts } from "./conversation-facts";
import { MONTH_NAMES } from "../text/months";

export const OFFLINE_MODEL_ID = "offline/extractive";
export const OFFLINE_MODEL_LABEL =
  "Offline extractive model: summaries are sentences selected from the inputs, not written by an LLM.";

/** Is `model` served by the offline provider ("offline/extractive", or any "offline/…")? */
export function isOfflineModel(model: string): boolean {
  return model === "offline" || model.startsWith("offline/");
}

const DEFAULT_MAX_OUTPUT_TOKENS = 300;
const DEFAULT_FOLD_MAX_OUTPUT_TOKENS = 800;
/** A summary of at most this many sentences (that fits the budget) is the inputs themselves. */
const TINY_SENTENCES = 3;
/** Fold: the newest input's top sentences kept whatever their global rank (up to half the budget). */
const FOLD_KEEP_NEWEST = 3;

/** Sentences of several texts, one block space: each text starts a new block. */
function sentencesOf(texts: readonly string[], code: "keep" | "skip" = "skip"): Sentence[] {
  const out: Sentence[] = [];
  let blockBase = 0;
  for (const text of texts) {
    if (!text) continue;
    let sentences = segmentSentences(text, { code });
    if (sentences.length === 0 && code === "skip") sentences = segmentSentences(text, { code: "keep" });
    let maxBlock = -1;
    for (const s of sentences) {
      out.push({ ...s, block: s.block + blockBase });
      if (s.block > maxBlock) maxBlock = s.block;
    }
    blockBase += maxBlock + 1;
  }
  return out;
}

function contents(inputs: readonly ModelInput[]): string[] {
  return (inputs ?? []).map((i) => (typeof i.content === "string" ? i.content : String(i.content ?? "")));
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

function budget(request: ModelRequest, fallback: number): number {
  const max = request.maxOutputTokens;
  return typeof max === "number" && max > 0 ? Math.floor(max) : fallback;
}

// ---------------------------------------------------------------------------------------------
// Tasks
// ---------------------------------------------------------------------------------------------

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** Does the prompt (with the inputs' own text taken out) ask for a transcript? */
export function isTranscriptRequest(request: ModelRequest): boolean {
  let instructions = request.prompt ?? "";
  for (const text of contents(request.inputs)) if (text) instructions = instructions.split(text).join(" ");
  return asksForVerbatimRewrite(instructions);
}

/** "Monday 8 May 2023", from an ISO timestamp (UTC); null when it does not parse. */
export function dateInWords(iso: unknown): string | null {
  if (typeof iso !== "string") return null;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return null;
  return `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTH_NAMES[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/**
 * Lossless clean-up of a conversation: every paragraph (every turn) is kept in order; only
 * whitespace is normalised (outside code fences) and blank-line runs collapsed. When the input
 * carries a creation time, a "Date:" line in words heads the transcript.
 */
export function cleanTranscript(inputs: readonly ModelInput[]): string {
  const out: string[] = [];
  for (const input of inputs ?? []) {
    const text = (typeof input.content === "string" ? input.content : String(input.content ?? "")).replace(/\r\n?/g, "\n").replace(/[\u200B-\u200D\uFEFF]/g, "");
    const time = (input.metadata as { time?: { created_at?: unknown } } | undefined)?.time?.created_at;
    const date = dateInWords(time);
    const paragraphs: string[] = [];
    let inFence = false;
    let current: string[] = [];
    const flush = () => {
      const p = current.join("\n").trim();
      if (p) paragraphs.push(p);
      current = [];
    };
    for (const raw of text.split("\n")) {
      const line = raw.replace(/\s+$/, "");
      if (/^\s*(`{3,}|~{3,})/.test(line)) inFence = !inFence;
      if (inFence || /^\s*(`{3,}|~{3,})/.test(line)) {
        current.push(line);
        continue;
      }
      if (!line.trim()) {
        flush();
        continue;
      }
      current.push(line.replace(/[ \t]+/g, " ").trim());
    }
    flush();
    if (date && !paragraphs.some((p) => p.includes(date))) paragraphs.splice(paragraphs[0]?.startsWith("#") ? 1 : 0, 0, `Date: ${date}`);
    if (paragraphs.length) out.push(paragraphs.join("\n\n"));
  }
  return out.join("\n\n");
}

function summarize(request: ModelRequest): string {
  if (isTranscriptRequest(request)) return cleanTranscript(request.inputs);
  const maxTokens = budget(request, DEFAULT_MAX_OUTPUT_TOKENS);
  const texts = contents(request.inputs);
  const sentences = sentencesOf(texts);
  if (sentences.length === 0) return "";
  if (sentences.length <= TINY_SENTENCES) {
    const whole = texts.map((t) => t.trim()).filter(Boolean).join("\n\n");
    if (countTokens(whole) <= maxTokens) return whole;
  }
  const maxSentences = clamp(Math.ceil(sentences.length / 3), TINY_SENTENCES, 20);
  return joinSentences(selectSentences(sentences, { maxSentences, maxTokens }));
}

/** The top sentences as facts (whitespace collapsed), in original order, within the budget. */
function extractFacts(sentences: readonly Sentence[], maxTokens: number): string[] {
  const n = sentences.length;
  if (n === 0) return [];
  const maxSentences = n <= 5 ? n : clamp(Math.ceil(n / 2), 5, 25);
  // Each item costs roughly its tokens plus quotes and a comma.
  const selected = selectSentences(sentences, { maxSentences, maxTokens: Math.max(1, maxTokens - 2 - Math.min(n, maxSentences) * 2) });
  return selected.map((s) => collapse(s.text)).filter(Boolean);
}

function extractList(request: ModelRequest): string {
  // A conversation: every informative sentence of every turn, with its speaker and turn (no cap).
  const texts = contents(request.inputs);
  if (texts.length === 1) {
    const facts = conversationFacts(texts[0]!);
    if (facts) return JSON.stringify(facts);
  }
  const sentences = sentencesOf(texts);
  return JSON.stringify(extractFacts(sentences, budget(request, DEFAULT_MAX_OUTPUT_TOKENS)));
}

function fold(request: ModelRequest): string {
  const maxTokens = budget(request, DEFAULT_FOLD_MAX_OUTPUT_TOKENS);
  const stateSentences = sentencesOf([request.state ?? ""], "keep");
  const newSentences = sentencesOf(contents(request.inputs));
  const blockBase = stateSentences.reduce((max, s) => Math.max(max, s.block + 1), 0);
  const all = [...stateSentences, ...newSentences.map((s) => ({ ...s, block: s.block + blockBase }))];
  if (all.length === 0) return "";

  // The newest input's best sentences (by their rank in the combined graph) are kept first.
  const scores = textRankScores(all.map((s) => s.text));
  const firstNew = stateSentences.length;
  const newestTop = newSentences
    .map((_, k) => firstNew + k)
    .sort((a, b) => Math.round(scores[b]! * 1e9) - Math.round(scores[a]! * 1e9) || a - b)
    .slice(0, FOLD_KEEP_NEWEST);
  return joinSentences(
    selectSentences(all, { maxTokens, scores, mustInclude: newestTop, mustIncludeMaxTokens: Math.max(1, Math.floor(maxTokens / 2)) }),
  );
}

function compress(request: ModelRequest): string {
  const state = request.state ?? contents(request.inputs).join("\n\n");
  const stateTokens = countTokens(state);
  if (stateTokens === 0) return "";
  let maxTokens = Math.floor(stateTokens / 2);
  if (typeof request.maxOutputTokens === "number" && request.maxOutputTokens > 0) {
    maxTokens = Math.min(maxTokens, Math.floor(request.maxOutputTokens));
  }
  if (maxTokens <= 0) return "";
  return joinSentences(selectSentences(sentencesOf([state], "keep"), { maxTokens }));
}

function classify(request: ModelRequest): string {
  const texts = contents(request.inputs);
  const text = texts.some((t) => t.trim()) ? texts.join("\n\n") : (request.state ?? "");
  return keywords(text, 1)[0] ?? "unknown";
}

// ---------------------------------------------------------------------------------------------
// Structured output
// ---------------------------------------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

const KEYWORD_FIELD_RE = /(?:^|[_\-\s]|[a-z](?=[A-Z]))(?:names?|titles?|topics?|labels?|categor(?:y|ies)|tags?|keywords?|entit(?:y|ies)|types?|kinds?|subjects?|keys?|ids?|slugs?|themes?|terms?)$/i;
const SUMMARY_FIELD_RE = /summary|abstract|overview|gist|tl;?dr|synopsis/i;
const MAX_DEPTH = 8;

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class JsonFiller {
  private sentenceCursor = 0;
  private keywordCursor = 0;

  constructor(
    private readonly root: Schema,
    private readonly sentences: readonly string[],
    private readonly keywordList: readonly string[],
    private readonly summary: string,
  ) {}

  private nextSentence(): string {
    if (this.sentences.length === 0) return this.nextKeyword();
    return this.sentences[this.sentenceCursor++ % this.sentences.length]!;
  }

  private nextKeyword(): string {
    if (this.keywordList.length === 0) return "";
    return this.keywordList[this.keywordCursor++ % this.keywordList.length]!;
  }

  private resolve(schema: Schema, depth: number): Schema {
    let current = schema;
    for (let hops = 0; hops < 16 && typeof current.$ref === "string"; hops++) {
      const ref = current.$ref as string;
      if (!ref.startsWith("#")) break;
      let target: unknown = this.root;
      for (const raw of ref.slice(1).split("/").filter(Boolean)) {
        const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
        target = isSchema(target) ? target[part] : undefined;
      }
      if (!isSchema(target)) break;
      const rest: Schema = { ...current };
      delete rest.$ref;
      current = { ...target, ...rest };
    }
    if (Array.isArray(current.allOf) && depth < MAX_DEPTH) {
      const merged: Schema = { ...current };
      delete merged.allOf;
      for (const part of current.allOf) {
        if (!isSchema(part)) continue;
        const p = this.resolve(part, depth + 1);
        merged.type ??= p.type;
        merged.properties = { ...(isSchema(p.properties) ? p.properties : {}), ...(isSchema(merged.properties) ? merged.properties : {}) };
        const required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...(Array.isArray(p.required) ? p.required : [])])];
        if (required.length > 0) merged.required = required;
        for (const key of ["items", "enum", "const", "format"]) if (merged[key] === undefined && p[key] !== undefined) merged[key] = p[key];
      }
      if (Object.keys(merged.properties as Schema).length === 0) delete merged.properties;
      current = merged;
    }
    for (const key of ["anyOf", "oneOf"] as const) {
      const options = current[key];
      if (Array.isArray(options) && options.length > 0) {
        const chosen = options.find((o) => isSchema(o) && o.type !== "null") ?? options[0];
        const rest: Schema = { ...current };
        delete rest[key];
        current = isSchema(chosen) ? { ...rest, ...this.resolve(chosen, depth + 1) } : rest;
      }
    }
    return current;
  }

  private typeOf(schema: Schema): string {
    const t = schema.type;
    if (typeof t === "string") return t;
    if (Array.isArray(t)) return (t.find((x) => x !== "null") as string | undefined) ?? (t[0] as string | undefined) ?? "string";
    if (isSchema(schema.properties) || Array.isArray(schema.required)) return "object";
    if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return "array";
    return "string";
  }

  build(input: unknown, name: string, depth = 0): Json {
    const schema = this.resolve(isSchema(input) ? input : {}, depth);
    if (schema.const !== undefined) return schema.const as Json;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as Json;
    const type = this.typeOf(schema);
    if (depth > MAX_DEPTH) return type === "array" ? [] : type === "object" ? {} : type === "string" ? "" : type === "boolean" ? false : type === "null" ? null : 0;
    switch (type) {
      case "object":
        return this.object(schema, depth);
      case "array":
        return this.array(schema, name, depth);
      case "number":
      case "integer":
        return this.number(schema, type === "integer");
      case "boolean":
        return false;
      case "null":
        return null;
      default:
        return this.string(schema, name);
    }
  }

  private object(schema: Schema, depth: number): Json {
    const out: { [key: string]: Json } = {};
    const properties = isSchema(schema.properties) ? schema.properties : {};
    for (const [key, sub] of Object.entries(properties)) out[key] = this.build(sub, key, depth + 1);
    for (const key of Array.isArray(schema.required) ? schema.required : []) {
      if (typeof key === "string" && !(key in out)) out[key] = this.build({}, key, depth + 1);
    }
    return out;
  }

  private array(schema: Schema, name: string, depth: number): Json {
    const minItems = typeof schema.minItems === "number" ? Math.max(0, Math.ceil(schema.minItems)) : 0;
    const maxItems = typeof schema.maxItems === "number" ? Math.max(0, Math.floor(schema.maxItems)) : Infinity;
    if (Array.isArray(schema.prefixItems) || Array.isArray(schema.items)) {
      const tuple = (Array.isArray(schema.prefixItems) ? schema.prefixItems : schema.items) as unknown[];
      return tuple.slice(0, Math.min(tuple.length, Math.max(minItems, maxItems === Infinity ? tuple.length : maxItems))).map((s, i) => this.build(s, `${name}[${i}]`, depth + 1));
    }
    const items = this.resolve(isSchema(schema.items) ? schema.items : {}, depth + 1);
    const itemType = items.const !== undefined || Array.isArray(items.enum) ? "enum" : this.typeOf(items);
    let count: number;
    if (itemType === "string") {
      const available = KEYWORD_FIELD_RE.test(name) ? this.keywordList.length : this.sentences.length;
      count = Math.min(available, 5);
    } else if (itemType === "object" || itemType === "array") {
      // Recursive schemas (trees) would grow exponentially: nested arrays only get their minItems.
      count = depth <= 2 ? Math.min(this.sentences.length, 3) : 0;
    } else if (itemType === "enum") {
      count = 1;
    } else {
      count = 0;
    }
    count = Math.min(Math.max(count, minItems), maxItems);
    const out: Json[] = [];
    if (itemType === "enum" && Array.isArray(items.enum) && items.const === undefined) {
      for (let i = 0; i < count; i++) out.push(items.enum[i % items.enum.length] as Json);
      return out;
    }
    for (let i = 0; i < count; i++) out.push(this.build(items, name, depth + 1));
    return out;
  }

  private number(schema: Schema, integer: boolean): number {
    let value = 0;
    const step = integer ? 1 : 0.5;
    if (typeof schema.minimum === "number" && value < schema.minimum) value = schema.minimum;
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) value = schema.exclusiveMinimum + step;
    if (typeof schema.maximum === "number" && value > schema.maximum) value = schema.maximum;
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) value = schema.exclusiveMaximum - step;
    return integer ? Math.ceil(value) : value;
  }

  private string(schema: Schema, name: string): string {
    let value: string;
    switch (schema.format) {
      case "date-time":
        value = "1970-01-01T00:00:00.000Z";
        break;
      case "date":
        value = "1970-01-01";
        break;
      case "time":
        value = "00:00:00Z";
        break;
      case "email":
        value = "unknown@example.com";
        break;
      case "uri":
      case "url":
        value = "https://example.com/";
        break;
      case "uuid":
        value = "00000000-0000-0000-0000-000000000000";
        break;
      default:
        value = SUMMARY_FIELD_RE.test(name)
          ? this.summary
          : KEYWORD_FIELD_RE.test(name)
            ? this.nextKeyword()
            : this.nextSentence();
    }
    if (typeof schema.maxLength === "number" && [...value].length > schema.maxLength) {
      value = [...value].slice(0, Math.max(0, Math.floor(schema.maxLength))).join("");
    }
    if (typeof schema.minLength === "number" && [...value].length < schema.minLength) {
      value = value + "-".repeat(Math.ceil(schema.minLength) - [...value].length);
    }
    return value;
  }
}

function json(request: ModelRequest): string {
  const maxTokens = budget(request, DEFAULT_MAX_OUTPUT_TOKENS);
  const texts = contents(request.inputs);
  const sentences = sentencesOf(texts);
  const scores = textRankScores(sentences.map((s) => s.text));
  const ranked = sentences
    .map((s, i) => ({ text: collapse(s.text), i }))
    .sort((a, b) => Math.round(scores[b.i]! * 1e9) - Math.round(scores[a.i]! * 1e9) || a.i - b.i)
    .slice(0, 25)
    .map((s) => s.text)
    .filter(Boolean);
  const kws = keywords(texts.join("\n\n"), 10);
  const schema = request.jsonSchema;
  // Fill with sentences cut to a per-field cap; halve the cap until the whole value fits the budget.
  let out = "";
  for (let cap = Math.max(8, Math.floor(maxTokens / 3)); ; cap = Math.floor(cap / 2)) {
    const fieldSentences = ranked.map((t) => truncateSentence(t, cap, Infinity)).filter(Boolean);
    const summary = collapse(joinSentences(selectSentences(sentences, { maxSentences: 3, maxTokens: cap, scores })));
    out = isSchema(schema)
      ? JSON.stringify(new JsonFiller(schema, fieldSentences, kws, summary).build(schema, ""))
      : JSON.stringify({ summary, keywords: kws });
    if (cap <= 4 || countTokens(out) <= maxTokens) return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Provider
// ---------------------------------------------------------------------------------------------

export class OfflineModel implements ModelProvider {
  readonly id = OFFLINE_MODEL_ID;
  readonly label = OFFLINE_MODEL_LABEL;

  async complete(request: ModelRequest): Promise<ModelResponse> {
    request.signal?.throwIfAborted();
    const started = performance.now();
    const text = this.run(request);
    const tokensIn = countTokens(request.prompt ?? "");
    const tokensOut = countTokens(text);
    const latencyMs = Math.round(performance.now() - started);
    return { text, raw: text, model: OFFLINE_MODEL_ID, tokensIn, tokensOut, costUsd: 0, latencyMs, attempts: 1 };
  }

  /** The response text alone (synchronous, deterministic). */
  run(request: ModelRequest): string {
    switch (request.task) {
      case "summarize":
        return summarize(request);
      case "extract-list":
        return extractList(request);
      case "fold":
        return fold(request);
      case "compress":
        return compress(request);
      case "classify":
        return classify(request);
      case "json":
        return json(request);
      default:
        throw new ModelError(`offline model: unsupported task ${JSON.stringify((request as { task?: unknown }).task)}`, { kind: "permanent" });
    }
  }
}
