/**
 * Graph retrieval (Synapsis §4.2, the graph path): find the entities a question names among the
 * entity records of the branch (canonical names and aliases, case-insensitive, possessives
 * stripped), walk one or two hops over belief records (subject —predicate→ object entity), and
 * rank the source records those beliefs point to. Each ranked record carries its evidence paths
 * (question entity → belief → [entity → belief] → source record) so a UI can draw them and the
 * critic can tell which of the question's entities the evidence reaches. `search` (mode "graph")
 * fuses this list with the dense and sparse lists by reciprocal rank fusion.
 *
 * Ranking, per path: hop decay × status × edge kind × (0.4 + 0.6 × the share of the question's
 * words — other than the entity names — that the path's beliefs say). Current beliefs count
 * fully; superseded ones are kept but ranked lower, except in temporal questions ("when",
 * "before", "used to"), which want the history. Co-mention edges ("mentioned with") count less
 * than stated relations.
 *
 * Reading the names a question holds is question-names.ts.
 */
import type { BeliefMeta } from "../core/graph-records";
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import type { PipelineSpec } from "../pipeline/spec";
import { bm25Terms } from "../text/bm25";
import { beliefsTouching, entitiesNamed, graphSourceRows, type BeliefRow, type EntityRow } from "../store/graph-retrieval-reads";
import { byTieKey } from "../store/record-sql";
import { parseJson, type BranchContext, type RecordFilters } from "./context";
import { isTemporalQuestion, matchEntities, nameCandidates, questionPhrases, questionTokens } from "./question-names";

/** Entity records matched per question (many scopes may share a name when the search is unscoped). */
const ENTITY_CAP = 200;
const HOP1_CAP = 3000;
const HOP2_CAP = 2000;
/** Entities reached in one hop that the second hop expands from (the best-connected to the question). */
const FRONTIER = 8;
/** Evidence paths kept per record. */
const PATHS_PER_RECORD = 3;

export const GRAPH_WEIGHTS = { hop2: 0.7, superseded: 0.6, supersededTemporal: 0.9, coMention: 0.6 } as const;
export const CO_MENTION = "mentioned with";
/** Step types whose records make the graph (never returned as graph evidence themselves). */
const GRAPH_STEP_TYPES = ["entities", "relations", "insights"];

export type EntityType = "person" | "place" | "organization" | "thing" | "event" | "other";

/** The structured part of an entity record (`metadata.custom.entity`, see the synapsis contract). */
export interface GraphEntity {
  id: string;
  name: string;
  aliases: string[];
  type: EntityType | string;
}

/** A belief record as graph retrieval reads it: the record's id beside the belief it holds. */
export type Belief = Pick<
  BeliefMeta,
  "id" | "subject" | "subjectName" | "predicate" | "object" | "objectEntity" | "polarity" | "validFrom" | "validTo" | "status" | "sources" | "evidence"
> & {
  /** The belief record's id (not the belief id). */
  recordId: string;
};

/** An entity of the question found in the graph. */
export interface QuestionEntity {
  entityId: string;
  /** The entity record. */
  recordId: string;
  name: string;
  type: string;
  scope: string;
  /** The words of the question that named it (normalized). */
  matched: string;
}

/** One edge of an evidence path: a belief, subject —predicate→ object. */
export interface EvidenceEdge {
  recordId: string;
  beliefId: string;
  subject: string;
  subjectName: string;
  predicate: string;
  object: string;
  objectEntity: string | null;
  status: "current" | "superseded";
  validFrom: string | null;
  validTo: string | null;
  /** The sentence the belief was read from (null when not kept). */
  evidence: string | null;
}

/** Question entity → belief (→ entity → belief) → source record. */
export interface EvidencePath {
  from: { entityId: string; recordId: string; name: string; matched: string };
  /** One or two beliefs, in walking order; the last one cites the source record. */
  edges: EvidenceEdge[];
  /** The source record (the hit). */
  sourceId: string;
  score: number;
}

