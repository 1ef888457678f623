/**
 * The TypeScript SDK: the seed's Python API in TypeScript idiom. Real code builds the spec
 * (loops, conditionals, composition); prompts are Liquid template strings.
 *
 *     const p = new Pipeline("personal-memory", { agent: "mark" })
 *       .source("chatgpt", { format: "chatgpt-export" })
 *       .transform("summaries", { from: "chatgpt", prompt: DEFAULT_TEMPLATES.summary })
 *       .aggregate("monthly", { from: "summaries", period: "month", prompt: DEFAULT_TEMPLATES.monthly })
 *       .output("search", { from: ["summaries", "monthly"], surface: "search" });
 *     const spec = p.toSpec(); // validated; throws SpecError listing every problem
 *
 * Builders record what they are given; `toSpec()` validates everything at once.
 */
import { diffSpecs, type SpecDiff } from "./diff";
import { specHash, stepVersionHashes } from "./hashing";
import {
  parseSpec,
  parseSpecShape,
  SpecError,
  type AggregateStepInput,
  type ConsolidateStepInput,
  type EntitiesStepInput,
  type InsightsStepInput,
  type RelationsStepInput,
  type FoldStepInput,
  type GroupBy,
  type MergeStepInput,
  type OutputSpecInput,
  type Period,
  type PipelineSpec,
  type PipelineSpecInput,
  type Problem,
  type SourceSpecInput,
  type SplitStepInput,
  type StepSpecInput,
  type TransformStepInput,
} from "./spec";
import { pipelineFromToml, specToToml, type PipelineMeta } from "./toml";

type Without<T, K extends keyof T> = Omit<T, K>;

export type SourceOptions = Without<SourceSpecInput, "name">;
export type TransformOptions = Without<TransformStepInput, "type" | "name">;
export type SplitOptions = Without<SplitStepInput, "type" | "name">;
/** `groupBy`, or one of the shorthands `period`, `key`, `every`. */
export type GroupByOptions =
  | { groupBy: GroupBy; period?: never; key?: never; every?: never }
  | { period: Period; groupBy?: never; key?: never; every?: never }
  | { key: string; groupBy?: never; period?: never; every?: never }
  | { every: number; groupBy?: never; period?: never; key?: never };
export type AggregateOptions = Without<AggregateStepInput, "type" | "name" | "groupBy"> & GroupByOptions;
export type FoldOptions = Without<FoldStepInput, "type" | "name">;
export type MergeOptions = Without<MergeStepInput, "type" | "name">;
export type ConsolidateOptions = Without<ConsolidateStepInput, "type" | "name">;
export type EntitiesOptions = Without<EntitiesStepInput, "type" | "name">;
export type RelationsOptions = Without<RelationsStepInput, "type" | "name">;
export type InsightsOptions = Without<InsightsStepInput, "type" | "name">;
export type OutputOptions = Without<OutputSpecInput, "name">;
/** Fields to change with `update()`; `undefined` removes a field (e.g. `{ operator: undefined, prompt }`). */
export type UpdatePatch = Record<string, unknown>;

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

export class Pipeline {
  readonly name: string;
  agent: string;
  description?: string;
  private readonly sources: SourceSpecInput[] = [];
  private readonly steps: StepSpecInput[] = [];
  private readonly outputs: OutputSpecInput[] = [];

  constructor(name: string, options: { agent?: string; description?: string } = {}) {
    if (!name.trim()) throw new SpecError([{ path: [], message: "a pipeline needs a name" }], "Invalid pipeline");
    this.name = name;
    this.agent = options.agent ?? "";
    if (options.description !== undefined) this.description = options.description;
  }

  /** Where raw records come from (an uploaded export, files, or an API stream). */
  source(name: string, options: SourceOptions): this {
    this.sources.push({ name, ...clone(options) });
    return this;
  }

  /** 1 → 1: summarize, extract, classify, enrich. A prompt or a built-in operator. */
  transform(name: string, options: TransformOptions): this {
    return this.step({ type: "transform", name, ...clone(options) });
  }

  /** 1 → N: chunking, fact/entity extraction. With a prompt, the model returns a list. */
  split(name: string, options: SplitOptions): this {
    return this.step({ type: "split", name, ...clone(options) });
  }

  /** N → 1 per group: by `period`, metadata `key`, or count window `every` (or an explicit `groupBy`). */
  aggregate(name: string, options: AggregateOptions): this {
    const { period, key, every, groupBy, ...rest } = clone(options) as AggregateOptions & {
      period?: Period;
      key?: string;
      every?: number;
      groupBy?: GroupBy;
    };
    // One of the four; several at once are passed through so validation names the conflict.
    const shorthand = Object.fromEntries(Object.entries({ period, key, every }).filter(([, v]) => v !== undefined));
    const resolved = groupBy && !Object.keys(shorthand).length ? groupBy : Object.keys(shorthand).length ? { ...groupBy, ...shorthand } : undefined;
    return this.step({ type: "aggregate", name, ...rest, groupBy: resolved as GroupBy });
  }

  /** N (ordered) → 1: sequential state, checkpointed. */
  fold(name: string, options: FoldOptions): this {
    return this.step({ type: "fold", name, ...clone(options) });
  }

