/**
 * The entity graph as people and agents read it: a pipeline branch's entities (search by name or
 * alias), an entity's neighbourhood (its beliefs as edges to neighbour entities, N hops, capped),
 * its beliefs over time (valid-time order, supersession chains kept), a belief's sources, and the
 * insights. Nothing here is a second store: entities, beliefs and insights are records of the
 * `entities`, `relations` and `insights` steps the branch points at (notes/synapsis-contract).
 * Callers check membership and permission (the `graph` router); this reads what the branch shows.
 */
import { z } from "zod";
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import type { PipelineSpec } from "../pipeline/spec";
import { sources, type RecordSummary } from "../search/provenance";
import { normalizeScope } from "../search/context";
import { beliefRows, edgeAggregates, entityRows, insightRows, neighbourCounts, type GraphRecordRow, type GraphTarget } from "../store/graph-reads";

/** The branch a read is about: what `pipelineProcedure` loads. */
export interface GraphBranch {
  workspaceId: string;
  pipelineId: string;
  branchId: string;
  branchName: string;
  spec: PipelineSpec;
}

export const ENTITY_TYPES = ["person", "place", "organization", "thing", "event", "other"] as const;
export const INSIGHT_KINDS = ["connection", "digest", "contradiction"] as const;
/** The predicate of co-mention beliefs: they connect the graph but say nothing about the entity's state. */
export const CO_MENTION = "mentioned with";

export const MAX_HOPS = 3;
export const MAX_NEIGHBOURS = 100;
/** Beliefs listed per drawn edge (the edge carries the full count). */
const BELIEFS_PER_EDGE = 20;
const MAX_EDGES = 300;
/** Literal-object beliefs ("likes — painting") drawn around the centre entity. */
const MAX_VALUE_EDGES = 12;

const isoOrNull = z.string().nullable().catch(null);

// The record shapes of the contract; a record that does not fit is skipped, never guessed at.
const entityData = z.object({
  id: z.string().min(1),
  name: z.string(),
  aliases: z.array(z.string()).catch([]),
  type: z.enum(ENTITY_TYPES).catch("other"),
  mentions: z.number().catch(0),
  firstSeen: isoOrNull,
  lastSeen: isoOrNull,
});

const beliefData = z.object({
  id: z.string().min(1),
  subject: z.string().min(1),
  subjectName: z.string().catch(""),
  predicate: z.string(),
  object: z.string().catch(""),
  objectEntity: z.string().nullable().catch(null),
  polarity: z.enum(["positive", "negative"]).catch("positive"),
  validFrom: isoOrNull,
  validTo: isoOrNull,
  learnedAt: isoOrNull,
  supersededBy: z.string().nullable().catch(null),
  supersedes: z.string().nullable().catch(null),
  status: z.enum(["current", "superseded"]).catch("current"),
  sources: z.array(z.string()).catch([]),
  /** The sentence it was read from, when the relations step kept it. */
  evidence: z.string().nullable().catch(null),
  /** Co-mentions: how many sources name both entities (`sources` keeps the newest of them). */
  count: z.number().int().nullable().catch(null),
});

const insightData = z.object({
  kind: z.enum(INSIGHT_KINDS),
  title: z.string(),
  entities: z.array(z.string()).catch([]),
  beliefs: z.array(z.string()).catch([]),
  period: z.string().nullable().catch(null),
  detectedAt: isoOrNull,
});

export type GraphEntity = z.infer<typeof entityData> & { recordId: string; step: string; scope: string; card: string };
export type GraphBelief = z.infer<typeof beliefData> & { recordId: string; step: string; scope: string; text: string };
export type GraphInsight = z.infer<typeof insightData> & {
  recordId: string;
  step: string;
  scope: string;
  text: string;
  /** The entities it names, with their names (those the branch still shows). */
  entityRefs: Array<{ id: string; name: string }>;
};

function parsed<O extends object, T>(schema: z.ZodType<O>, rows: GraphRecordRow[], extra: (r: GraphRecordRow) => T): Array<O & T> {
  const out: Array<O & T> = [];
  for (const r of rows) {
    const data = schema.safeParse(r.data);
    if (data.success) out.push({ ...data.data, ...extra(r) });
  }
  return out;
}

