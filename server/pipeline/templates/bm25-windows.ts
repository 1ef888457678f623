import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/** BM25 over 3-turn windows (each turn with one turn either side): the baseline script's window row. */
export function bm25WindowsSpec(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): PipelineSpec {
  return new Pipeline("bm25-windows")
    .source("chats", sourceOptions(format, options))
    .split("windows", { from: "chats", operator: { kind: "turns", size: 3, stride: 1, centered: true } })
    .output("search", { from: "windows", surface: "search" })
    .toSpec();
}

export const bm25WindowsTemplate: PipelineTemplate = {
  id: "bm25-windows",
  title: "BM25 windows",
  description: "Lexical baseline, no model: every turn with one turn either side (3-turn windows), ranked with BM25 (Porter stems).",
  spec: bm25WindowsSpec,
  eval: { step: "windows", mode: "bm25" },
};