/** Code-point order (no locale): the same on every machine. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** What a path says, from its entity through each belief: content, not ids (a belief's id carries its random source id). */
const pathText = (p: EvidencePath) => [p.from.entityId, ...p.edges.flatMap((e) => [e.subject, e.predicate, e.object, e.status, e.validFrom ?? ""])].join("\u0000");

/**
 * Evidence paths, best first: higher score, then fewer hops, then what they say — so a record's
 * paths list the same way whatever order the beliefs and sources were read in.
 */
export function byPathRank(a: EvidencePath, b: EvidencePath): number {
  return b.score - a.score || a.edges.length - b.edges.length || byText(pathText(a), pathText(b)) || byText(a.sourceId, b.sourceId);
}

export interface GraphCandidate {
  id: string;
  step: string;
  time: string | null;
  /** Tie-break of equal scores (see tieKey). */
  key: string;
  /** 0..1. */
  score: number;
  paths: EvidencePath[];
}

export interface GraphRetrieval {
  /** The question's entities found in the graph. */
  entities: QuestionEntity[];
  /** Capitalized names in the question that are no entity of the graph. */
  unknownNames: string[];
  /** Source records, best first. */
  candidates: GraphCandidate[];
  beliefsRead: number;
}

// ---- beliefs and paths --------------------------------------------------------------------

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** A belief from a record's `metadata.custom.belief`, or null when it lacks the contract's fields. */
export function parseBelief(recordId: string, raw: unknown): Belief | null {
  const b = parseJson<Record<string, unknown> | null>(raw);
  if (!b || typeof b !== "object") return null;
  const id = str(b.id);
  const subject = str(b.subject);
  const predicate = str(b.predicate);
  if (!id || !subject || !predicate) return null;
  return {
    recordId,
    id,
    subject,
    subjectName: str(b.subjectName) ?? "",
    predicate,
    object: str(b.object) ?? "",
    objectEntity: str(b.objectEntity),
    polarity: b.polarity === "negative" ? "negative" : "positive",
    validFrom: str(b.validFrom),
    validTo: str(b.validTo),
    status: b.status === "superseded" || str(b.supersededBy) ? "superseded" : "current",
    sources: Array.isArray(b.sources) ? b.sources.filter((s): s is string => typeof s === "string") : [],
    evidence: str(b.evidence),
  };
}

export function parseEntity(raw: unknown): GraphEntity | null {
  const e = parseJson<Record<string, unknown> | null>(raw);
  if (!e || typeof e !== "object") return null;
  const id = str(e.id);
  const name = str(e.name);
  if (!id || !name) return null;
  return { id, name, aliases: Array.isArray(e.aliases) ? e.aliases.filter((a): a is string => typeof a === "string") : [], type: str(e.type) ?? "other" };
}

const edgeOf = (b: Belief): EvidenceEdge => ({
  recordId: b.recordId,
  beliefId: b.id,
  subject: b.subject,
  subjectName: b.subjectName,
  predicate: b.predicate,
  object: b.object,
  objectEntity: b.objectEntity,
  status: b.status,
  validFrom: b.validFrom,
  validTo: b.validTo,
  evidence: b.evidence,
});

/** The entity at the other end of a belief from `entity` (null when the object is plain text). */
export function otherEnd(b: Belief, entity: string): string | null {
  if (b.subject === entity) return b.objectEntity;
  if (b.objectEntity === entity) return b.subject;
  return null;
}

export interface PathScoring {
  /** Stemmed question words other than the names of its entities. */
  terms: Set<string>;
  temporal: boolean;
  /** Ids of the question's entities: a belief linking two of them answers part of the question by itself. */
  entityIds: Set<string>;
}

export function pathScoring(question: string, matched: string[], entityIds: string[] = []): PathScoring {
  const names = new Set(matched.flatMap((m) => bm25Terms(m)));
  return { terms: new Set(bm25Terms(question).filter((t) => !names.has(t))), temporal: isTemporalQuestion(question), entityIds: new Set(entityIds) };
}

/** The (stemmed) words a path's beliefs say: names, predicates, objects and the sentences they were read from. */
export function pathTerms(edges: Array<Pick<Belief, "subjectName" | "predicate" | "object" | "evidence">>): Set<string> {
  return new Set(edges.flatMap((b) => bm25Terms(`${b.subjectName} ${b.predicate} ${b.object} ${b.evidence ?? ""}`)));
}

