/**
 * The pipeline spec's shape as a zod schema, and the types read from it: sources, steps (one schema
 * per step kind, with its operators), outputs. Messages say what is wrong in the user's words.
 * Parsing, normalizing and the graph checks are in spec.ts.
 */
import { z } from "zod";
import {
  CONFLICTS,
  CONSOLIDATE_MODES,
  didYouMean,
  ENTITY_TYPES,
  groupByProblem,
  INSIGHT_KINDS,
  metadataPathProblem,
  NAME_MAX_LENGTH,
  NAME_PATTERN,
  NAME_RULE,
  OPERATOR_KINDS_BY_TYPE,
  PERIODS,
  quoteList,
  SCOPE_PATTERN,
  SOURCE_FORMATS,
  STEP_TYPES,
  SURFACES,
} from "./rules";
import {
  DEFAULT_CHECKPOINT_EVERY,
  DEFAULT_CHUNK_OVERLAP,
  DEFAULT_CHUNK_SIZE,
  DEFAULT_CONFLICT,
  DEFAULT_CONSOLIDATE_MODE,
  DEFAULT_CONSOLIDATE_THRESHOLD,
  DEFAULT_DEDUPE,
  DEFAULT_MAX_STATE_TOKENS,
  DEFAULT_MODEL,
  DEFAULT_ORDER_KEY,
  DEFAULT_SENTENCES_PER_RECORD,
  DEFAULT_SUMMARY_SENTENCES,
  DEFAULT_TURNS_PER_WINDOW,
  DEFAULT_TURNS_STRIDE,
  SPEC_VERSION,
} from "./spec-defaults";

type RawIssue = { code?: string; input?: unknown };
/** A schema-level error message: "<what> is required" when missing, else `invalid` (or zod's default). */
const errorFor =
  (what: string, invalid?: string | ((input: unknown) => string | undefined)) =>
  (iss: RawIssue): string | undefined => {
    if (iss.input === undefined) return `${what} is required`;
    if (typeof invalid === "function") return invalid(iss.input);
    return iss.code === "invalid_type" || iss.code === "invalid_value" || iss.code === "invalid_union" ? invalid : undefined;
  };

const got = (v: unknown) => (Array.isArray(v) ? "a list" : v === null ? "null" : typeof v === "string" ? JSON.stringify(v) : typeof v);

export const nameSchema = z
  .string({ error: errorFor("name", `name must be ${NAME_RULE}`) })
  .max(NAME_MAX_LENGTH, `names are at most ${NAME_MAX_LENGTH} characters`)
  .regex(NAME_PATTERN, `name must be ${NAME_RULE}`);

const description = z.string({ error: "description must be a string" }).max(4000, "description is at most 4000 characters").optional();

