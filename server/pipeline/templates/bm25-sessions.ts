import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/** BM25 over whole sessions: the session row of shared/tools/locomo-baseline, as a pipeline. */
export function bm25SessionsSpec(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): PipelineSpec {
  return new Pipeline("bm25-sessions").source("chats", sourceOptions(format, options)).output("search", { from: "chats", surface: "search" }).toSpec();
}

export const bm25SessionsTemplate: PipelineTemplate = {
  id: "bm25-sessions",
  title: "BM25 sessions",
  description: "Lexical baseline, no model: whole sessions indexed as they are, ranked with BM25 (Porter stems).",
  spec: bm25SessionsSpec,
  eval: { step: "chats", mode: "bm25" },
};