/**
 * hop decay × status × edge kind × (0.4 + 0.6 × share of the question's other words the beliefs
 * say); a belief linking two of the question's entities counts as half the words and is never
 * discounted as a mere co-mention.
 */
export function scorePath(edges: Belief[], scoring: PathScoring): number {
  const said = pathTerms(edges);
  const links = (b: Belief) => Boolean(b.objectEntity && scoring.entityIds.has(b.subject) && scoring.entityIds.has(b.objectEntity));
  const linked = edges.some(links) ? 0.5 : 0;
  const cover = Math.min(1, (scoring.terms.size ? [...scoring.terms].filter((t) => said.has(t)).length / scoring.terms.size : 1) + linked);
  let score = (edges.length > 1 ? GRAPH_WEIGHTS.hop2 : 1) * (0.4 + 0.6 * cover);
  for (const b of edges) {
    if (b.status === "superseded") score *= scoring.temporal ? GRAPH_WEIGHTS.supersededTemporal : GRAPH_WEIGHTS.superseded;
    if (b.predicate === CO_MENTION && !links(b)) score *= GRAPH_WEIGHTS.coMention;
  }
  return Math.round(score * 1e4) / 1e4;
}

interface Walked {
  seed: QuestionEntity;
  edges: Belief[];
  score: number;
}

/** Index of beliefs by the entities they touch (subject and object entity). */
function byEntity(beliefs: Belief[]): Map<string, Belief[]> {
  const out = new Map<string, Belief[]>();
  const add = (e: string, b: Belief) => {
    const list = out.get(e);
    if (list) list.push(b);
    else out.set(e, [b]);
  };
  for (const b of beliefs) {
    add(b.subject, b);
    if (b.objectEntity && b.objectEntity !== b.subject) add(b.objectEntity, b);
  }
  return out;
}

/** One-hop paths from the seeds: every belief touching a seed. */
export function firstHop(seeds: QuestionEntity[], beliefs: Belief[], scoring: PathScoring): Walked[] {
  const index = byEntity(beliefs);
  return seeds.flatMap((seed) => (index.get(seed.entityId) ?? []).map((b) => ({ seed, edges: [b], score: scorePath([b], scoring) })));
}

/**
 * The entities one hop away to expand from: the other ends of one-hop paths, not themselves
 * seeds, best path score first (then the number of beliefs linking them), at most `n`.
 */
export function frontier(hop1: Walked[], seeds: QuestionEntity[], n = FRONTIER): Map<string, Walked> {
  const seedIds = new Set(seeds.map((s) => s.entityId));
  const best = new Map<string, { via: Walked; links: number }>();
  for (const w of hop1) {
    const end = otherEnd(w.edges[0]!, w.seed.entityId);
    if (!end || seedIds.has(end)) continue;
    const cur = best.get(end);
    if (!cur) best.set(end, { via: w, links: 1 });
    else best.set(end, { via: w.score > cur.via.score ? w : cur.via, links: cur.links + 1 });
  }
  return new Map(
    [...best.entries()]
      .sort(([a, x], [b, y]) => y.via.score - x.via.score || y.links - x.links || a.localeCompare(b))
      .slice(0, n)
      .map(([e, v]) => [e, v.via]),
  );
}

/** Two-hop paths: from each frontier entity (reached by its best one-hop path), every other belief touching it. */
export function secondHop(front: Map<string, Walked>, beliefs: Belief[], seeds: QuestionEntity[], scoring: PathScoring): Walked[] {
  const index = byEntity(beliefs);
  const seedIds = new Set(seeds.map((s) => s.entityId));
  const out: Walked[] = [];
  for (const [entity, via] of front) {
    for (const b of index.get(entity) ?? []) {
      if (b.id === via.edges[0]!.id || seedIds.has(b.subject) || (b.objectEntity && seedIds.has(b.objectEntity))) continue;
      const edges = [via.edges[0]!, b];
      out.push({ seed: via.seed, edges, score: scorePath(edges, scoring) });
    }
  }
  return out;
}

