/**
 * Architectures an eval can score without a team pipeline: every template of the registry that
 * declares eval defaults (`server/pipeline/templates`), e.g. the product's templates and the two
 * lexical baselines of shared/tools/locomo-baseline (no model). Benchmarks feed them JSON sources.
 */
import type { PipelineSpec } from "../pipeline/spec";
import { TEMPLATES, offlineStandInOf } from "../pipeline/templates";
import type { SearchMode } from "../search/search";

export const EVAL_TEMPLATES = TEMPLATES.filter((t) => t.eval).map((t) => t.id) as [string, ...string[]];
export type EvalTemplate = string;

/**
 * `bm25` ranks the step's records of the question's scope with BM25 (see text/bm25.ts); `walk`
 * descends from the step through provenance, level by level (search/walk.ts: Pyramid retrieval).
 */
export type EvalMode = SearchMode | "bm25" | "walk";
export const EVAL_MODES = ["fts", "semantic", "hybrid", "graph", "bm25", "walk"] as const;

export interface EvalTemplateDef {
  spec: PipelineSpec;
  /** Default altitude and mode when the eval does not name them. */
  step?: string;
  mode: EvalMode;
  description: string;
  /** The template's offline stand-in note (`PipelineTemplate.offlineStandIn`), or null. */
  offlineStandIn: { note: string; detail: string } | null;
}

export function isEvalTemplate(name: string): name is EvalTemplate {
  return EVAL_TEMPLATES.includes(name);
}

export function evalTemplate(name: EvalTemplate): EvalTemplateDef {
  const template = TEMPLATES.find((t) => t.id === name);
  if (!template?.eval) throw new Error(`Unknown template "${name}". Templates: ${EVAL_TEMPLATES.join(", ")}.`);
  return { spec: template.spec("json"), step: template.eval.step, mode: template.eval.mode, description: template.description, offlineStandIn: offlineStandInOf(template) };
}
