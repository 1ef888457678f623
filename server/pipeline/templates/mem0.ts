import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { modelOptions, sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/** Mem0's fact extraction: short facts about the user, one per item. */
export const MEM0_FACTS_PROMPT = `You are a personal information organizer. Extract the facts, preferences and memories about the
people in this conversation as a JSON list of short, self-contained statements (with names and
dates where the conversation gives them). Return [] when there is nothing worth remembering.

{{ record.content }}`;

/** ADD-only: a new fact is added unless a memory already says it. */
export const MEM0_DECIDE_PROMPT = `New fact: {{ record.content }}

Existing memories (id, similarity):
{% for r in records %}- [{{ r.id }}] ({{ r.metadata.similarity }}) {{ r.content }}
{% else %}(none)
{% endfor %}
Memories are never changed or removed: answer {"event": "ADD", "text": "..."} when the fact is new,
or {"event": "NONE", "memory_id": "..."} when a memory already says the same thing.`;

/**
 * Mem0 v3 style: facts are only ever added (near-duplicates are skipped, nothing is updated or
 * deleted: retrieval weighs old and new), entities are linked to the memories that name them, and
 * search fuses semantic + BM25 over the memories with entity matches that lead back to them.
 */
export function mem0Spec(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): PipelineSpec {
  const llm = modelOptions(options);
  return new Pipeline("mem0", { description: "Mem0 v3 style: ADD-only facts, entity linking, semantic + BM25 + entity retrieval." })
    .source("chats", sourceOptions(format, options))
    .split("facts", { from: "chats", prompt: MEM0_FACTS_PROMPT, ...llm })
    .consolidate("memories", { from: "facts", mode: "add-only", threshold: 0.9, prompt: MEM0_DECIDE_PROMPT, ...llm })
    .split("entities", { from: "memories", operator: { kind: "regex-entities" } })
    .output("search", { from: ["memories", "entities"], surface: "search" })
    .toSpec();
}

export const mem0Template: PipelineTemplate = {
  id: "mem0",
  title: "Mem0 (v3 style)",
  description:
    "The comparison everyone asks for: facts extracted per conversation, ADD-only memories (near-duplicates skipped, nothing updated or deleted), entities linked to the memories that name them, hybrid search (semantic + BM25) over memories and entities. Differs from Mem0: entity links are provenance edges found by a regex operator (no entity store or graph), and the entity signal is an indexed step, not a separate score.",
  offlineStandIn:
    "facts are the conversation's informative sentences (first person resolved, compounds split), not a model's; near-duplicates are found by a lexical similarity, entities by a regex.",
  spec: mem0Spec,
  eval: { step: "memories", mode: "hybrid" },
};
