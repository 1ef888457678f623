/**
 * Shared pieces of the search service: which pipeline/branch a call reads, which steps are
 * indexed (search outputs), each step's altitude (topological depth), and the SQL filters every
 * read uses (scope prefix, time, metadata) — always with positional parameters.
 */
import { OFFLINE_EMBEDDER_ID } from "../llm/embedder";
import { fromList, type OutputSpec, type PipelineSpec } from "../pipeline/spec";
import { inputsOf } from "../pipeline/validate";
import { badRequest } from "../core/errors";

export { resolveBranch, type BranchContext } from "../store/pipelines";
export {
  filterConditions,
  likeEscape,
  narrowsRecords,
  normalizeScope,
  onBranch,
  Params,
  parseJson,
  requireRecord,
  sqlTrace,
  trace,
  type RecordFilters,
} from "../store/record-sql";

/** Every source and step name of the spec. */
export function nodeNames(spec: PipelineSpec): string[] {
  return [...spec.sources.map((s) => s.name), ...spec.steps.map((s) => s.name)];
}

/** Altitude of each source (0) and step (1 + the highest altitude of its inputs). */
export function altitudes(spec: PipelineSpec): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of spec.sources) out.set(s.name, 0);
  const depth = (name: string, seen: Set<string>): number => {
    const known = out.get(name);
    if (known !== undefined) return known;
    if (seen.has(name)) return 0; // a cycle (validation reports it); never loop
    seen.add(name);
    const inputs = inputsOf(spec, name);
    const d = inputs.length ? 1 + Math.max(...inputs.map((i) => depth(i, seen))) : 0;
    out.set(name, d);
    return d;
  };
  for (const s of spec.steps) depth(s.name, new Set());
  return out;
}

export function searchOutputs(spec: PipelineSpec, output?: string): OutputSpec[] {
  const all = spec.outputs.filter((o) => o.surface === "search");
  if (!output) return all;
  const found = spec.outputs.find((o) => o.name === output);
  if (!found) throw badRequest(`Unknown output "${output}". Outputs: ${spec.outputs.map((o) => o.name).join(", ") || "(none)"}.`);
  if (found.surface !== "search") throw badRequest(`Output "${output}" is a ${found.surface}, not a search index.`);
  return [found];
}

/** Steps covered by search outputs, with the embedder each one is embedded with. */
export function indexedSteps(spec: PipelineSpec, output?: string): Map<string, string> {
  const steps = new Map<string, string>();
  for (const o of searchOutputs(spec, output)) {
    for (const s of fromList(o)) if (!steps.has(s)) steps.set(s, o.embedder ?? OFFLINE_EMBEDDER_ID);
  }
  return steps;
}

export function sourceSteps(spec: PipelineSpec): string[] {
  return spec.sources.map((s) => s.name);
}

/** Refuses a step that is not in the spec, listing the ones that are. */
export function requireSteps(spec: PipelineSpec, steps: string[]): string[] {
  const names = nodeNames(spec);
  for (const s of steps) {
    if (!names.includes(s)) throw badRequest(`Unknown step "${s}". Steps in this pipeline: ${names.join(", ")}.`);
  }
  return steps;
}

