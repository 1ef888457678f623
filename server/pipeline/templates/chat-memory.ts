import { DEFAULT_TEMPLATES } from "../prompts";
import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { modelOptions, sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/**
 * The seed's default chat-memory architecture (`synthex init --from export.json`):
 * chats → transcripts → summaries → monthly → world-model; `windows` of 3 turns (one per turn)
 * cut from the transcripts, the unit most questions are answered by; a `context` projection of
 * the world model and a `search` index over transcripts, windows, summaries and monthly reflections.
 */
export function defaultChatMemoryPipeline(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): Pipeline {
  const llm = modelOptions(options);
  return new Pipeline("chat-memory", { description: "Transcripts, summaries, monthly reflections and a world model folded month by month." })
    .source("chats", sourceOptions(format, options))
    .transform("transcripts", { from: "chats", prompt: DEFAULT_TEMPLATES.transcript, ...llm })
    .transform("summaries", { from: "transcripts", prompt: DEFAULT_TEMPLATES.summary, ...llm })
    .aggregate("monthly", { from: "summaries", period: "month", prompt: DEFAULT_TEMPLATES.monthly, ...llm })
    .fold("world-model", { from: "monthly", orderKey: "time.period", prompt: DEFAULT_TEMPLATES.worldModel, ...llm })
    .split("windows", { from: "transcripts", operator: { kind: "turns", size: 3, stride: 1 } })
    .output("context", { from: "world-model", surface: "projection" })
    .output("search", { from: ["transcripts", "summaries", "monthly", "windows"], surface: "search" });
}

export function defaultChatMemorySpec(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): PipelineSpec {
  return defaultChatMemoryPipeline(format, options).toSpec();
}

export const chatMemoryTemplate: PipelineTemplate = {
  id: "chat-memory",
  title: "Chat memory",
  badge: "recommended",
  description:
    "The default architecture: chats → transcripts → summaries → monthly reflections → a world model folded month by month. A context projection and a search index.",
  spec: defaultChatMemorySpec,
  eval: { mode: "hybrid" },
};