  /** Union of several inputs with dedupe and conflict resolution. Mechanical, no model. */
  merge(name: string, options: MergeOptions): this {
    return this.step({ type: "merge", name, ...clone(options) });
  }

  /** Facts → a living memory set per scope (ADD/UPDATE/DELETE/NONE, or add-only). */
  consolidate(name: string, options: ConsolidateOptions): this {
    return this.step({ type: "consolidate", name, ...clone(options) });
  }

  /** Entities per scope (canonical names, aliases): offline from speakers, names and a dictionary, or a model. */
  entities(name: string, options: EntitiesOptions): this {
    return this.step({ type: "entities", name, ...clone(options) });
  }

  /** Beliefs between entities with valid times; a later source supersedes a changed fact (both kept). */
  relations(name: string, options: RelationsOptions): this {
    return this.step({ type: "relations", name, ...clone(options) });
  }

  /** Insights over the beliefs: new connections, monthly digests, contradictions. */
  insights(name: string, options: InsightsOptions): this {
    return this.step({ type: "insights", name, ...clone(options) });
  }

  /** A queryable surface: `search` (an index) or `projection` (the latest record(s), e.g. a context block). */
  output(name: string, options: OutputOptions): this {
    this.outputs.push({ name, ...clone(options) });
    return this;
  }

  private step(step: StepSpecInput): this {
    this.steps.push(step);
    return this;
  }

  /** Is there a source, step or output with this name? */
  has(name: string): boolean {
    return [...this.sources, ...this.steps, ...this.outputs].some((n) => n.name === name);
  }

  /**
   * Change fields of an existing source, step or output, e.g. on a branch:
   * `Pipeline.fromSpec(main).update("summaries", { prompt: better, model: "openai/gpt-4o" })`.
   */
  update(name: string, patch: UpdatePatch): this {
    const list = ([this.sources, this.steps, this.outputs] as Record<string, unknown>[][]).find((l) => l.some((n) => n.name === name));
    if (!list) throw new SpecError([{ path: [], message: `nothing named "${name}" to update` }], "Cannot update the pipeline");
    const index = list.findIndex((n) => n.name === name);
    const current = list[index]!;
    let changes: Record<string, unknown> = clone(patch);
    if (current.type === "aggregate") {
      // The builder's groupBy shorthands work here too.
      const { period, key, every, ...rest } = changes;
      const shorthand = Object.fromEntries(Object.entries({ period, key, every }).filter(([, v]) => v !== undefined));
      changes = Object.keys(shorthand).length ? { ...rest, groupBy: shorthand } : rest;
    }
    const next: Record<string, unknown> = { ...current, ...changes };
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete next[k];
    list[index] = next;
    return this;
  }

  /** Remove a source, step or output (references to it then fail validation until fixed). */
  remove(name: string): this {
    for (const list of [this.sources, this.steps, this.outputs] as { name?: string }[][]) {
      const index = list.findIndex((n) => n.name === name);
      if (index >= 0) list.splice(index, 1);
    }
    return this;
  }

  /** The spec as written so far, unvalidated. */
  draft(): PipelineSpecInput {
    return clone({ version: 1, sources: this.sources, steps: this.steps, outputs: this.outputs });
  }

  /** Every problem (shape and graph), or an empty list. */
  problems(): Problem[] {
    const result = parseSpec(this.draft());
    return result.ok ? [] : result.problems;
  }

  /** The validated, normalized spec. Throws `SpecError` listing every problem with its path. */
  toSpec(): PipelineSpec {
    const result = parseSpec(this.draft());
    if (!result.ok) throw new SpecError(result.problems, `Pipeline "${this.name}" is invalid`);
    return result.spec;
  }

  get meta(): PipelineMeta {
    return { name: this.name, agent: this.agent, ...(this.description !== undefined ? { description: this.description } : {}) };
  }

  toToml(): string {
    return specToToml(this.toSpec(), this.meta);
  }

  /** Step (and source) version hashes of the validated spec. */
  versionHashes(): Record<string, string> {
    return stepVersionHashes(this.toSpec());
  }

  specHash(): string {
    return specHash(this.toSpec());
  }

  /** What changed from `base` to this pipeline, with reasons and the steps to re-run. */
  diffFrom(base: Pipeline | PipelineSpecInput | PipelineSpec): SpecDiff {
    return diffSpecs(base instanceof Pipeline ? base.toSpec() : base, this.toSpec());
  }

  /** A builder holding `spec` (shape-checked; graph problems surface at `toSpec()`). */
  static fromSpec(spec: PipelineSpecInput | PipelineSpec | unknown, meta: PipelineMeta = {}): Pipeline {
    const result = parseSpecShape(spec);
    if (!result.ok) throw new SpecError(result.problems);
    const p = new Pipeline(meta.name ?? "pipeline", { agent: meta.agent, description: meta.description });
    p.sources.push(...clone(result.spec.sources));
    p.steps.push(...clone(result.spec.steps));
    p.outputs.push(...clone(result.spec.outputs));
    return p;
  }

  static fromToml(text: string): Pipeline {
    const { spec, meta } = pipelineFromToml(text);
    return Pipeline.fromSpec(spec, meta);
  }
}
