/**
 * A pipeline template: a named architecture anyone can start from ("New pipeline", `synthex init
 * --template`, `synthex eval --template`, the Compare page). Each template is one module in this
 * folder, registered in `index.ts`.
 */
import type { PipelineSpec, SourceFormat } from "../spec";

export interface TemplateOptions {
  /** Model for every prompt step (default: the offline extractive model). */
  model?: string;
  /** Scope for the source's records, e.g. "acme:eng:alice". */
  scope?: string;
}

/** How an eval searches a template's memory when it names no step or mode (`bm25` ranks one step; `walk` descends from one step; `graph` walks the entity graph). */
export type TemplateSearchMode = "fts" | "semantic" | "hybrid" | "graph" | "bm25" | "walk";

export interface PipelineTemplate {
  /** Stable id: the gallery, `--template` and the API use it. */
  id: string;
  title: string;
  /** The idea in one or two sentences, and where it differs from the seed it follows. */
  description: string;
  /** The reference design it follows, e.g. "002 Synapse". */
  seed?: string;
  badge?: string;
  spec(format?: SourceFormat, options?: TemplateOptions): PipelineSpec;
  /** Eval defaults; a template without them (blank) is not scored. */
  eval?: { step?: string; mode: TemplateSearchMode };
}

/** The source spread into a template's `source()`: the format, and the scope when one is given. */
export function sourceOptions(format: SourceFormat, options: TemplateOptions = {}) {
  return { format, ...(options.scope ? { scope: options.scope } : {}) };
}

/** `{ model }` for prompt steps when a model is chosen; empty for the offline default. */
export function modelOptions(options: TemplateOptions = {}) {
  return options.model ? { model: options.model } : {};
}