export const metadataPathSchema = z.string({ error: errorFor("metadata path", "a metadata path is a string such as \"time.created_at\"") }).superRefine((value, ctx) => {
  const problem = metadataPathProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const int = (what: string, min: number, max: number) =>
  z
    .number({ error: errorFor(what, `${what} must be a whole number from ${min} to ${max}`) })
    .int(`${what} must be a whole number`)
    .min(min, `${what} must be at least ${min}`)
    .max(max, `${what} must be at most ${max}`);

const singleFrom = (type: string) =>
  z
    .string({
      error: errorFor(`from (the step or source this ${type} reads)`, (input) =>
        Array.isArray(input)
          ? `${type} takes exactly one input: from must be a single step or source name, not a list (combine several inputs with a merge step first)`
          : `from must be the name of a step or source; got ${got(input)}`,
      ),
    })
    .min(1, "from must name a step or source");

// Operators -----------------------------------------------------------------------------------

const extractiveSummaryOperator = (sentences: number) =>
  z.strictObject({
    kind: z.literal("extractive-summary"),
    sentences: int("sentences", 1, 100).default(sentences),
  });
const piiFlagOperator = z.strictObject({ kind: z.literal("pii-flag") });
const jsonPickOperator = z.strictObject({
  kind: z.literal("json-pick"),
  field: z.string({ error: errorFor("field (the JSON field to pick)", "field must be a string such as \"answer\" or \"data.text\"") }).min(1, "field must not be empty").max(256),
});
const identityOperator = z.strictObject({ kind: z.literal("identity") });
/** Synapse's narrative entities (mental state, tensions, environment), extracted with no model into `metadata.custom`. */
const narrativeOperator = z.strictObject({ kind: z.literal("narrative") });
/** A topic label in `metadata.custom.topic` (content unchanged): the label whose keywords the text shares most. */
const topicOperator = z.strictObject({
  kind: z.literal("topic"),
  topics: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "topic labels are lowercase slugs such as \"work\""),
      z.array(z.string().min(1).max(100)).max(500),
      { error: "topics maps each label to its keywords, e.g. { work = [\"job\", \"office\"] }" },
    )
    .optional(),
  fallback: z.string().min(1).max(64).optional(),
});
const chunkOperator = z.strictObject({
  kind: z.literal("chunk"),
  size: int("size (characters per chunk)", 1, 1_000_000).default(DEFAULT_CHUNK_SIZE),
  overlap: int("overlap (characters)", 0, 1_000_000).default(DEFAULT_CHUNK_OVERLAP),
});
const sentencesOperator = z.strictObject({
  kind: z.literal("sentences"),
  per: int("per (sentences per record)", 1, 1000).default(DEFAULT_SENTENCES_PER_RECORD),
});
/** Windows of conversation turns ("Speaker: text" paragraphs), turn numbers in metadata. */
const turnsOperator = z.strictObject({
  kind: z.literal("turns"),
  size: int("size (turns per window)", 1, 1000).default(DEFAULT_TURNS_PER_WINDOW),
  stride: int("stride (turns between window starts)", 1, 1000).default(DEFAULT_TURNS_STRIDE),
  /** Every stride-th turn is the centre of a window (edge windows are shorter), instead of its start. */
  centered: z.boolean().optional(),
  /** "compact": the date in the header each window repeats is written in fewer words (text/compact-dates.ts). */
  date: z.enum(["as-written", "compact"]).optional(),
});
const regexEntitiesOperator = z.strictObject({ kind: z.literal("regex-entities") });

function operatorError(type: keyof typeof OPERATOR_KINDS_BY_TYPE) {
  return errorFor("operator", (input) => {
    const kind = (input as { kind?: unknown } | null)?.kind;
    const allowed = OPERATOR_KINDS_BY_TYPE[type];
    if (typeof kind !== "string") return `operator must be an object with a kind: ${quoteList(allowed)}`;
    const elsewhere = (Object.keys(OPERATOR_KINDS_BY_TYPE) as (keyof typeof OPERATOR_KINDS_BY_TYPE)[]).filter((t) =>
      (OPERATOR_KINDS_BY_TYPE[t] as readonly string[]).includes(kind),
    );
    const hint = elsewhere.length ? ` ("${kind}" is a ${elsewhere.join("/")} operator)` : "";
    return `unknown ${type} operator "${kind}"${hint}; ${type} operators are ${quoteList(allowed)}`;
  });
}

export const transformOperatorSchema = z.discriminatedUnion(
  "kind",
  [extractiveSummaryOperator(DEFAULT_SUMMARY_SENTENCES.transform), piiFlagOperator, jsonPickOperator, identityOperator, narrativeOperator, topicOperator],
  { error: operatorError("transform") },
);
export const splitOperatorSchema = z.discriminatedUnion("kind", [chunkOperator, sentencesOperator, turnsOperator, regexEntitiesOperator], {
  error: operatorError("split"),
});
export const aggregateOperatorSchema = z.discriminatedUnion("kind", [extractiveSummaryOperator(DEFAULT_SUMMARY_SENTENCES.aggregate)], {
  error: operatorError("aggregate"),
});

// Grouping, dedupe ----------------------------------------------------------------------------

export const groupBySchema = z.union(
  [
    z.strictObject({ period: z.enum(PERIODS) }),
    z.strictObject({ key: metadataPathSchema }),
    z.strictObject({ every: int("groupBy.every", 2, 1_000_000) }),
  ],
  { error: (iss: RawIssue) => groupByProblem(iss.input) },
);

export const dedupeSchema = z.union(
  [
    z.enum(["content_hash", "none"]),
    z.strictObject({ metadataMatch: z.array(metadataPathSchema).min(1, "metadataMatch lists at least one metadata path") }),
    z.strictObject({ fuzzy: z.number().gt(0, "fuzzy is a similarity threshold above 0").max(1, "fuzzy is a similarity threshold of at most 1") }),
  ],
  {
    error: () =>
      `dedupe must be "content_hash", "none", { metadataMatch: ["chat.conversation_id", ...] } or { fuzzy: <0..1> }`,
  },
);

