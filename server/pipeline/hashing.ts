/**
 * Identity (DESIGN.md §1.3): canonical JSON, content fingerprints, step version hashes, spec hash.
 *
 * A step's version hash covers everything that changes what it produces: its type, its config
 * (all fields but name, description and from), template, model, temperature, output schema, and
 * the version hashes of its inputs in `from` order. So changing a prompt changes that step's hash
 * and every hash downstream of it, and nothing upstream. A source's hash covers (format, scope).
 * Hashes are computed on the normalized spec: writing a default out or leaving it implicit gives
 * the same hash. Canvas layout is not part of the spec and never hashed.
 */
import { createHash } from "node:crypto";
import { normalizeSpec, SpecError, type PipelineSpec, type PipelineSpecInput, type Problem, type StepSpec } from "./spec";
import { topologicalOrder } from "./validate";

/** Bump when the recipe below changes (every step then reruns once, deliberately). */
export const HASH_RECIPE_VERSION = 1;

/**
 * Deterministic JSON: object keys sorted, no whitespace, `undefined` (and functions) dropped from
 * objects and written as null in arrays, like JSON.stringify. Throws on non-finite numbers,
 * bigints, cycles and a top-level undefined, which have no canonical form.
 */
export function canonicalJson(value: unknown): string {
  const seen = new Set<object>();
  const write = (v: unknown): string | undefined => {
    if (v === null) return "null";
    switch (typeof v) {
      case "string":
        return JSON.stringify(v);
      case "boolean":
        return v ? "true" : "false";
      case "number":
        if (!Number.isFinite(v)) throw new TypeError(`canonicalJson: ${v} has no JSON form`);
        return JSON.stringify(v);
      case "bigint":
        throw new TypeError("canonicalJson: bigint has no JSON form");
      case "undefined":
      case "function":
      case "symbol":
        return undefined;
    }
    const obj = v as object & { toJSON?: () => unknown };
    if (typeof obj.toJSON === "function") return write(obj.toJSON());
    if (seen.has(obj)) throw new TypeError("canonicalJson: cyclic structure");
    seen.add(obj);
    let out: string;
    if (Array.isArray(obj)) {
      out = `[${obj.map((item) => write(item) ?? "null").join(",")}]`;
    } else {
      const parts: string[] = [];
      for (const key of Object.keys(obj).sort()) {
        const item = write((obj as Record<string, unknown>)[key]);
        if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
      }
      out = `{${parts.join(",")}}`;
    }
    seen.delete(obj);
    return out;
  };
  const out = write(value);
  if (out === undefined) throw new TypeError(`canonicalJson: ${typeof value} has no JSON form`);
  return out;
}

/** SHA-256 of the UTF-8 text, lowercase hex. */
export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** SHA-256 of the content with trailing whitespace stripped (leading and inner whitespace count). */
export function contentFingerprint(content: string): string {
  return sha256(content.replace(/\s+$/u, ""));
}

/** Hash of a prompt template as written (audit: `promptTemplateHash`). */
export function templateHash(template: string): string {
  return sha256(template);
}

/** Fields of a step that are not "config": identity, documentation, or hashed separately. */
const NOT_CONFIG = new Set(["type", "name", "description", "from", "prompt", "model", "temperature", "output"]);

/** A step as hashing sees it: a spec step, or a step kind the engine registered at run time (tests). */
export type HashableStep = StepSpec | { type: string; name: string; from: string | string[] };

/** The step's config: every field except name, description, from, and the LLM fields hashed on their own. */
export function stepConfig(step: HashableStep): Record<string, unknown> {
  return Object.fromEntries(Object.entries(step).filter(([k, v]) => !NOT_CONFIG.has(k) && v !== undefined));
}

/** The material a step's version hash is computed from (exposed for debugging and diff). */
export function stepHashMaterial(step: HashableStep, upstream: string[]) {
  const llm = step as { prompt?: string; model?: string; temperature?: number; output?: Record<string, unknown> };
  return {
    recipe: HASH_RECIPE_VERSION,
    kind: "step",
    type: step.type,
    config: stepConfig(step),
    template: llm.prompt ?? null,
    model: llm.model ?? null,
    temperature: llm.temperature ?? null,
    output: llm.output ?? null,
    upstream,
  };
}

export function sourceVersionHash(source: { format: string; scope?: string }): string {
  return sha256(canonicalJson({ recipe: HASH_RECIPE_VERSION, kind: "source", format: source.format, scope: source.scope ?? null }));
}

/**
 * Version hash of every source and step, by name. Throws `SpecError` when the spec's shape is
 * invalid, a step reads an unknown input, or steps form a cycle.
 */
export function stepVersionHashes(input: PipelineSpecInput | PipelineSpec): Record<string, string> {
  return normalizedStepVersionHashes(normalizeSpec(input));
}

/**
 * The same for a spec that is already parsed and normalized (what the engine runs), without
 * parsing it again: the engine also runs step kinds registered outside the spec schema (tests).
 */
export function normalizedStepVersionHashes(spec: {
  sources: ReadonlyArray<{ name: string; format: string; scope?: string }>;
  steps: ReadonlyArray<HashableStep>;
}): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const source of spec.sources) hashes[source.name] ??= sourceVersionHash(source);
  const byName = new Map<string, { step: HashableStep; index: number }>();
  spec.steps.forEach((step, index) => {
    if (!byName.has(step.name)) byName.set(step.name, { step, index });
  });
  const problems: Problem[] = [];
  for (const name of topologicalOrder(spec)) {
    const entry = byName.get(name);
    if (!entry || name in hashes) continue;
    const { step, index } = entry;
    const from = Array.isArray(step.from) ? step.from : [step.from];
    const upstream = from.map((ref) => hashes[ref]);
    const missing = from.filter((_, i) => upstream[i] === undefined);
    if (missing.length) {
      problems.push({
        path: ["steps", index, "from"],
        node: name,
        message: `cannot hash "${name}": its input${missing.length > 1 ? "s" : ""} ${missing.map((m) => `"${m}"`).join(", ")} ${missing.length > 1 ? "are" : "is"} unknown or part of a cycle`,
      });
      continue;
    }
    hashes[name] = sha256(canonicalJson(stepHashMaterial(step, upstream as string[])));
  }
  if (problems.length) throw new SpecError(problems, "Cannot compute step version hashes");
  return hashes;
}

/** Hash of the whole normalized spec (defaults written out): the pipeline version's identity. */
export function specHash(input: PipelineSpecInput | PipelineSpec): string {
  return sha256(canonicalJson(normalizeSpec(input)));
}