/**
 * Source records ranked by their best path (a record reached from more of the question's
 * entities ranks higher: × (0.5 + 0.5 × share of them reached)), each with its best paths.
 */
export function rankSources(paths: Walked[], questionEntities: number): Array<{ id: string; score: number; paths: EvidencePath[] }> {
  const bySource = new Map<string, { paths: EvidencePath[]; reached: Set<string> }>();
  for (const w of paths) {
    const last = w.edges[w.edges.length - 1]!;
    for (const sourceId of last.sources) {
      const entry = bySource.get(sourceId) ?? { paths: [], reached: new Set<string>() };
      entry.reached.add(w.seed.matched);
      entry.paths.push({
        from: { entityId: w.seed.entityId, recordId: w.seed.recordId, name: w.seed.name, matched: w.seed.matched },
        edges: w.edges.map(edgeOf),
        sourceId,
        score: w.score,
      });
      bySource.set(sourceId, entry);
    }
  }
  const total = Math.max(1, questionEntities);
  return [...bySource.entries()].map(([id, { paths: list, reached }]) => {
    list.sort(byPathRank);
    const factor = questionEntities > 1 ? 0.5 + (0.5 * Math.min(reached.size, total)) / total : 1;
    return { id, score: Math.round(list[0]!.score * factor * 1e4) / 1e4, paths: list.slice(0, PATHS_PER_RECORD) };
  });
}

// ---- the pipeline's graph -----------------------------------------------------------------

/** The spec's entities and relations steps (by step type), if any. */
export function graphSteps(spec: PipelineSpec): { entities: string[]; relations: string[] } {
  const ofType = (type: string) => spec.steps.filter((s) => (s.type as string) === type).map((s) => s.name);
  return { entities: ofType("entities"), relations: ofType("relations") };
}

export function hasGraph(spec: PipelineSpec): boolean {
  const g = graphSteps(spec);
  return g.entities.length > 0 && g.relations.length > 0;
}

function requireGraph(spec: PipelineSpec): { entities: string[]; relations: string[] } {
  const g = graphSteps(spec);
  const steps = spec.steps.map((s) => `${s.name} (${s.type})`).join(", ") || "none";
  if (!g.entities.length) {
    throw badRequest(
      `Graph search needs an "entities" step, and this pipeline has none (steps: ${steps}). Add an entities step and a relations step (the synapsis template has both), or search with mode "hybrid".`,
    );
  }
  if (!g.relations.length) {
    throw badRequest(`Graph search walks beliefs of a "relations" step, and this pipeline has none (steps: ${steps}). Add a relations step over "${g.entities[0]}", or search with mode "hybrid".`);
  }
  return g;
}

const turnList = (v: unknown): number[] | null => {
  const list = parseJson<unknown>(v);
  return Array.isArray(list) && list.length && list.every((t) => typeof t === "number") ? (list as number[]) : null;
};

/**
 * How well a record of the searched steps stands for a cited source: 1 for the source itself or
 * a window centred on its turn(s), less the further the turns sit from the window's centre.
 */
export function centrality(sourceTurns: number[] | null, turns: number[] | null): number {
  if (!sourceTurns || !turns || turns.length <= sourceTurns.length) return 1;
  const mid = (xs: number[]) => (Math.min(...xs) + Math.max(...xs)) / 2;
  const off = Math.abs(mid(turns) - mid(sourceTurns)) / Math.max(1, (Math.max(...turns) - Math.min(...turns)) / 2);
  return Math.round((1 - 0.1 * Math.min(1, off)) * 1e4) / 1e4;
}

/**
 * The graph list for a question: its entities, one- and two-hop paths over the beliefs, and the
 * records of the searched `steps` standing for the sources they cite (the source itself, the turn
 * windows around it, or records derived from it) that the branch shows and the filters keep, best
 * first, at most `n`. Graph steps themselves (entities, relations, insights) are never in the
 * list: their records are the path, not the evidence.
 */