// Steps ---------------------------------------------------------------------------------------

const llmFields = {
  prompt: z.string({ error: "prompt must be a string (a Liquid template)" }).max(200_000, "prompt is at most 200000 characters").optional(),
  model: z
    .string({ error: "model must be a string such as \"openai/gpt-4o-mini\"" })
    .regex(/^[A-Za-z0-9][\w.-]*\/\S+$/, `model is "provider/model", e.g. "${DEFAULT_MODEL}" or "openai/gpt-4o-mini"`)
    .max(200)
    .optional(),
  temperature: z
    .number({ error: "temperature must be a number from 0 to 2" })
    .min(0, "temperature must be from 0 to 2")
    .max(2, "temperature must be from 0 to 2")
    .optional(),
  output: z.record(z.string(), z.unknown(), { error: "output must be a JSON schema object (structured output)" }).optional(),
  pii: z.literal("flag", { error: "pii must be \"flag\"" }).optional(),
};

export const transformStepSchema = z.strictObject({
  type: z.literal("transform"),
  name: nameSchema,
  description,
  from: singleFrom("transform"),
  ...llmFields,
  operator: transformOperatorSchema.optional(),
});

export const splitStepSchema = z.strictObject({
  type: z.literal("split"),
  name: nameSchema,
  description,
  from: singleFrom("split"),
  ...llmFields,
  operator: splitOperatorSchema.optional(),
});

export const aggregateStepSchema = z.strictObject({
  type: z.literal("aggregate"),
  name: nameSchema,
  description,
  from: singleFrom("aggregate"),
  groupBy: groupBySchema,
  ...llmFields,
  operator: aggregateOperatorSchema.optional(),
});

export const foldStepSchema = z.strictObject({
  type: z.literal("fold"),
  name: nameSchema,
  description,
  from: singleFrom("fold"),
  orderKey: metadataPathSchema.default(DEFAULT_ORDER_KEY),
  checkpointEvery: int("checkpointEvery", 1, 100_000).default(DEFAULT_CHECKPOINT_EVERY),
  maxStateTokens: int("maxStateTokens", 100, 2_000_000).default(DEFAULT_MAX_STATE_TOKENS),
  initialState: z.string({ error: "initialState must be a string" }).max(1_000_000).optional(),
  ...llmFields,
});

export const mergeStepSchema = z.strictObject({
  type: z.literal("merge"),
  name: nameSchema,
  description,
  from: z
    .array(z.string({ error: "each input must be a step or source name" }).min(1, "input names must not be empty"), {
      error: errorFor("from (the inputs to merge)", (input) =>
        typeof input === "string"
          ? `merge takes a list of at least two inputs: write from: ["${input}", "..."], not a single name`
          : `from must be a list of at least two step or source names; got ${got(input)}`,
      ),
    })
    .min(2, "merge takes a list of at least two inputs"),
  dedupe: dedupeSchema.default(DEFAULT_DEDUPE),
  conflict: z
    .enum(CONFLICTS, { error: `conflict must be one of ${quoteList(CONFLICTS)}` })
    .default(DEFAULT_CONFLICT),
});

export const consolidateStepSchema = z.strictObject({
  type: z.literal("consolidate"),
  name: nameSchema,
  description,
  from: singleFrom("consolidate"),
  threshold: z.number({ error: "threshold must be a number from 0 to 1" }).min(0).max(1).default(DEFAULT_CONSOLIDATE_THRESHOLD),
  mode: z.enum(CONSOLIDATE_MODES, { error: `mode must be one of ${quoteList(CONSOLIDATE_MODES)}` }).default(DEFAULT_CONSOLIDATE_MODE),
  ...llmFields,
});

const fromOneOrMore = (type: string) =>
  z.union([z.string().min(1, "from must name a step or source"), z.array(z.string().min(1, "input names must not be empty")).min(1, `${type} reads at least one input`)], {
    error: errorFor(`from (the step(s) this ${type} step reads)`, "from must be a step name or a list of step names"),
  });

/** A predicate as beliefs store it: a lower-case verb phrase ("lives in", "works at"). */
const predicateSchema = z
  .string({ error: "a predicate is a lower-case verb phrase such as \"lives in\"" })
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z' -]*$/, "a predicate is a lower-case verb phrase such as \"lives in\"");

