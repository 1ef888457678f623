/**
 * The pipeline spec: the single source of truth for a memory architecture. The canvas, the
 * TypeScript SDK, the CLI and TOML all produce and consume this JSON shape, validated here.
 *
 * `parseSpec` = this zod schema (shape, with defaults applied) + `validatePipeline` (the graph).
 * A parsed spec is *normalized*: every default is written out, so a stored spec keeps meaning the
 * same thing even if a default changes later, and hashes do not depend on how it was written.
 * Canvas layout is never part of the spec.
 *
 * The parts: `spec-defaults.ts` (defaults), `spec-schema.ts` (the zod schema and the types),
 * `spec-problems.ts` (how problems are located and listed); everything is re-exported here.
 */
import type { z } from "zod";
import { didYouMean } from "./rules";
import { DEFAULT_MODEL, DEFAULT_TEMPERATURE } from "./spec-defaults";
import { at, dedupeProblems, isPrefix, sortProblems, SpecError, withNodes, type Problem } from "./spec-problems";
import { outputSchema, pipelineSpecSchema, sourceSchema, STEP_SCHEMAS, type LlmStep, type PipelineSpec, type PipelineSpecInput, type StepSpec, type StepType } from "./spec-schema";
import { validatePipeline } from "./validate";

export {
  AGGREGATE_OPERATOR_KINDS,
  CONFLICTS,
  CONSOLIDATE_MODES,
  ENTITY_TYPES,
  GRAPH_STEP_TYPES,
  INSIGHT_KINDS,
  LLM_STEP_TYPES,
  METADATA_NAMESPACES,
  NAME_PATTERN,
  OPERATOR_KINDS_BY_TYPE,
  OPERATOR_STEP_TYPES,
  PERIODS,
  RESERVED_METADATA_KEYS,
  SINGLE_INPUT_STEP_TYPES,
  SOURCE_FORMATS,
  SPLIT_OPERATOR_KINDS,
  STEP_TYPES,
  SURFACES,
  TRANSFORM_OPERATOR_KINDS,
} from "./rules";
export * from "./spec-defaults";
export { formatPath, formatProblems, nodeAt, SpecError, type Problem } from "./spec-problems";
export * from "./spec-schema";

export type ParseResult = { ok: true; spec: PipelineSpec } | { ok: false; problems: Problem[] };

// ---------------------------------------------------------------------------------------------
// Reading a spec

/** The input names of a step or output (`from` as a list). */
export function fromList(node: { from: string | string[] }): string[] {
  return Array.isArray(node.from) ? node.from : [node.from];
}

/** True for a step that calls a model (it has a prompt). */
export function usesModel(step: StepSpec): step is LlmStep & { prompt: string } {
  return "prompt" in step && typeof step.prompt === "string";
}

// ---------------------------------------------------------------------------------------------
// Parsing

function knownKeys(input: unknown, path: readonly (string | number)[]): { what: string; keys: string[] } | undefined {
  const section = path[0];
  if (path.length === 0) return { what: "the spec", keys: Object.keys(pipelineSpecSchema.shape) };
  if (path.length !== 2 || typeof path[1] !== "number") return undefined;
  if (section === "sources") return { what: "a source", keys: Object.keys(sourceSchema.shape) };
  if (section === "outputs") return { what: "an output", keys: Object.keys(outputSchema.shape) };
  if (section === "steps") {
    const type = (at(input, path) as { type?: unknown } | undefined)?.type;
    if (typeof type === "string" && type in STEP_SCHEMAS) {
      return { what: `a ${type} step`, keys: Object.keys(STEP_SCHEMAS[type as StepType].shape) };
    }
  }
  return undefined;
}

function unknownKeyMessage(input: unknown, path: (string | number)[], key: string): string {
  const step = path[0] === "steps" && path.length === 2 ? (at(input, path) as { type?: unknown } | undefined) : undefined;
  if (step?.type === "merge" && ["prompt", "model", "temperature", "output", "operator", "pii"].includes(key)) {
    return `merge is mechanical (no model, no operator): remove "${key}"; to reconcile with a model, add a transform after the merge`;
  }
  if ((step?.type === "relations" || step?.type === "insights") && ["prompt", "model", "temperature", "output", "operator", "pii"].includes(key)) {
    return `${String(step.type)} is deterministic (no model, no operator): remove "${key}"; a model can extract entities in the entities step`;
  }
  if (step?.type === "entities" && key === "operator") return `entities has no operators: it extracts offline (speakers, capitalised names, dictionary) or with a prompt`;
  if (step?.type === "fold" && key === "operator") return `fold has no built-in operators: it needs a prompt`;
  if (step?.type === "consolidate" && key === "operator") return `consolidate has no built-in operators: it needs a prompt`;
  if (step && key === "operator") return `${String(step.type)} has no built-in operators`;
  if (key === "groupBy" && step) return `groupBy only applies to aggregate steps`;
  const known = knownKeys(input, path);
  if (!known) return `unknown field "${key}"`;
  const guess = didYouMean(key, known.keys);
  return `unknown field "${key}" in ${known.what}${guess ? ` (did you mean "${guess}"?)` : ""}; known fields: ${known.keys.join(", ")}`;
}

