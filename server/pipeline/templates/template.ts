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

/** What the gallery, `synthex eval` and the Compare page say next to a stand-in template's offline numbers. */
export const OFFLINE_STAND_IN_NOTE = "offline stand-in for an LLM step: results are not the architecture's";

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
  /**
   * Set when the template's offline path only stands in for an LLM step its architecture depends on
   * (facts, decisions, observations, summaries made by operators or the extractive model): which
   * steps, and how. Shown with `OFFLINE_STAND_IN_NOTE` beside its offline numbers.
   */
  offlineStandIn?: string;
  /** Eval defaults; a template without them (blank) is not scored. */
  eval?: { step?: string; mode: TemplateSearchMode };
}

/** The source spread into a template's `source()`: the format, and the scope when one is given. */
/** A template's stand-in note as the APIs serve it (the gallery card, the Compare page), or null. */
export function offlineStandInOf(template: Pick<PipelineTemplate, "offlineStandIn">): { note: string; detail: string } | null {
  return template.offlineStandIn ? { note: OFFLINE_STAND_IN_NOTE, detail: template.offlineStandIn } : null;
}

export function sourceOptions(format: SourceFormat, options: TemplateOptions = {}) {
  return { format, ...(options.scope ? { scope: options.scope } : {}) };
}

/** `{ model }` for prompt steps when a model is chosen; empty for the offline default. */
export function modelOptions(options: TemplateOptions = {}) {
  return options.model ? { model: options.model } : {};
}