/**
 * entities (Synapsis): one record per resolved entity of a scope (canonical name, aliases, type,
 * mentions). Offline: speaker names, capitalised names and the `dictionary`; with a prompt and a
 * model: the model's structured output per input record, resolved the same way.
 */
export const entitiesStepSchema = z.strictObject({
  type: z.literal("entities"),
  name: nameSchema,
  description,
  from: fromOneOrMore("entities"),
  /** Known entities: canonical name → aliases (`{ Melanie = ["Mel"] }`); always recognised, always merged. */
  dictionary: z
    .record(z.string().min(1, "a canonical name must not be empty").max(200), z.array(z.string().min(1, "an alias must not be empty").max(200)).max(500), {
      error: "dictionary maps each canonical name to its aliases, e.g. { Melanie = [\"Mel\"] }",
    })
    .optional(),
  ...llmFields,
});

/**
 * relations (Synapsis): beliefs (subject —predicate→ object) with valid and learned times; a later
 * source that changes a functional fact supersedes the earlier belief (both kept). `from` lists
 * the text step(s) and the entities step.
 */
export const relationsStepSchema = z.strictObject({
  type: z.literal("relations"),
  name: nameSchema,
  description,
  from: z
    .array(z.string({ error: "each input must be a step name" }).min(1, "input names must not be empty"), {
      error: errorFor("from (the text step and the entities step)", (input) =>
        typeof input === "string"
          ? `relations reads the text and its entities: write from: ["${input}", "<entities step>"]`
          : `from must list the text step and the entities step; got ${got(input)}`,
      ),
    })
    .min(2, "relations reads the text step and the entities step: from lists both"),
  /** Predicates that hold one value at a time: a later different value supersedes the earlier one. */
  functional: z.array(predicateSchema).max(100).optional(),
  /** Entities mentioned in one source are linked by a "mentioned with" belief (default true). */
  coMentions: z.boolean({ error: "coMentions must be true or false" }).optional(),
});

/** insights (Synapsis): new connections, monthly digests and contradictions over the beliefs. */
export const insightsStepSchema = z.strictObject({
  type: z.literal("insights"),
  name: nameSchema,
  description,
  from: fromOneOrMore("insights"),
  kinds: z
    .array(z.enum(INSIGHT_KINDS, { error: `an insight kind is one of ${quoteList(INSIGHT_KINDS)}` }))
    .min(1, "kinds lists at least one insight kind")
    .optional(),
});

export const entityTypeSchema = z.enum(ENTITY_TYPES);

/** Each step type's schema (its known fields, in order). */
export const STEP_SCHEMAS = {
  transform: transformStepSchema,
  split: splitStepSchema,
  aggregate: aggregateStepSchema,
  fold: foldStepSchema,
  merge: mergeStepSchema,
  consolidate: consolidateStepSchema,
  entities: entitiesStepSchema,
  relations: relationsStepSchema,
  insights: insightsStepSchema,
} as const;

export const stepSchema = z.discriminatedUnion(
  "type",
  [
    transformStepSchema,
    splitStepSchema,
    aggregateStepSchema,
    foldStepSchema,
    mergeStepSchema,
    consolidateStepSchema,
    entitiesStepSchema,
    relationsStepSchema,
    insightsStepSchema,
  ],
  {
    error: (iss: RawIssue) => {
      const type = (iss.input as { type?: unknown } | null)?.type;
      if (typeof iss.input !== "object" || iss.input === null || Array.isArray(iss.input)) return "a step must be an object";
      if (type === undefined) return `type is required: one of ${quoteList(STEP_TYPES)}`;
      const guess = typeof type === "string" ? didYouMean(type, STEP_TYPES) : undefined;
      return `unknown step type ${JSON.stringify(type)}${guess ? ` (did you mean "${guess}"?)` : ""}; step types are ${quoteList(STEP_TYPES)}`;
    },
  },
);

// Sources and outputs -------------------------------------------------------------------------

export const sourceSchema = z.strictObject({
  name: nameSchema,
  format: z.enum(SOURCE_FORMATS, { error: errorFor("format", `format must be one of ${quoteList(SOURCE_FORMATS)}`) }),
  scope: z
    .string({ error: "scope must be a string such as \"acme:eng:alice\"" })
    .max(256)
    .regex(SCOPE_PATTERN, "scope is :-separated segments without spaces, e.g. \"acme:eng:alice\"")
    .optional(),
  description,
});

