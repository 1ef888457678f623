/**
 * Synapsis (seed 004): a knowledge graph with beliefs over time, built from conversations and
 * documents, with proactive insights.
 *
 * - sessions (source) → turns: one record per conversation turn (the `turns` operator, size 1):
 *   the unit a belief cites, and what a graph walk ends on (seed §6 `chunks`).
 * - windows: each turn with one turn either side, the context search returns (seed §3.1 chunking,
 *   by turns instead of 500 characters).
 * - entities (seed §6 `nodes`, §3.3): one record per resolved entity of a scope — canonical name,
 *   aliases ("Mel" → "Melanie"), type, mention count, first/last seen — with provenance to the turns
 *   that mention it. Offline: speakers, capitalised names and a dictionary (the seed's regex layer;
 *   no spaCy); with `model`: structured output per turn, resolved the same way.
 * - relations (seed §6 `edges` + `beliefs`): one record per belief subject —predicate→ object with
 *   valid time (validFrom/validTo) and transaction time (learnedAt) — Graphiti's bi-temporal edges.
 *   A later source that changes a functional fact ("lives in", "works at", "favorite … is")
 *   supersedes the earlier belief: both are kept, the older gets validTo and supersededBy. Entities
 *   named together are linked by "mentioned with" edges. Offline patterns; no model here.
 * - proactive (an `insights` step, seed §5 proactive engine): new connections between entities, a
 *   digest per month and contradictions (two current beliefs of one slot that disagree), one
 *   record each (`metadata.custom.insight`), recomputed when the graph changes; plus one feed
 *   record per scope (the newest insights, `metadata.custom.insightsFeed`).
 *
 * Outputs: `search` (windows, beliefs and entity cards; the eval scores the windows, hybrid — the
 * graph signals come from the `graph` search mode) and `insights` (projection: the feed of each
 * scope; with a webhook, it fires when a scope's insights change).
 *
 * Where it differs from the seed: one Postgres store (graph records are ordinary records with
 * provenance, no SQLite/Qdrant/NetworkX); post-ingestion hooks are the incremental run itself
 * (a new session re-derives only its scope); the seed's enrichment (summary, category, action
 * items per chunk) and pattern alerts (P3) are left out; offline extraction is rules, not spaCy.
 */
import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { modelOptions, sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

/** The model path of the entities step: what to list, as structured output (ENTITIES_SCHEMA). */
export const SYNAPSIS_ENTITIES_PROMPT = `List the named entities this text mentions: people, places, organizations, things (books,
pets, projects, products) and events. Give each its name as written, its type, and any other names
the text uses for the same entity (nicknames, short forms). Skip pronouns and generic nouns.

{{ record.content }}`;

/** The insights feed as a context block. */
const insightsTemplate = `Insights for {{ record.scope }}{% if record.metadata.time.created_at %} (as of {{ record.metadata.time.created_at | slice: 0, 10 }}){% endif %}:
{{ record.content }}`;

export function synapsisSpec(format: SourceFormat = "chatgpt-export", options: TemplateOptions = {}): PipelineSpec {
  const llm = modelOptions(options);
  const entities = options.model ? { from: "turns", prompt: SYNAPSIS_ENTITIES_PROMPT, ...llm } : { from: "turns" };
  return new Pipeline("synapsis", { description: "Synapsis: an entity graph with beliefs over time (superseded, never lost), and proactive insights." })
    .source("sessions", sourceOptions(format, options))
    .split("turns", { from: "sessions", operator: { kind: "turns", size: 1, stride: 1 } })
    .split("windows", { from: "sessions", operator: { kind: "turns", size: 3, stride: 1, centered: true } })
    .entities("entities", entities)
    .relations("relations", { from: ["turns", "entities"] })
    .insights("proactive", { from: ["relations", "entities"] })
    .output("search", { from: ["windows", "relations", "entities"], surface: "search" })
    .output("insights", { from: "proactive", surface: "projection", template: insightsTemplate })
    .toSpec();
}

export const synapsisTemplate: PipelineTemplate = {
  id: "synapsis",
  title: "Synapsis",
  seed: "004 Synapsis",
  description:
    "Seed 004: turns → entities (resolved per scope: Mel = Melanie) → beliefs with valid and learned times (a later fact supersedes, both kept) → insights (new connections, monthly digests, contradictions) served as a projection. Differs: one Postgres store instead of SQLite + Qdrant + NetworkX; offline extraction is rules (speakers, capitalised names, a dictionary, verb patterns) instead of spaCy.",
  offlineStandIn:
    "entities come from speaker names, capitalised names and a dictionary (no model), and beliefs and insights from deterministic rules.",
  spec: synapsisSpec,
  eval: { step: "windows", mode: "hybrid" },
};