const toEntities = (rows: GraphRecordRow[]): GraphEntity[] =>
  parsed(entityData, rows, (r) => ({ recordId: r.recordId, step: r.step, scope: r.scope, card: r.content }));
const toBeliefs = (rows: GraphRecordRow[]): GraphBelief[] =>
  parsed(beliefData, rows, (r) => ({ recordId: r.recordId, step: r.step, scope: r.scope, text: r.content }));

/** The steps of each graph type in the branch's spec (a pipeline may have none). */
export function graphSteps(spec: PipelineSpec): { entities: string[]; relations: string[]; insights: string[] } {
  // Compared as strings: the step types are registered by the graph build steps.
  const of = (type: string) => spec.steps.filter((s) => String(s.type) === type).map((s) => s.name);
  return { entities: of("entities"), relations: of("relations"), insights: of("insights") };
}

function target(branch: GraphBranch, steps: string[], scope?: string): GraphTarget {
  return { workspaceId: branch.workspaceId, branchId: branch.branchId, steps, scope: normalizeScope(scope) };
}

function requireGraph(branch: GraphBranch) {
  const steps = graphSteps(branch.spec);
  if (!steps.entities.length) {
    throw badRequest(`Pipeline branch "${branch.branchName}" has no entities step: add an entities step (the synapsis template has one) to build a graph.`);
  }
  return steps;
}

const clamp = (n: number | undefined, min: number, max: number, fallback: number) => Math.min(max, Math.max(min, Math.floor(n ?? fallback)));

// Entities ------------------------------------------------------------------------------------

export interface EntityList {
  entities: GraphEntity[];
  /** How many entities match (before the limit). */
  total: number;
  steps: { entities: string[]; relations: string[]; insights: string[] };
}

/** The branch's entities in a scope, most mentioned first; with `q`, those whose name or an alias contains it. */
export async function listEntities(db: Db, branch: GraphBranch, input: { q?: string; scope?: string; limit?: number }): Promise<EntityList> {
  const steps = requireGraph(branch);
  const q = input.q?.trim();
  if (q && q.length > 200) throw badRequest("q: at most 200 characters.");
  const { rows, total } = await entityRows(db, target(branch, steps.entities, input.scope), { q: q || undefined, limit: clamp(input.limit, 1, 200, 30) });
  return { entities: toEntities(rows), total, steps };
}

async function requireEntity(db: Db, branch: GraphBranch, steps: string[], id: string, scope?: string): Promise<GraphEntity> {
  if (!id || id.length > 200) throw badRequest("entityId: an entity id (ent_…) is required.");
  const { rows } = await entityRows(db, target(branch, steps, scope), { ids: [id], limit: 1 });
  const [entity] = toEntities(rows);
  if (!entity) throw notFound(`Entity "${id.slice(0, 100)}" not found on branch "${branch.branchName}".`);
  return entity;
}

// Neighbourhood -------------------------------------------------------------------------------

export interface GraphNode {
  /** An entity id, or `value:<text>` for a literal object (a belief whose object is no entity). */
  id: string;
  kind: "entity" | "value";
  label: string;
  /** Hops from the centre entity. */
  depth: number;
  entity: GraphEntity | null;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  predicate: string;
  /** Beliefs on this edge, and how many of them are current. */
  count: number;
  current: number;
  /** Sources behind the edge: a co-mention edge counts the sources naming both, other beliefs one each. */
  weight: number;
  /** Up to 20 of them (newest valid time first); their details are in `beliefs`. */
  beliefIds: string[];
}

export interface EntityNeighbourhood {
  entity: GraphEntity;
  hops: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Every belief an edge lists. */
  beliefs: GraphBelief[];
  /** Neighbours were left out (over `limit`), or edges were (over the edge cap). */
  truncated: boolean;
  /** The entity's beliefs over time (it is the subject; co-mentions left out), oldest valid time first. */
  timeline: GraphBelief[];
  timelineTotal: number;
}

