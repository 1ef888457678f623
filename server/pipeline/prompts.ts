/**
 * Prompts are Liquid templates (liquidjs): data that hashes, diffs and versions like the rest of
 * the spec. The engine is locked down: unknown filters are errors, there is no filesystem (no
 * include/render/layout), output is not HTML-escaped, dates render in UTC, and parsing and
 * rendering are bounded in size and time.
 *
 * Variables a template can use:
 * - `record`  { id, content, scope, metadata } — the input record (transform, split, fold, consolidate;
 *             for an output template, the latest record). `metadata` is nested:
 *             `record.metadata.time.created_at`, `record.metadata.chat.title`, `record.metadata.custom.topic`.
 * - `records` [record, ...] — the group's records (aggregate), similar memories (consolidate), the
 *             latest records (output template).
 * - `group`   { key, scope, size } — aggregate only: the group key ("2024-03" for a monthly period).
 * - `state`   string — fold only: the accumulated state so far ("" at the start, or initialState).
 * - `scope`   string — the scope being processed, e.g. "acme:eng:alice".
 * - `now`     ISO timestamp — chosen by the runner (stable within a run, so replays stay cacheable).
 */
import { Liquid, type Template } from "liquidjs";

export const TEMPLATE_VARIABLES = ["record", "records", "group", "state", "scope", "now"] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

export interface TemplateRecord {
  id: string;
  content: string;
  scope?: string;
  metadata?: Record<string, unknown>;
}

export interface TemplateVars {
  record?: TemplateRecord;
  records?: TemplateRecord[];
  group?: { key: string; scope?: string; size: number };
  state?: string;
  scope?: string;
  now?: string;
}

export class TemplateError extends Error {
  constructor(
    message: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(message);
    this.name = "TemplateError";
  }
}

const engine = new Liquid({
  strictFilters: true,
  strictVariables: false,
  ownPropertyOnly: true,
  // No filesystem: include/render/layout look up this empty map and fail.
  templates: {},
  dynamicPartials: true,
  timezoneOffset: 0,
  parseLimit: 1_000_000,
  renderLimit: 5_000,
  memoryLimit: 64 * 1024 * 1024,
});

const CACHE_LIMIT = 500;
const cache = new Map<string, Template[]>();

function friendly(err: unknown): TemplateError {
  const e = err as { message?: string; token?: { getPosition?: () => [number, number] } };
  let message = String(e?.message ?? err);
  if (/Failed to lookup|illegal file path/.test(message)) {
    message = `templates cannot include other files (include, render and layout are not available): inline the text instead (${message})`;
  }
  const pos = e?.token?.getPosition?.();
  return new TemplateError(message, pos?.[0], pos?.[1]);
}

function parse(template: string): Template[] {
  const hit = cache.get(template);
  if (hit) return hit;
  let parsed: Template[];
  try {
    parsed = engine.parse(template);
  } catch (err) {
    throw friendly(err);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(template, parsed);
  return parsed;
}

export type TemplateCheck =
  | { ok: true; variables: string[]; unknownVariables: string[] }
  | { ok: false; message: string; line?: number; column?: number };

/**
 * Does the template parse, and which variables does it read? `unknownVariables` are root names
 * that are none of record, records, group, state, scope, now (usually typos).
 */
export function checkTemplate(template: string): TemplateCheck {
  try {
    const parsed = parse(template);
    const variables = [...new Set(engine.globalVariablesSync(parsed))];
    const known = TEMPLATE_VARIABLES as readonly string[];
    return { ok: true, variables, unknownVariables: variables.filter((v) => !known.includes(v)) };
  } catch (err) {
    const e = err instanceof TemplateError ? err : friendly(err);
    return { ok: false, message: e.message, line: e.line, column: e.column };
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Metadata stored with dotted keys (`{ "time.period": "2024-03" }`) is also readable nested
 * (`record.metadata.time.period`). Nested values win; the caller's object is not modified.
 */
function nestMetadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!metadata) return {};
  const dotted = Object.keys(metadata).filter((k) => k.includes("."));
  if (!dotted.length) return metadata;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) if (!key.includes(".")) out[key] = value;
  for (const key of dotted) {
    const parts = key.split(".");
    let node: Record<string, unknown> | undefined = out;
    for (const part of parts.slice(0, -1)) {
      const next: unknown = node[part];
      if (next === undefined) node[part] = {};
      else if (isPlainObject(next)) node[part] = { ...next };
      else {
        node = undefined;
        break;
      }
      node = node[part] as Record<string, unknown>;
    }
    const last = parts.at(-1)!;
    if (node && !(last in node)) node[last] = metadata[key];
  }
  return out;
}