export async function graphRetrieve(
  db: Db,
  ctx: BranchContext,
  args: { question: string; steps: string[]; filters: RecordFilters; n: number; hops?: 1 | 2 },
): Promise<GraphRetrieval> {
  const g = requireGraph(ctx.spec);
  const where = { workspaceId: ctx.workspaceId, branchId: ctx.branchId, scope: args.filters.scope };
  const tokens = questionTokens(args.question);
  const rows: EntityRow[] = await entitiesNamed(db, { ...where, steps: g.entities, phrases: questionPhrases(tokens), cap: ENTITY_CAP });
  const known = rows.flatMap((r) => {
    const e = parseEntity(r.entity);
    return e ? [{ ...e, recordId: r.recordId, scope: r.scope }] : [];
  });
  const matches = matchEntities(tokens, known);
  const entities: QuestionEntity[] = matches.map((m) => ({ entityId: m.entity.id, recordId: m.entity.recordId, name: m.entity.name, type: m.entity.type, scope: m.entity.scope, matched: m.matched }));
  const unknownNames = nameCandidates(tokens, matches);
  if (!entities.length) return { entities, unknownNames, candidates: [], beliefsRead: 0 };

  const scoring = pathScoring(
    args.question,
    [...new Set(entities.map((e) => e.matched))],
    entities.map((e) => e.entityId),
  );
  const parse = (list: BeliefRow[]) => list.flatMap((r) => parseBelief(r.recordId, r.belief) ?? []);
  const hop1Beliefs = parse(await beliefsTouching(db, { ...where, steps: g.relations, entityIds: [...new Set(entities.map((e) => e.entityId))], exclude: [], cap: HOP1_CAP }));
  const hop1 = firstHop(entities, hop1Beliefs, scoring);
  let hop2: Walked[] = [];
  let read = hop1Beliefs.length;
  if ((args.hops ?? 2) === 2) {
    const front = frontier(hop1, entities);
    if (front.size) {
      const more = parse(await beliefsTouching(db, { ...where, steps: g.relations, entityIds: [...front.keys()], exclude: hop1Beliefs.map((b) => b.recordId), cap: HOP2_CAP }));
      read += more.length;
      hop2 = secondHop(front, more, entities, scoring);
    }
  }
  const ranked = rankSources([...hop1, ...hop2], new Set(entities.map((e) => e.matched)).size);
  const graphOnly = new Set(ctx.spec.steps.filter((s) => GRAPH_STEP_TYPES.includes(s.type as string)).map((s) => s.name));
  // The best-ranked sources are enough to fill the list (a source stands for a few records at most).
  // Every source tied with the last one kept is kept too: which of equal sources made the cut must
  // not depend on their (random) ids; the records standing for them are ordered by content below.
  ranked.sort((a, b) => b.score - a.score);
  const cut = Math.max(args.n * 4, 100);
  const top = ranked.filter((r, i) => i < cut || r.score === ranked[cut - 1]!.score);
  const shown = await graphSourceRows(db, {
    workspaceId: ctx.workspaceId,
    branchId: ctx.branchId,
    ids: top.map((r) => r.id),
    steps: args.steps.filter((s) => !graphOnly.has(s)),
    filters: args.filters,
  });
  const bySource = new Map(top.map((r) => [r.id, r]));
  const byRecord = new Map<string, GraphCandidate>();
  for (const row of shown) {
    const source = bySource.get(row.sourceId)!;
    const score = Math.round(source.score * centrality(turnList(row.sourceTurns), turnList(row.turns)) * 1e4) / 1e4;
    const cur = byRecord.get(row.id);
    if (!cur) byRecord.set(row.id, { id: row.id, step: row.step, time: row.time, key: row.key, score, paths: source.paths });
    else {
      cur.score = Math.max(cur.score, score);
      cur.paths = [...cur.paths, ...source.paths].sort(byPathRank).slice(0, PATHS_PER_RECORD);
    }
  }
  const candidates = [...byRecord.values()].sort((a, b) => b.score - a.score || (b.time ?? "").localeCompare(a.time ?? "") || byTieKey(a, b)).slice(0, args.n);
  return { entities, unknownNames, candidates, beliefsRead: read };
}