/**
 * An entity, its neighbours up to `hops` away (at most `limit` of them, those linked by the most
 * sources first), the beliefs among them as edges (grouped per subject, predicate and object),
 * its literal beliefs around it, and its timeline.
 */
export async function entityNeighbourhood(
  db: Db,
  branch: GraphBranch,
  input: { entityId: string; scope?: string; hops?: number; limit?: number; timelineLimit?: number },
): Promise<EntityNeighbourhood> {
  const steps = requireGraph(branch);
  const hops = clamp(input.hops, 1, MAX_HOPS, 1);
  const limit = clamp(input.limit, 1, MAX_NEIGHBOURS, 12);
  const entity = await requireEntity(db, branch, steps.entities, input.entityId, input.scope);
  const beliefTarget = target(branch, steps.relations, input.scope);

  const depthOf = new Map<string, number>([[entity.id, 0]]);
  let frontier = [entity.id];
  let truncated = false;
  if (steps.relations.length) {
    for (let hop = 1; hop <= hops && frontier.length; hop++) {
      const room = limit - (depthOf.size - 1);
      if (room <= 0) {
        truncated = true;
        break;
      }
      const found = await neighbourCounts(db, beliefTarget, { ids: frontier, exclude: [...depthOf.keys()], limit: room + 1 });
      if (found.length > room) truncated = true;
      frontier = found.slice(0, room).map((n) => n.entityId);
      for (const id of frontier) depthOf.set(id, hop);
    }
  }
  const ids = [...depthOf.keys()];
  const [entityRead, edgeRows, values, timeline] = await Promise.all([
    entityRows(db, target(branch, steps.entities, input.scope), { ids, limit: ids.length }),
    steps.relations.length ? edgeAggregates(db, beliefTarget, { ids, perEdge: BELIEFS_PER_EDGE, limit: MAX_EDGES + 1 }) : Promise.resolve([]),
    steps.relations.length ? beliefRows(db, beliefTarget, { subject: entity.id, literalOnly: true, skipCoMentions: true, limit: MAX_VALUE_EDGES }) : null,
    steps.relations.length
      ? beliefRows(db, beliefTarget, { subject: entity.id, skipCoMentions: true, limit: clamp(input.timelineLimit, 1, 1000, 200) })
      : { rows: [], total: 0 },
  ]);
  if (edgeRows.length > MAX_EDGES) truncated = true;
  const known = new Map(toEntities(entityRead.rows).map((e) => [e.id, e]));
  // An entity another belief names but the branch no longer shows is drawn by id, not dropped.
  const nodes: GraphNode[] = ids.map((id) => {
    const e = known.get(id) ?? null;
    return { id, kind: "entity", label: e?.name ?? id, depth: depthOf.get(id)!, entity: e };
  });
  const edges: GraphEdge[] = edgeRows.slice(0, MAX_EDGES).map((r) => ({
    id: `${r.subject}|${r.predicate}|${r.objectEntity}`,
    source: r.subject,
    target: r.objectEntity,
    predicate: r.predicate,
    count: r.count,
    current: r.current,
    weight: r.weight,
    beliefIds: r.beliefIds.filter(Boolean),
  }));
  const valueBeliefs = values ? toBeliefs(values.rows) : [];
  const valueEdges = new Map<string, GraphEdge>();
  for (const b of valueBeliefs) {
    const nodeId = `value:${b.object.trim().toLowerCase()}`;
    if (!nodes.some((n) => n.id === nodeId)) nodes.push({ id: nodeId, kind: "value", label: b.object, depth: 1, entity: null });
    const edgeId = `${b.subject}|${b.predicate}|${nodeId}`;
    const edge = valueEdges.get(edgeId) ?? { id: edgeId, source: b.subject, target: nodeId, predicate: b.predicate, count: 0, current: 0, weight: 0, beliefIds: [] };
    edge.count++;
    edge.weight += b.count ?? 1;
    if (b.status === "current") edge.current++;
    edge.beliefIds.push(b.id);
    valueEdges.set(edgeId, edge);
  }
  edges.push(...valueEdges.values());
  const listed = [...new Set(edges.flatMap((e) => e.beliefIds))];
  const edgeBeliefs = listed.length ? toBeliefs((await beliefRows(db, beliefTarget, { ids: listed, limit: listed.length })).rows) : [];
  return {
    entity,
    hops,
    nodes,
    edges,
    beliefs: edgeBeliefs,
    truncated,
    timeline: toBeliefs(timeline.rows),
    timelineTotal: timeline.total,
  };
}