function prepareRecord(r: unknown): unknown {
  if (typeof r !== "object" || r === null) return r;
  const rec = r as TemplateRecord;
  return { ...rec, metadata: nestMetadata(rec.metadata) };
}

/** Render a template. Throws `TemplateError` when it does not parse or rendering fails. */
export function renderTemplate(template: string, vars: TemplateVars | Record<string, unknown> = {}): string {
  const parsed = parse(template);
  const scope: Record<string, unknown> = { ...vars };
  if ("record" in scope) scope.record = prepareRecord(scope.record);
  if (Array.isArray(scope.records)) scope.records = scope.records.map(prepareRecord);
  try {
    return String(engine.renderSync(parsed, scope));
  } catch (err) {
    throw friendly(err);
  }
}

// ---------------------------------------------------------------------------------------------
// Default prompts (the seed's prompt functions, as Liquid templates)

const transcript = `Rewrite this conversation as a clean transcript.

Keep every turn, in order, one paragraph per turn, prefixed with the speaker ("User:" or "Assistant:").
Drop interface noise and boilerplate. Replace long code blocks, tables and logs with a one-line
description in brackets, e.g. [code: Python FastAPI route with JWT auth].
Keep names, numbers, dates, decisions and open questions exactly as written. Add nothing.
{% if record.metadata.chat.title %}
Title: {{ record.metadata.chat.title }}{% endif %}{% if record.metadata.time.created_at %}
Date: {{ record.metadata.time.created_at | slice: 0, 10 }}{% endif %}

## Conversation
{{ record.content }}

## Transcript
`;

const summary = `Summarize this conversation in 2-3 sentences.

Include:
- Main topic or question
- Key conclusions or decisions
- Any action items mentioned

Write about the user in the third person ("The user ..."). Keep concrete names, tools, numbers and dates.
{% if record.metadata.time.created_at %}
Date: {{ record.metadata.time.created_at | slice: 0, 10 }}{% endif %}

## Conversation
{{ record.content }}

## Summary
`;

const monthly = `Reflect on this month's conversations.

Month: {{ group.key }}
Conversations: {{ group.size }}

Describe what the user worked on, what they learned or decided, what changed compared with
before, and which questions are still open. Group related threads together, keep names, tools and
dates, and leave out filler.

## Summaries
{% for r in records %}- {{ r.content }}
{% endfor %}
## Reflection
`;

const worldModel = `Update your understanding of the user based on new information.

Keep what is still true, revise what the new information contradicts (say what changed and when),
and add what is new: who they are, what they work on, goals, preferences, tools, people, and open
threads. When sources conflict, prefer the more recent one. Be concise and factual: short sections
of bullet points.

Current understanding:
{% if state != empty %}{{ state }}{% else %}(nothing yet: this is the first period){% endif %}

New reflection ({{ record.metadata.time.period | default: "unknown" }}):
{{ record.content }}

## Updated Understanding
`;

const facts = `Extract the durable facts about the user from this text, one per line.

A fact is a short, self-contained statement that stays true beyond this conversation: identity,
preferences, relationships, projects, decisions, skills, plans with their dates. Write each in the
third person ("The user ..."), resolve pronouns and relative dates{% if record.metadata.time.created_at %} (the text is from {{ record.metadata.time.created_at | slice: 0, 10 }}){% endif %}.
Skip small talk, unanswered questions and anything uncertain. Output only the list: one fact per
line, no numbering, nothing else.

## Text
{{ record.content }}

## Facts
`;

/** Good starting prompts for the default chat-memory architecture and fact extraction. */
export const DEFAULT_TEMPLATES = {
  /** transform over a raw chat export record */
  transcript,
  /** transform: one conversation → 2-3 sentences */
  summary,
  /** aggregate by month: summaries → reflection */
  monthly,
  /** fold over monthly reflections: the world model */
  worldModel,
  /** split: text → one durable fact per line */
  facts,
} as const;

export type DefaultTemplateName = keyof typeof DEFAULT_TEMPLATES;
