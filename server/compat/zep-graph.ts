/**
 * Zep's graph over a Synthex pipeline (server/compat/zep.ts routes it). A graph is a scope: a user's
 * (`user:<id>`) or a standalone graph's (`graph:<id>`, server/compat/zep-objects.ts).
 *
 * - Edges are the memory step's memories (a fact each, no nodes); where the pipeline has a relations
 *   step (beliefs subject —predicate→ object, the Synapsis template), its beliefs too, naming their
 *   source and target nodes (the entities' ids, as nodes answer them). A pipeline with entities and
 *   relations but no memory step (Synapsis) is served from those alone.
 * - Nodes are the entities step's entities (found by part of a name or alias: "Ana" finds "Ana Smith").
 * - Episodes are what was added: each addMessages call's messages and each graph.add, searched by
 *   their words (a lexical ranking over the scope's messages).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { encodeId, statusOf, type Binding, type CompatRequest } from "./binding";
import { find, graphScope, refuse, userScope, type Session } from "./zep-objects";

export const dataPrefix = (scope: string) => `zep-data:${encodeId(scope)}:`;

/** The scope a graph call names: `user_id` (a user's graph) or `graph_id` (a standalone graph). */
export async function graphOwner(c: CompatRequest, b: Binding, input: Record<string, unknown>): Promise<string> {
  return (await graphOf(c, b, input)).scope;
}

/** The graph's scope, and since when its episodes are its own (a user deleted by an editor key and added again starts afresh). */
export async function graphOf(c: CompatRequest, b: Binding, input: Record<string, unknown>): Promise<{ scope: string; since?: string }> {
  const userId = typeof input.user_id === "string" && input.user_id.trim() ? input.user_id : null;
  const graphId = typeof input.graph_id === "string" && input.graph_id.trim() ? input.graph_id : null;
  if (userId && graphId) throw refuse("user_id and graph_id: give one of them, not both.");
  if (userId) return { scope: userScope(userId), since: (await find(c, b, "user", userId)).state.since };
  if (graphId) return { scope: graphScope(graphId), since: (await find(c, b, "graph", graphId)).state.since };
  throw refuse("user_id or graph_id: one of them is required (the graph to read or write).");
}

// --- Episodes --------------------------------------------------------------------------------------

export interface EpisodeJson {
  uuid: string;
  content: string;
  created_at: string;
  source: string;
  role?: string;
  thread_id?: string;
  processed: boolean;
  metadata?: Record<string, unknown>;
  score?: number;
}

/** Every episode of a scope: one per message of its threads, one per graph.add; oldest first. */
export async function episodesOf(c: CompatRequest, b: Binding, scope: string, since?: string): Promise<EpisodeJson[]> {
  const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, scope, limit: 5000 });
  const out: EpisodeJson[] = [];
  for (const s of [...sessions].reverse()) {
    if (since && s.createdAt < new Date(since)) continue;
    const isChunk = s.sessionId.startsWith("zep-msg:");
    const isData = s.sessionId.startsWith("zep-data:");
    if ((!isChunk && !isData) || s.scope !== scope) continue;
    const session = await c.caller.ingest.session({ pipelineId: b.pipeline, source: b.source, sessionId: s.sessionId });
    const threadId = isChunk ? decodeURIComponent(s.sessionId.slice("zep-msg:".length).split(":")[0]!) : undefined;
    for (const m of session.messages) {
      out.push({
        uuid: `${s.sessionId}#${m.position}`,
        content: m.content,
        created_at: m.time.toISOString(),
        source: isData ? (typeof m.metadata["zep:type"] === "string" ? m.metadata["zep:type"] : "text") : "message",
        ...(isChunk ? { role: m.role, thread_id: threadId } : {}),
        processed: session.recordId !== null,
        metadata: userMetadata(m.metadata),
      });
    }
  }
  return out;
}

/** A message's metadata as the caller gave it (without the keys Synthex keeps there, `zep:*`). */
export function userMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metadata).filter(([k]) => !k.startsWith("zep:")));
}

const STOP = new Set("the a an and or but of to in on at for with from by is are was were be been am do does did what which who whom whose when where why how i you he she it we they my your his her its our their me him us them this that these those there here have has had not no yes about into over than then so as if".split(" "));
const words = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1 && !STOP.has(w));

/** Ranks episodes by the query's words (idf-weighted, each word once per episode); no match, no hit. */
export function rankEpisodes(episodes: EpisodeJson[], query: string, limit: number): EpisodeJson[] {
  const terms = [...new Set(words(query))];
  if (!terms.length) return [];
  const docs = episodes.map((e) => new Set(words(e.content)));
  const idf = new Map(terms.map((t) => [t, Math.log(1 + (docs.length + 1) / (1 + docs.filter((d) => d.has(t)).length))]));
  const max = terms.reduce((sum, t) => sum + idf.get(t)!, 0);
  return episodes
    .map((e, i) => ({ e, score: terms.reduce((sum, t) => sum + (docs[i]!.has(t) ? idf.get(t)! : 0), 0) / max }))
    .filter((x) => x.score > 0)
    .sort((x, y) => y.score - x.score)
    .slice(0, limit)
    .map((x) => ({ ...x.e, score: x.score }));
}

