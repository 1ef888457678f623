/**
 * The vocabulary of a pipeline spec and the small pure checks that both the zod schema (spec.ts)
 * and the graph validator (validate.ts) use. No imports from the rest of server/pipeline, so the
 * two can share it without an import cycle.
 */

export const SOURCE_FORMATS = ["chatgpt-export", "claude-export", "jsonl", "markdown", "text", "json", "folder", "api"] as const;
export const STEP_TYPES = ["transform", "split", "aggregate", "fold", "merge", "consolidate", "entities", "relations", "insights"] as const;
/** Step types that take exactly one input (`from: "name"`); merge takes a list. */
export const SINGLE_INPUT_STEP_TYPES = ["transform", "split", "aggregate", "fold", "consolidate"] as const;
/** Step types that may call a model (have `prompt`, `model`, `temperature`, `output`, `pii`). */
export const LLM_STEP_TYPES = ["transform", "split", "aggregate", "fold", "consolidate", "entities"] as const;
/** Graph steps (Synapsis): entities, beliefs between them, insights over the beliefs. */
export const GRAPH_STEP_TYPES = ["entities", "relations", "insights"] as const;
export const ENTITY_TYPES = ["person", "place", "organization", "thing", "event", "other"] as const;
export const INSIGHT_KINDS = ["connection", "digest", "contradiction"] as const;
/** Step types that accept a built-in operator instead of a prompt. */
export const OPERATOR_STEP_TYPES = ["transform", "split", "aggregate"] as const;
export const SURFACES = ["search", "projection"] as const;
export const PERIODS = ["day", "week", "month", "year"] as const;
export const CONFLICTS = ["prefer_latest", "prefer_first", "keep_all"] as const;
/** consolidate: `full` decides ADD/UPDATE/DELETE/NONE (Memex, Mem0); `add-only` ADD or NONE (Mem0 v3). */
export const CONSOLIDATE_MODES = ["full", "add-only"] as const;

export const TRANSFORM_OPERATOR_KINDS = ["extractive-summary", "pii-flag", "json-pick", "identity", "narrative", "topic"] as const;
export const SPLIT_OPERATOR_KINDS = ["chunk", "sentences", "turns", "regex-entities"] as const;
export const AGGREGATE_OPERATOR_KINDS = ["extractive-summary"] as const;
export const OPERATOR_KINDS_BY_TYPE = {
  transform: TRANSFORM_OPERATOR_KINDS,
  split: SPLIT_OPERATOR_KINDS,
  aggregate: AGGREGATE_OPERATOR_KINDS,
} as const;

/** Step, source and output names: lowercase slugs. */
export const NAME_PATTERN = /^[a-z][a-z0-9_-]*$/;
export const NAME_MAX_LENGTH = 64;
export const NAME_RULE = "a lowercase slug: a letter, then letters, digits, - or _ (at most 64 characters), e.g. \"monthly\"";

/** Scopes are `:`-separated segments, e.g. `acme:eng:alice`. */
export const SCOPE_PATTERN = /^[^:\s]+(?::[^:\s]+)*$/;

/**
 * Reserved metadata keys, as paths relative to a record's `metadata` object (which nests them:
 * `{ time: { created_at, period }, chat: { ... } }`). User metadata lives under `custom.*`.
 */
export const RESERVED_METADATA_KEYS = [
  "time.created_at",
  "time.period",
  "chat.conversation_id",
  "chat.message_id",
  "chat.author",
  "chat.title",
  "source.type",
  "source.path",
  "step.version_hash",
  "step.index",
  "step.sequence",
] as const;
export const METADATA_NAMESPACES = ["time", "chat", "source", "step", "custom"] as const;

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** Why `path` is not a usable metadata path, or undefined when it is. */
export function metadataPathProblem(path: unknown): string | undefined {
  if (typeof path !== "string" || path.length === 0) return "a metadata path is a non-empty string such as \"time.created_at\" or \"custom.topic\"";
  if (path.startsWith("meta.") || path.startsWith("metadata.")) {
    const rest = path.slice(path.indexOf(".") + 1);
    return `metadata paths are relative to the record's metadata: write "${rest}", not "${path}"`;
  }
  const segments = path.split(".");
  if (segments.length < 2 || segments.some((s) => !SEGMENT.test(s))) {
    return `"${path}" is not a metadata path: use dotted segments such as "time.created_at", "chat.conversation_id" or "custom.topic"`;
  }
  if (!(METADATA_NAMESPACES as readonly string[]).includes(segments[0]!)) {
    return `"${path}" is outside the metadata namespaces (${METADATA_NAMESPACES.map((n) => `${n}.*`).join(", ")}); put your own keys under "custom.", e.g. "custom.${segments.join("_")}"`;
  }
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Why a `groupBy` value is unusable, or undefined when it is fine. */
export function groupByProblem(groupBy: unknown): string | undefined {
  const shapes = `{ period: "day" | "week" | "month" | "year" }, { key: "<metadata path>" } or { every: <count ≥ 2> }`;
  if (groupBy === undefined) return `aggregate needs groupBy: ${shapes}`;
  if (!isObject(groupBy)) return `groupBy must be one of ${shapes}`;
  const keys = Object.keys(groupBy);
  if (keys.length !== 1 || !["period", "key", "every"].includes(keys[0]!)) {
    return `groupBy must have exactly one of period, key or every: ${shapes}${keys.length ? `; got ${keys.join(", ")}` : ""}`;
  }
  if ("period" in groupBy) {
    const p = groupBy.period;
    if (!(PERIODS as readonly unknown[]).includes(p)) return `groupBy.period must be one of ${PERIODS.join(", ")}; got ${JSON.stringify(p)}`;
  } else if ("key" in groupBy) {
    return metadataPathProblem(groupBy.key);
  } else {
    const n = groupBy.every;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 2 || n > 1_000_000) {
      return `groupBy.every is a count window (Pyramid tiers): an integer from 2 to 1000000; got ${JSON.stringify(n)}`;
    }
  }
  return undefined;
}

/** Levenshtein distance, for "did you mean" hints. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate to `word`, if it is close enough to be a likely typo. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const squash = (s: string) => s.toLowerCase().replace(/[-_]/g, "");
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = squash(c) === squash(word) ? 0 : editDistance(word.toLowerCase(), c.toLowerCase());
    if (!best || d < best.d) best = { c, d };
  }
  if (!best) return undefined;
  return best.d <= Math.max(1, Math.floor(best.c.length / 3)) ? best.c : undefined;
}

export const quoteList = (names: readonly string[]) => names.map((n) => `"${n}"`).join(", ");
