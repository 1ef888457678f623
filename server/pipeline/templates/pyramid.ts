/**
 * Pyramid (seed 003): observations compressed into tiers of ten, organised around mental models.
 *
 * - observations (split): short statements. With a model, the facts prompt (one per line);
 *   offline, one observation per conversation turn (the speaker and the session's date kept,
 *   the date written compactly: "8 May 2023 13:56" — every observation repeats it).
 * - topics → mental-models: every observation gets a topic in `metadata.custom.topic` (offline:
 *   the deterministic `topic` operator; with a model: structured output `{ topic, observation }`),
 *   then one mental model per topic (aggregate by `custom.topic`).
 * - tier-1, tier-2: summaries of 10 observations, then of 10 tier-1 summaries (aggregate
 *   `every: 10`, per scope in time order).
 * - synthesis: the top tier folded in time order into one narrative per scope, newer details
 *   overriding older ones.
 * - retrieval walks the pyramid top-down (`search.walk`, `GET /pipelines/{id}/walk`, eval mode
 *   `walk`): synthesis → the tier-2 and tier-1 summaries closest to the query → their observations
 *   → the source sessions.
 *
 * Where it differs from the seed: tiers run over the scope's whole timeline, not per mental model
 * (mental models are a parallel aggregate by topic); the pyramid has two tiers and a synthesis
 * (add `tier-3` in the canvas for larger histories) instead of growing tiers without bound; base
 * models (self/user/system) are topics like any other.
 */
import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { modelOptions, sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/** Items per summary (the seed's STEP). */
export const PYRAMID_STEP = 10;

const observations = `Extract observations from this conversation: short, single, factual sentences about the
people in it, what they did, think, plan and prefer, each true on its own (names instead of pronouns,
dates resolved{% if record.metadata.time.created_at %}; the conversation is from {{ record.metadata.time.created_at | slice: 0, 10 }}{% endif %}).
One observation per line, nothing else.

## Conversation
{{ record.content }}

## Observations
`;

const classify = `Assign this observation to a mental model: "self" (the agent itself), "user" (the user's
identity, preferences, projects), "system" (tools and environment), or a lowercase-hyphenated name for
another person, place or topic. Return the model name as topic, and the observation restated.

Observation: {{ record.content }}
`;

const mentalModel = `Describe the mental model "{{ group.key }}" from these observations: who or what it is, what is
true about it now, how it changed. Newer observations override older ones. Third person, narrative prose.

{% for r in records %}- {{ r.metadata.custom.observation | default: r.content }}
{% endfor %}
## Mental model: {{ group.key }}
`;

const tier = `Summarize these {{ group.size }} items in clear narrative prose, oldest first. Keep names, numbers, dates
and decisions; convey importance through word choice, not markers.

{% for r in records %}- {{ r.content }}
{% endfor %}
## Summary
`;

const synthesis = `Synthesize a coherent mental model of this memory from its summaries, oldest to newest. Newer details
override older ones, facts are deduplicated, third-person narrative prose.

Synthesis so far:
{% if state != empty %}{{ state }}{% else %}(nothing yet){% endif %}

Next summary:
{{ record.content }}

## Synthesis
`;

export function pyramidSpec(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): PipelineSpec {
  const llm = modelOptions(options);
  const observationStep = options.model
    ? { from: "chats", prompt: observations, ...llm }
    : { from: "chats", operator: { kind: "turns" as const, size: 1, stride: 1, date: "compact" as const } };
  const topicStep = options.model
    ? { from: "observations", prompt: classify, output: { type: "object", required: ["topic", "observation"], properties: { topic: { type: "string" }, observation: { type: "string" } } }, ...llm }
    : { from: "observations", operator: { kind: "topic" as const } };
  return new Pipeline("pyramid", { description: "Observations → mental models by topic → tiers of 10 → synthesis; retrieval walks the pyramid top-down." })
    .source("chats", sourceOptions(format, options))
    .split("observations", observationStep)
    .transform("topics", topicStep)
    .aggregate("mental-models", { from: "topics", key: "custom.topic", prompt: mentalModel, ...llm })
    .aggregate("tier-1", { from: "observations", every: PYRAMID_STEP, prompt: tier, ...llm })
    .aggregate("tier-2", { from: "tier-1", every: PYRAMID_STEP, prompt: tier, ...llm })
    .fold("synthesis", { from: "tier-2", orderKey: "time.created_at", prompt: synthesis, maxStateTokens: 1500, ...llm })
    .output("model", { from: "synthesis", surface: "projection" })
    .output("search", { from: ["observations", "mental-models", "tier-1", "tier-2", "synthesis"], surface: "search" })
    .toSpec();
}

export const pyramidTemplate: PipelineTemplate = {
  id: "pyramid",
  title: "Pyramid",
  seed: "003 Pyramid",
  description:
    "Observations, mental models by topic, summaries in tiers of 10 and a synthesis; retrieval walks the pyramid top-down (synthesis → tiers → observations → sources). Differs: tiers span the whole timeline, not each model, and stop at two tiers plus the synthesis.",
  offlineStandIn:
    "observations are the conversation's turns, topics come from a keyword operator, and the tier summaries and the synthesis are extractive (selected sentences), not written by a model.",
  spec: pyramidSpec,
  eval: { step: "synthesis", mode: "walk" },
};