// --- Nodes and edges -------------------------------------------------------------------------------

type Entity = Awaited<ReturnType<CompatRequest["caller"]["graph"]["entities"]>>["entities"][number];

function nodeJson(e: Entity, score?: number) {
  const aliases = e.aliases.length ? ` (also ${e.aliases.join(", ")})` : "";
  return {
    uuid: e.id,
    name: e.name,
    summary: `${e.name}${aliases}: ${e.type}, mentioned ${e.mentions} time${e.mentions === 1 ? "" : "s"}.`,
    labels: ["Entity", e.type],
    created_at: (e.firstSeen ?? e.lastSeen ?? new Date(0).toISOString()).toString(),
    attributes: { type: e.type, aliases: e.aliases, mentions: e.mentions, scope: e.scope },
    ...(score !== undefined ? { score } : {}),
  };
}

/** Entities of the scope whose name or alias contains the query, or one of its words ("Ana" → "Ana Smith"). */
export async function searchNodes(c: CompatRequest, b: Binding, scope: string, query: string, limit: number) {
  if (!b.entitiesStep) return [];
  const seen = new Map<string, { e: Entity; score: number }>();
  const probes = [query.trim(), ...words(query).filter((w) => w.length > 2)];
  for (const [i, q] of probes.entries()) {
    if (!q) continue;
    for (const e of await entitiesOf(c, b, scope, q.slice(0, 200), 50)) if (!seen.has(e.id)) seen.set(e.id, { e, score: i === 0 ? 1 : 0.5 });
  }
  return [...seen.values()].sort((x, y) => y.score - x.score || y.e.mentions - x.e.mentions).slice(0, limit).map(({ e, score }) => nodeJson(e, score));
}

export async function listNodes(c: CompatRequest, b: Binding, scope: string, limit: number) {
  if (!b.entitiesStep) return [];
  return (await entitiesOf(c, b, scope, undefined, Math.min(200, limit))).map((e) => nodeJson(e));
}

/** The scope's entities (by part of a name); none where the branch has no entities step of the graph's shape. */
async function entitiesOf(c: CompatRequest, b: Binding, scope: string, q: string | undefined, limit: number): Promise<Entity[]> {
  try {
    return (await c.caller.graph.entities({ pipelineId: b.pipeline, ...(q ? { q } : {}), scope, limit })).entities;
  } catch (err) {
    if (statusOf(err).status === 400) return [];
    throw err;
  }
}

type Memory = Awaited<ReturnType<CompatRequest["caller"]["memory"]["list"]>>["memories"][number];

export function memoryEdge(m: Pick<Memory, "memoryId" | "recordId" | "content" | "scope" | "createdAt"> & { score?: number }) {
  return {
    uuid: m.memoryId,
    fact: m.content,
    name: "MEMORY",
    created_at: new Date(m.createdAt).toISOString(),
    valid_at: new Date(m.createdAt).toISOString(),
    source_node_uuid: "",
    target_node_uuid: "",
    episodes: [],
    attributes: { record_id: m.recordId, scope: m.scope },
    ...(m.score !== undefined ? { score: m.score } : {}),
  };
}

/** The memory step's memories of a scope (current ones); none where the pipeline has no memory step (a graph pipeline). */
export async function memoriesIn(c: CompatRequest, b: Binding, scope: string): Promise<Memory[]> {
  if (!b.memoryStep) return [];
  return (await c.caller.memory.list({ pipelineId: b.pipeline, step: b.memoryStep, scope })).memories;
}

/** The belief a relations record holds (metadata.custom.belief, written by the relations step). */
const beliefSchema = z.object({
  id: z.string(),
  subject: z.string(),
  predicate: z.string(),
  objectEntity: z.string().nullish(),
  validFrom: z.string().nullish(),
  validTo: z.string().nullish(),
  learnedAt: z.string().nullish(),
});
const beliefMetadata = z.object({ custom: z.object({ belief: beliefSchema }) });

/** A relations record as Zep's EntityEdge: its fact, the subject's entity as source node, the object's (when an entity) as target. */
function relationEdge(r: { id: string; content: string; scope: string; metadata: unknown; createdAt: Date | string }, score?: number) {
  const parsed = beliefMetadata.safeParse(r.metadata);
  if (!parsed.success) return null;
  const belief = parsed.data.custom.belief;
  const iso = (t: string | null | undefined) => (t && !Number.isNaN(Date.parse(t)) ? new Date(t).toISOString() : null);
  const created = iso(belief.learnedAt) ?? new Date(r.createdAt).toISOString();
  const invalid = iso(belief.validTo);
  return {
    uuid: belief.id,
    fact: r.content,
    name: belief.predicate,
    created_at: created,
    valid_at: iso(belief.validFrom) ?? created,
    ...(invalid ? { invalid_at: invalid } : {}),
    source_node_uuid: belief.subject,
    target_node_uuid: belief.objectEntity ?? "",
    episodes: [],
    attributes: { record_id: r.id, scope: r.scope },
    ...(score !== undefined ? { score } : {}),
  };
}
type Edge = ReturnType<typeof memoryEdge> | NonNullable<ReturnType<typeof relationEdge>>;

