import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/** Flat RAG, the baseline to beat: chunk the source, index the chunks. No model at all. */
export function ragBaselineSpec(
  format: SourceFormat = "chatgpt-export",
  options: TemplateOptions & { chunkSize?: number; overlap?: number } = {},
): PipelineSpec {
  return new Pipeline("rag-baseline")
    .source("chats", sourceOptions(format, options))
    .split("chunks", { from: "chats", operator: { kind: "chunk", size: options.chunkSize ?? 1200, overlap: options.overlap ?? 0 } })
    .output("search", { from: "chunks", surface: "search" })
    .toSpec();
}

export const ragTemplate: PipelineTemplate = {
  id: "rag-baseline",
  title: "RAG baseline",
  description: "Flat retrieval, the baseline to beat: chunk the source into 1,200-character chunks and index them. No model at all.",
  spec: (format, options) => ragBaselineSpec(format, options),
  eval: { mode: "hybrid" },
};
