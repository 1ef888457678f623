import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { modelOptions, sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/** Memex stage 1: facts from a conversation, by the fact types Memex takes from Mem0. */
export const MEMEX_FACTS_PROMPT = `Extract the facts worth remembering about the user from this conversation, as a JSON list of short
self-contained statements (one fact each, third person, no pronouns without a name).

Fact types: personal preferences; important personal details (names, relationships, dates); plans
and intentions; activity and service preferences; health and wellness; professional details;
miscellaneous (favourite books, movies, brands). Skip small talk and the assistant's own advice.
{% if record.metadata.chat.title %}
Conversation: {{ record.metadata.chat.title }}{% endif %}

{{ record.content }}`;

/** Memex stages 2-3: the new fact against the similar memories of its collection. */
export const MEMEX_DECIDE_PROMPT = `You manage the memory of the collection "{{ scope }}".

New fact: {{ record.content }}

Similar memories (id, similarity):
{% for r in records %}- [{{ r.id }}] ({{ r.metadata.similarity }}) {{ r.content }}
{% else %}(none)
{% endfor %}
Decide one event:
- ADD: the fact is new information;
- UPDATE: a memory is about the same thing and the fact has more detail or a changed value (give memory_id and the merged text);
- DELETE: the fact contradicts a memory (give memory_id);
- NONE: a memory already says this (give memory_id).
Answer JSON: {"event": "...", "memory_id": "...", "text": "...", "reason": "..."}`;

/**
 * Memex (seed 001): collections are scopes (`user:alice`, `company:engineering:alice`; a query with
 * a prefix searches every collection under it); facts are extracted from each conversation and
 * consolidated into a living memory set per collection (ADD/UPDATE/DELETE/NONE); a deleted memory
 * is soft-deleted (restorable) and every memory keeps its history.
 */
export function memexSpec(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): PipelineSpec {
  const llm = modelOptions(options);
  return new Pipeline("memex", { description: "Memex: facts consolidated per collection (scope) with ADD/UPDATE/DELETE/NONE, soft delete + restore, history." })
    .source("chats", sourceOptions(format, options))
    .split("facts", { from: "chats", prompt: MEMEX_FACTS_PROMPT, ...llm })
    .consolidate("memories", { from: "facts", prompt: MEMEX_DECIDE_PROMPT, ...llm })
    .output("search", { from: "memories", surface: "search" })
    .toSpec();
}

export const memexTemplate: PipelineTemplate = {
  id: "memex",
  title: "Memex",
  seed: "001 Memex",
  description:
    "Seed 001: collections as scopes (a:b:c, prefix search), facts split from each conversation and consolidated per collection (ADD/UPDATE/DELETE/NONE), soft delete + restore, history per memory. Differs: collections are record scopes in one database, not SQLite files per collection; offline, decisions follow a deterministic rule (near-duplicate → NONE, a lasting state with a changed value → UPDATE, a change of state — moved from/to, a new job, quit, sold, a pet that died, a reversed preference, no longer/used to — retires the memory it replaces).",
  offlineStandIn:
    "facts are the conversation's informative sentences (first person resolved, compounds split), not a model's; ADD/UPDATE/DELETE/NONE follow a deterministic rule (near-duplicates, changed values, change-of-state phrases), not a model's judgement.",
  spec: memexSpec,
  eval: { step: "memories", mode: "hybrid" },
};
