/**
 * Synapse (seed 002): working memory for an agent that talks to users session by session.
 *
 * - sessions: agents push turns (`POST /ingest`); a session closes on request or after the idle gap
 *   and becomes one source record (server/services/ingest.ts). Imports (a ChatGPT export, LoCoMo)
 *   give the same records, one per conversation or session.
 * - rolling-summary: a fold over the scope's sessions in time order — Synapse's rolling summary,
 *   one per user scope ("acme:user-42").
 * - narrative: MentalState (mood, energy level), Tension (description, open/resolved) and
 *   Environment (location type, vibe) per session, as structured data in `metadata.custom`. With a
 *   model: a prompt with a structured `output` schema; offline: the deterministic `narrative`
 *   operator (first-person sentences matched against lexicons, the sentence kept as evidence).
 * - windows: every turn with one turn either side, the hot context search returns.
 * - outputs: `brief` (the rolling summary: what `GET /pipelines/{id}/brief` returns beside the
 *   recent turns), `narrative` (the latest narrative of the scope) and `search`.
 *
 * Where it differs from the seed: no Graphiti. Narrative entities are per-session records with
 * provenance rather than graph nodes with FEELS/STRUGGLING_WITH/LOCATED_IN edges; the outbox is the
 * durable run itself (a failed step is retried and resumed, nothing is dead-lettered silently).
 */
import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { modelOptions, sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

const rollingSummary = `Update the rolling summary of this user's sessions with the newest one.

Keep what still matters (who they are, ongoing threads, decisions, commitments, how they have been
feeling), fold in what the new session adds or changes, and drop small talk. Prefer the newer
session when they disagree and say what changed. At most 300 words, third person.

Rolling summary so far:
{% if state != empty %}{{ state }}{% else %}(none yet: this is the first session){% endif %}

New session{% if record.metadata.time.created_at %} ({{ record.metadata.time.created_at | slice: 0, 10 }}){% endif %}:
{{ record.content }}

## Updated rolling summary
`;

const narrative = `Read this session and record the narrative state of each person in it.

- mental_state: how they feel — mood words and energy level (high, medium or low), with the sentence that shows it.
- tensions: unresolved problems, tasks or friction they are struggling with (status "open"), or ones
  the session resolves (status "resolved").
- environment: where they are — the type of place and its vibe.
Only what the session says; leave a list empty when it says nothing.

## Session
{{ record.content }}
`;

/** The structured output of the model path: the same shape the offline operator stores. */
export const NARRATIVE_SCHEMA = {
  type: "object",
  required: ["mental_state", "tensions", "environment"],
  properties: {
    mental_state: {
      type: "array",
      items: {
        type: "object",
        required: ["who", "mood", "energy_level", "evidence"],
        properties: {
          who: { type: "string" },
          mood: { type: "array", items: { type: "string" } },
          energy_level: { type: "string", enum: ["high", "medium", "low"] },
          evidence: { type: "string" },
        },
      },
    },
    tensions: {
      type: "array",
      items: {
        type: "object",
        required: ["who", "description", "status"],
        properties: { who: { type: "string" }, description: { type: "string" }, status: { type: "string", enum: ["open", "resolved"] } },
      },
    },
    environment: {
      type: "array",
      items: {
        type: "object",
        required: ["who", "location_type", "vibe", "evidence"],
        properties: { who: { type: "string" }, location_type: { type: "string" }, vibe: { type: "string" }, evidence: { type: "string" } },
      },
    },
  },
} as const;

/** The brief's memory block: the rolling summary under the date it covers to. */
const briefTemplate = `Rolling summary{% if record.metadata.time.created_at %} (as of {{ record.metadata.time.created_at | slice: 0, 10 }}){% endif %}:
{{ record.content }}`;

export function synapseSpec(format: SourceFormat = "api", options: TemplateOptions = {}): PipelineSpec {
  const llm = modelOptions(options);
  const narrativeStep = options.model
    ? { from: "sessions", prompt: narrative, output: { ...NARRATIVE_SCHEMA }, ...llm }
    : { from: "sessions", operator: { kind: "narrative" as const } };
  return new Pipeline("synapse", { description: "Sessions, a rolling summary per user scope, narrative entities and the brief." })
    .source("sessions", sourceOptions(format, options))
    .split("windows", { from: "sessions", operator: { kind: "turns", size: 3, stride: 1, centered: true } })
    .transform("narrative", narrativeStep)
    .fold("rolling-summary", { from: "sessions", orderKey: "time.created_at", prompt: rollingSummary, maxStateTokens: 1200, ...llm })
    .output("brief", { from: "rolling-summary", surface: "projection", template: briefTemplate })
    .output("narrative-state", { from: "narrative", surface: "projection" })
    .output("search", { from: ["windows", "narrative", "rolling-summary"], surface: "search" })
    .toSpec();
}

export const synapseTemplate: PipelineTemplate = {
  id: "synapse",
  title: "Synapse",
  seed: "002 Synapse",
  description:
    "Sessions close after an idle gap and fold into a rolling summary per user scope; each session yields narrative entities (mental state, tensions, environment) as structured data; the brief serves recent turns plus the summary. Differs: no Graphiti — entities are records with provenance, not graph edges.",
  offlineStandIn:
    "the narrative entities come from a lexicon operator and the rolling summary is extractive (selected sentences), not written by a model.",
  spec: synapseSpec,
  eval: { mode: "hybrid" },
};