export const outputSchema = z.strictObject({
  name: nameSchema,
  description,
  from: z.union([z.string().min(1, "from must name a step or source"), z.array(z.string().min(1, "input names must not be empty")).min(1, "from lists at least one step or source")], {
    error: errorFor("from (the step(s) this output reads)", "from must be a step name or a list of step names"),
  }),
  surface: z.enum(SURFACES, { error: errorFor("surface", `surface must be "search" (an index) or "projection" (the latest record(s))`) }),
  template: z.string({ error: "template must be a string (a Liquid template)" }).max(200_000).optional(),
  webhook: z
    .strictObject({ url: z.url({ protocol: /^https?$/, error: "webhook.url must be an http(s) URL" }) }, { error: "webhook must be { url: \"https://...\" }" })
    .optional(),
  embedder: z.string({ error: "embedder must be a string" }).min(1).max(200).optional(),
});

export const pipelineSpecSchema = z.strictObject({
  version: z.literal(SPEC_VERSION, { error: "version must be 1 (the only spec version so far)" }).default(SPEC_VERSION),
  sources: z.array(sourceSchema, { error: "sources must be a list" }).default([]),
  steps: z.array(stepSchema, { error: "steps must be a list" }).default([]),
  outputs: z.array(outputSchema, { error: "outputs must be a list" }).default([]),
});

// ---------------------------------------------------------------------------------------------
// Types

/** A parsed, normalized spec (defaults applied). */
export type PipelineSpec = z.output<typeof pipelineSpecSchema>;
/** What a user may write: defaults optional. */
export type PipelineSpecInput = z.input<typeof pipelineSpecSchema>;

export type SourceSpec = z.output<typeof sourceSchema>;
export type OutputSpec = z.output<typeof outputSchema>;
export type StepSpec = z.output<typeof stepSchema>;
export type StepType = StepSpec["type"];
export type TransformStep = z.output<typeof transformStepSchema>;
export type SplitStep = z.output<typeof splitStepSchema>;
export type AggregateStep = z.output<typeof aggregateStepSchema>;
export type FoldStep = z.output<typeof foldStepSchema>;
export type MergeStep = z.output<typeof mergeStepSchema>;
export type ConsolidateStep = z.output<typeof consolidateStepSchema>;
export type EntitiesStep = z.output<typeof entitiesStepSchema>;
export type RelationsStep = z.output<typeof relationsStepSchema>;
export type InsightsStep = z.output<typeof insightsStepSchema>;
export type EntityType = (typeof ENTITY_TYPES)[number];
export type InsightKind = (typeof INSIGHT_KINDS)[number];
/** Steps that may call a model (every type but the mechanical ones). */
export type LlmStep = Exclude<StepSpec, MergeStep | RelationsStep | InsightsStep>;

export type SourceSpecInput = z.input<typeof sourceSchema>;
export type OutputSpecInput = z.input<typeof outputSchema>;
export type StepSpecInput = z.input<typeof stepSchema>;
export type TransformStepInput = z.input<typeof transformStepSchema>;
export type SplitStepInput = z.input<typeof splitStepSchema>;
export type AggregateStepInput = z.input<typeof aggregateStepSchema>;
export type FoldStepInput = z.input<typeof foldStepSchema>;
export type MergeStepInput = z.input<typeof mergeStepSchema>;
export type ConsolidateStepInput = z.input<typeof consolidateStepSchema>;
export type EntitiesStepInput = z.input<typeof entitiesStepSchema>;
export type RelationsStepInput = z.input<typeof relationsStepSchema>;
export type InsightsStepInput = z.input<typeof insightsStepSchema>;

export type TransformOperator = z.output<typeof transformOperatorSchema>;
export type SplitOperator = z.output<typeof splitOperatorSchema>;
export type AggregateOperator = z.output<typeof aggregateOperatorSchema>;
/** Any built-in operator. */
export type Operator = TransformOperator | SplitOperator | AggregateOperator;
export type OperatorInput =
  | z.input<typeof transformOperatorSchema>
  | z.input<typeof splitOperatorSchema>
  | z.input<typeof aggregateOperatorSchema>;
export type GroupBy = z.output<typeof groupBySchema>;
export type Dedupe = z.output<typeof dedupeSchema>;
export type Conflict = (typeof CONFLICTS)[number];
export type Period = (typeof PERIODS)[number];
export type SourceFormat = (typeof SOURCE_FORMATS)[number];
export type Surface = (typeof SURFACES)[number];