/** The scope's edges: its memories, then (on a graph pipeline) its relations' beliefs. */
export async function listEdges(c: CompatRequest, b: Binding, scope: string, limit: number): Promise<Edge[]> {
  const edges: Edge[] = (await memoriesIn(c, b, scope)).filter((m) => m.scope === scope).slice(0, limit).map(memoryEdge);
  if (b.relationsStep && edges.length < limit) {
    const page = await c.caller.record.listByStep({ pipelineId: b.pipelineId, step: b.relationsStep, scope, limit: Math.min(200, limit - edges.length) });
    for (const r of page.records) {
      const edge = r.scope === scope ? relationEdge(r) : null;
      if (edge) edges.push(edge);
    }
  }
  return edges;
}

/** Edges whose fact answers the query: hybrid search over the memory step and the relations step. */
export async function searchEdges(c: CompatRequest, b: Binding, scope: string, query: string, limit: number): Promise<Edge[]> {
  const steps = [b.memoryStep, b.relationsStep].filter((s): s is string => s !== null);
  const found = await c.caller.search.search({ pipelineId: b.pipeline, query, step: steps, scope, limit });
  const edges: Edge[] = [];
  for (const h of found.hits) {
    if (h.step === b.memoryStep) {
      edges.push(memoryEdge({ memoryId: (h.metadata as { memory?: { id?: string } }).memory?.id ?? h.id, recordId: h.id, content: h.content, scope: h.scope, createdAt: h.createdAt, score: h.score.fused }));
    } else if (h.step === b.relationsStep) {
      const edge = relationEdge(h, h.score.fused);
      if (edge) edges.push(edge);
    }
  }
  return edges;
}

// --- graph.add ---------------------------------------------------------------------------------------

/** JSON data as sentences the pipeline's steps read ("name: Ana Smith."), nested keys joined by dots. */
export function jsonAsText(data: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw refuse('data: type "json" needs data to be JSON text (it does not parse).');
  }
  const lines: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (v && typeof v === "object") {
      for (const [k, x] of Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
    } else lines.push(`${path || "value"}: ${String(v)}.`);
  };
  walk(parsed, "");
  return lines.join("\n");
}

export async function addData(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  const scope = await graphOwner(c, b, input);
  if (typeof input.data !== "string" || !input.data.trim()) throw refuse("data: required (the text, message or JSON to add).");
  const type = input.type === undefined ? "text" : input.type;
  if (type !== "text" && type !== "json" && type !== "message") throw refuse(`type "${String(type)}": one of text, json, message.`);
  const content = type === "json" ? jsonAsText(input.data) : input.data;
  const sessionId = `${dataPrefix(scope)}${randomUUID()}`;
  const created = typeof input.created_at === "string" ? { time: input.created_at } : {};
  const metadata = { "zep:type": type, ...(input.metadata && typeof input.metadata === "object" ? (input.metadata as Record<string, unknown>) : {}) };
  const title = typeof input.source_description === "string" && input.source_description.trim() ? input.source_description.slice(0, 200) : "Zep graph.add";
  const done = await c.caller.ingest.messages({ pipelineId: b.pipeline, source: b.source, sessionId, scope, title, messages: [{ role: "data", content, metadata, ...created }], close: true });
  return { uuid: `${sessionId}#0`, content, created_at: new Date().toISOString(), source: type, processed: done.recordId !== null, task_id: done.recordId ?? sessionId, metadata: userMetadata(metadata) };
}

// --- Thread summaries --------------------------------------------------------------------------------

/** The pipeline's summaries of a scope (its steps named like "summaries", newest first), as Zep's thread summaries. */
export async function summariesOf(c: CompatRequest, b: Binding, scope: string, limit = 20) {
  const { version } = await c.caller.pipeline.get({ pipelineId: b.pipeline });
  const steps = version.spec.steps.filter((s) => /summar/i.test(s.name)).map((s) => s.name);
  const out: Array<{ uuid: string; summary: string; created_at: string; name: string }> = [];
  for (const step of steps) {
    const page = await c.caller.record.listByStep({ pipelineId: b.pipelineId, step, scope, limit: Math.min(200, limit) });
    for (const r of page.records) out.push({ uuid: r.id, summary: r.content, created_at: new Date(r.createdAt).toISOString(), name: step });
  }
  return out.sort((x, y) => y.created_at.localeCompare(x.created_at)).slice(0, limit);
}

export function threadOfSession(s: Session) {
  return s.sessionId.startsWith("zep-msg:") ? decodeURIComponent(s.sessionId.slice("zep-msg:".length).split(":")[0]!) : null;
}

