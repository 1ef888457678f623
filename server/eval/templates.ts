/**
 * Architectures an eval can score without a team pipeline: the product's two templates and the
 * two lexical baselines of shared/tools/locomo-baseline (no model): BM25 over whole sessions and
 * over 3-turn windows (each turn with one turn either side, under the session's date).
 */
import { Pipeline } from "../pipeline/sdk";
import type { PipelineSpec } from "../pipeline/spec";
import { templateSpec } from "../services/pipelines";
import type { SearchMode } from "../search/search";

export const EVAL_TEMPLATES = ["chat-memory", "rag-baseline", "bm25-sessions", "bm25-windows"] as const;
export type EvalTemplate = (typeof EVAL_TEMPLATES)[number];

/** `bm25` ranks the step's records of the question's scope with BM25 (see bm25.ts). */
export type EvalMode = SearchMode | "bm25";
export const EVAL_MODES = ["fts", "semantic", "hybrid", "bm25"] as const;

export interface EvalTemplateDef {
  spec: PipelineSpec;
  /** Default altitude and mode when the eval does not name them. */
  step?: string;
  mode: EvalMode;
  description: string;
}

export function isEvalTemplate(name: string): name is EvalTemplate {
  return (EVAL_TEMPLATES as readonly string[]).includes(name);
}

export function evalTemplate(name: EvalTemplate): EvalTemplateDef {
  switch (name) {
    case "chat-memory":
      return { spec: templateSpec("chat-memory", "json"), mode: "hybrid", description: "The default chat-memory architecture, unscoped hybrid search." };
    case "rag-baseline":
      return { spec: templateSpec("rag-baseline", "json"), mode: "hybrid", description: "Flat RAG: 1,200-character chunks, hybrid search." };
    case "bm25-sessions":
      return {
        spec: new Pipeline("bm25-sessions").source("chats", { format: "json" }).output("search", { from: "chats", surface: "search" }).toSpec(),
        step: "chats",
        mode: "bm25",
        description: "BM25 (Porter stems) over whole sessions, no model: the baseline script's session row.",
      };
    case "bm25-windows":
      return {
        spec: new Pipeline("bm25-windows")
          .source("chats", { format: "json" })
          .split("windows", { from: "chats", operator: { kind: "turns", size: 3, stride: 1, centered: true } })
          .output("search", { from: "windows", surface: "search" })
          .toSpec(),
        step: "windows",
        mode: "bm25",
        description: "BM25 (Porter stems) over 3-turn windows, no model: the baseline script's window row.",
      };
  }
}