function zodProblems(input: unknown, error: z.ZodError): Problem[] {
  const out: Problem[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map((p) => (typeof p === "number" ? p : String(p)));
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ path: [...path, key], message: unknownKeyMessage(input, path, key) });
      continue;
    }
    // A bad discriminator is reported at the union; point at the field itself.
    if (issue.code === "invalid_union" && path[0] === "steps" && path.length === 2) path.push("type");
    out.push({ path, message: issue.message });
  }
  return out;
}

/** Prompt steps get their model and temperature written out; operator steps stay without them. */
function fillModelDefaults(spec: PipelineSpec): PipelineSpec {
  return {
    ...spec,
    steps: spec.steps.map((step) => {
      if (!("prompt" in step) || typeof step.prompt !== "string") return step;
      const filled: Record<string, unknown> = { ...step, model: step.model ?? DEFAULT_MODEL, temperature: step.temperature ?? DEFAULT_TEMPERATURE };
      // Keys in schema order, so a normalized spec serializes the same however it was written.
      const order = Object.keys(STEP_SCHEMAS[step.type].shape);
      return Object.fromEntries(order.filter((k) => filled[k] !== undefined).map((k) => [k, filled[k]])) as StepSpec;
    }),
  };
}

/**
 * Specs stored before the two window operators became one: the `windows` split operator
 * (`{ kind: "windows", radius }`, a window centred on every turn) is read as the `turns` operator
 * it equals (`{ kind: "turns", size: 2 × radius + 1, stride: 1, centered: true }`). Returns the
 * input itself when there is nothing to upgrade; never mutates it.
 */
export function upgradeLegacySpec(input: unknown): unknown {
  const steps = (input as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return input;
  const legacy = (step: unknown) => {
    const op = (step as { type?: unknown; operator?: { kind?: unknown; radius?: unknown } } | null)?.operator;
    return (step as { type?: unknown }).type === "split" && op?.kind === "windows" ? op : null;
  };
  if (!steps.some((s) => s && typeof s === "object" && legacy(s))) return input;
  return {
    ...(input as object),
    steps: steps.map((step) => {
      const op = step && typeof step === "object" ? legacy(step) : null;
      if (!op) return step;
      const { radius = 1, ...rest } = op as { radius?: unknown; kind: unknown };
      const size = typeof radius === "number" && Number.isInteger(radius) && radius >= 0 ? 2 * radius + 1 : radius;
      return { ...step, operator: { ...rest, kind: "turns", size, stride: 1, centered: true } };
    }),
  };
}

/**
 * The shape only (zod): defaults applied, no graph checks. Useful for tools that want to show a
 * half-built pipeline; everything that stores or runs a spec should use `parseSpec`.
 */
export function parseSpecShape(input: unknown): ParseResult {
  input = upgradeLegacySpec(input);
  const result = pipelineSpecSchema.safeParse(input);
  if (!result.success) return { ok: false, problems: sortProblems(withNodes(input, dedupeProblems(zodProblems(input, result.error)))) };
  return { ok: true, spec: fillModelDefaults(result.data) };
}

/**
 * Validate a spec completely (shape + graph) and normalize it. On failure, every problem is
 * reported with its path and the node it belongs to, shape and graph problems together.
 */
export function parseSpec(input: unknown): ParseResult {
  input = upgradeLegacySpec(input);
  const result = pipelineSpecSchema.safeParse(input);
  if (result.success) {
    const spec = fillModelDefaults(result.data);
    const problems = validatePipeline(spec);
    return problems.length ? { ok: false, problems: sortProblems(withNodes(spec, problems)) } : { ok: true, spec };
  }
  const shape = dedupeProblems(zodProblems(input, result.error));
  // Graph problems too, so the canvas can mark everything at once; skip places zod already flagged.
  let graph: Problem[] = [];
  try {
    graph = validatePipeline(input as PipelineSpec).filter((g) => !shape.some((s) => isPrefix(s.path, g.path) || isPrefix(g.path, s.path)));
  } catch {
    graph = [];
  }
  return { ok: false, problems: sortProblems(withNodes(input, dedupeProblems([...shape, ...graph]))) };
}

/** `parseSpec` that throws a `SpecError` listing every problem. */
export function assertSpec(input: unknown): PipelineSpec {
  const result = parseSpec(input);
  if (!result.ok) throw new SpecError(result.problems);
  return result.spec;
}

/** The normalized form of a spec (defaults written out). Throws `SpecError` when the shape is invalid. */
export function normalizeSpec(input: PipelineSpecInput | PipelineSpec | unknown): PipelineSpec {
  const result = parseSpecShape(input);
  if (!result.ok) throw new SpecError(result.problems);
  return result.spec;
}