// Beliefs -------------------------------------------------------------------------------------

/** Beliefs by id (at most 200), in valid-time order. */
export async function getBeliefs(db: Db, branch: GraphBranch, input: { ids: string[]; scope?: string }): Promise<GraphBelief[]> {
  const steps = requireGraph(branch);
  const ids = [...new Set(input.ids)].slice(0, 200);
  if (!ids.length || !steps.relations.length) return [];
  return toBeliefs((await beliefRows(db, target(branch, steps.relations, input.scope), { ids, limit: ids.length })).rows);
}

export interface BeliefDetail {
  belief: GraphBelief;
  /** The records the belief was read from (its provenance parents), as the explorer lists them. */
  sources: RecordSummary[];
  /** The belief it replaced and the one that replaced it, when the branch shows them. */
  supersedes: GraphBelief | null;
  supersededBy: GraphBelief | null;
}

/** One belief with its source records and its neighbours in the supersession chain. */
export async function beliefDetail(db: Db, branch: GraphBranch, input: { beliefId: string; scope?: string }): Promise<BeliefDetail> {
  if (!input.beliefId || input.beliefId.length > 200) throw badRequest("beliefId: a belief id (bel_…) is required.");
  const [belief] = await getBeliefs(db, branch, { ids: [input.beliefId], scope: input.scope });
  if (!belief) throw notFound(`Belief "${input.beliefId.slice(0, 100)}" not found on branch "${branch.branchName}".`);
  const chain = await getBeliefs(db, branch, { ids: [belief.supersedes, belief.supersededBy].filter((x): x is string => !!x), scope: input.scope });
  const byId = new Map(chain.map((b) => [b.id, b]));
  return {
    belief,
    sources: await sources(db, branch.workspaceId, belief.recordId, { pipelineId: branch.pipelineId, branch: branch.branchName }),
    supersedes: belief.supersedes ? (byId.get(belief.supersedes) ?? null) : null,
    supersededBy: belief.supersededBy ? (byId.get(belief.supersededBy) ?? null) : null,
  };
}

// Insights ------------------------------------------------------------------------------------

export interface InsightList {
  insights: GraphInsight[];
  total: number;
  /** The insights steps read; empty when the pipeline has none. */
  steps: string[];
}

/** The insights the branch shows (connections, digests, contradictions), newest first. */
export async function listInsights(
  db: Db,
  branch: GraphBranch,
  input: { scope?: string; kind?: (typeof INSIGHT_KINDS)[number]; entity?: string; limit?: number },
): Promise<InsightList> {
  const steps = graphSteps(branch.spec);
  if (!steps.insights.length) return { insights: [], total: 0, steps: [] };
  const { rows, total } = await insightRows(db, target(branch, steps.insights, input.scope), {
    kind: input.kind,
    entity: input.entity,
    limit: clamp(input.limit, 1, 500, 100),
  });
  const insights = parsed(insightData, rows, (r) => ({ recordId: r.recordId, step: r.step, scope: r.scope, text: r.content }));
  const ids = [...new Set(insights.flatMap((i) => i.entities))];
  const names = new Map<string, string>();
  if (ids.length && steps.entities.length) {
    for (const e of toEntities((await entityRows(db, target(branch, steps.entities, input.scope), { ids, limit: ids.length })).rows)) names.set(e.id, e.name);
  }
  return {
    insights: insights.map((i) => ({ ...i, entityRefs: i.entities.filter((id) => names.has(id)).map((id) => ({ id, name: names.get(id)! })) })),
    total,
    steps: steps.insights,
  };
}
