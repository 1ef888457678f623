/**
 * The template registry: every architecture "New pipeline", `synthex init --template`,
 * `synthex eval --template` and the Compare page offer. Add a template by writing its module in
 * this folder and listing it here (the gallery, the CLI, evals and the tests pick it up).
 */
import type { PipelineSpec, SourceFormat } from "../spec";
import { blankTemplate } from "./blank";
import { bm25SessionsTemplate } from "./bm25-sessions";
import { bm25WindowsTemplate } from "./bm25-windows";
import { chatMemoryTemplate } from "./chat-memory";
import { documentsTemplate } from "./documents";
import { mem0Template } from "./mem0";
import { memexTemplate } from "./memex";
import { pyramidTemplate } from "./pyramid";
import { ragTemplate } from "./rag";
import { synapseTemplate } from "./synapse";
import { synapsisTemplate } from "./synapsis";
import type { PipelineTemplate, TemplateOptions } from "./template";

export type { PipelineTemplate, TemplateOptions, TemplateSearchMode } from "./template";
export { OFFLINE_STAND_IN_NOTE, offlineStandInOf } from "./template";
export { defaultChatMemoryPipeline, defaultChatMemorySpec } from "./chat-memory";
export { ragBaselineSpec } from "./rag";

/** In gallery order. */
export const TEMPLATES: readonly PipelineTemplate[] = [
  chatMemoryTemplate,
  synapseTemplate,
  synapsisTemplate,
  pyramidTemplate,
  memexTemplate,
  mem0Template,
  ragTemplate,
  documentsTemplate,
  bm25SessionsTemplate,
  bm25WindowsTemplate,
  blankTemplate,
];

export const TEMPLATE_IDS = TEMPLATES.map((t) => t.id) as [string, ...string[]];

export function findTemplate(id: string): PipelineTemplate | undefined {
  return TEMPLATES.find((t) => t.id === id);
}

export function getTemplate(id: string): PipelineTemplate {
  const template = findTemplate(id);
  if (!template) throw new Error(`Unknown template "${id}". Templates: ${TEMPLATE_IDS.join(", ")}.`);
  return template;
}

/** A template's spec; without a format, the template's own source format (Documents: a folder; Synapse: an API stream). */
export function templateSpec(id: string, format?: SourceFormat, options?: TemplateOptions): PipelineSpec {
  return getTemplate(id).spec(format, options);
}
