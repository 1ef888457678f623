/**
 * Specs used by the pipeline tests (and handy for other tests): one that uses every step type
 * that validates today, every operator, every dedupe form and every output option.
 */
import { Pipeline } from "./sdk";
import type { PipelineSpec } from "./spec";
import { DEFAULT_TEMPLATES } from "./prompts";

export function kitchenSinkPipeline(): Pipeline {
  return (
    new Pipeline("kitchen-sink", { agent: "tester", description: "every step type and operator" })
      .source("chatgpt", { format: "chatgpt-export", scope: "acme:eng:alice" })
      .source("claude", { format: "claude-export", description: "Claude export" })
      .source("notes", { format: "markdown" })
      .source("events", { format: "api" })
      .source("docs", { format: "json" })
      .source("logs", { format: "jsonl" })
      .source("plain", { format: "text" })
      .source("vault", { format: "folder" })
      // merge: every dedupe and conflict form
      .merge("unified", { from: ["chatgpt", "claude"], dedupe: { metadataMatch: ["chat.conversation_id"] }, conflict: "prefer_first" })
      .merge("fuzzy", { from: ["notes", "plain", "vault"], dedupe: { fuzzy: 0.9 }, conflict: "keep_all" })
      .merge("everything", { from: ["unified", "fuzzy"], dedupe: "none" })
      .merge("exact", { from: ["logs", "events"] })
      // transform: every operator, and a prompt with every LLM option
      .transform("flagged", { from: "unified", operator: { kind: "pii-flag" }, description: "PII flags" })
      .transform("picked", { from: "docs", operator: { kind: "json-pick", field: "data.text" } })
      .transform("same", { from: "exact", operator: { kind: "identity" } })
      .transform("short", { from: "everything", operator: { kind: "extractive-summary", sentences: 2 } })
      .transform("classified", {
        from: "flagged",
        prompt: "Classify:\n{{ record.content }}\n\tTab\\backslash \"\"\" quotes ''' and 'single'\r\nCRLF line\n",
        model: "openai/gpt-4o-mini",
        temperature: 0.7,
        pii: "flag",
        output: {
          type: "object",
          properties: { label: { type: "string", enum: ["work", "life", null] }, score: { type: ["number", "null"], minimum: 0.5 } },
          required: ["label"],
          additionalProperties: false,
          default: null,
        },
      })
      // split: every operator, and a prompt
      .split("chunks", { from: "picked", operator: { kind: "chunk", size: 500, overlap: 50 } })
      .split("sentences", { from: "same", operator: { kind: "sentences", per: 2 } })
      .split("entities", { from: "short", operator: { kind: "regex-entities" } })
      .split("facts", { from: "classified", prompt: DEFAULT_TEMPLATES.facts, model: "anthropic/claude-3-5-haiku" })
      // aggregate: every groupBy form, an operator and a prompt
      .aggregate("weekly", { from: "facts", period: "week", operator: { kind: "extractive-summary" } })
      .aggregate("by-conversation", { from: "facts", key: "chat.conversation_id", prompt: "{% for r in records %}- {{ r.content }}\n{% endfor %}" })
      .aggregate("tiers", { from: "chunks", every: 10, prompt: "Tier {{ group.key }} ({{ group.size }}):\n{% for r in records %}{{ r.content }}\n{% endfor %}" })
      .aggregate("topics", { from: "entities", groupBy: { key: "custom.topic" }, prompt: "{{ records | size }} about {{ group.key }}" })
      // fold with every option
      .fold("world", {
        from: "weekly",
        orderKey: "time.period",
        checkpointEvery: 3,
        maxStateTokens: 4000,
        initialState: "Known so far:\n- nothing'",
        prompt: DEFAULT_TEMPLATES.worldModel,
        temperature: 0.2,
      })
      // outputs: both surfaces, every option
      .output("context", { from: "world", surface: "projection", template: "## Memory\n{{ record.content }}\n", webhook: { url: "https://example.com/hook" }, description: "brief" })
      .output("search", { from: ["facts", "by-conversation", "tiers", "topics", "sentences"], surface: "search", embedder: "offline/hash-384" })
      .output("raw", { from: "chatgpt", surface: "search" })
  );
}

export function kitchenSinkSpec(): PipelineSpec {
  return kitchenSinkPipeline().toSpec();
}
