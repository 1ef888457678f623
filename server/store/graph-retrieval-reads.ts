/**
 * The reads graph retrieval makes (server/search/graph-retrieval.ts): the entity records a
 * question names, the belief records touching a set of entities, and the branch's view of the
 * source records those beliefs point to. Entities and beliefs are ordinary records of the
 * `entities` / `relations` steps (structured data under `metadata.custom.entity` / `.belief`),
 * read through the branch's pointers and the scope. Every read is workspace-filtered.
 */
import type { Db } from "../core/db";
import { filterConditions, onBranch, Params, tieKey, trace, type RecordFilters } from "./record-sql";
import { TIME_EXPR } from "./search-reads";

interface GraphWhere {
  workspaceId: string;
  branchId: string;
  /** The entities (or relations) steps. */
  steps: string[];
  scope?: string;
}

/** Lower-case, non-alphanumerics collapsed to one space: the form names are compared in (SQL and TypeScript agree). */
const NORMALIZED = (expr: string) => `btrim(regexp_replace(lower(${expr}), '[^[:alnum:]]+', ' ', 'g'))`;

function pointed(p: Params, where: GraphWhere): string {
  return [
    `bp."branchId" = ${p.add(where.branchId)}`,
    `bp.step = ANY(${p.add(where.steps, "text[]")})`,
    `r."workspaceId" = ${p.add(where.workspaceId)}`,
    ...filterConditions(p, { scope: where.scope }),
  ].join(" AND ");
}

export interface EntityRow {
  recordId: string;
  scope: string;
  entity: unknown;
}

/**
 * Entity records whose canonical name or an alias, normalized, is one of `phrases` (already
 * normalized: the question's word n-grams). At most `cap` rows, by content key (ids are random).
 */
export async function entitiesNamed(db: Db, where: GraphWhere & { phrases: string[]; cap: number }): Promise<EntityRow[]> {
  if (where.phrases.length === 0 || where.steps.length === 0) return [];
  const p = new Params();
  const cond = pointed(p, where);
  const phrases = p.add(where.phrases, "text[]");
  const aliases = `CASE WHEN jsonb_typeof(r.metadata #> '{custom,entity,aliases}') = 'array' THEN r.metadata #> '{custom,entity,aliases}' ELSE '[]'::jsonb END`;
  const sql = `SELECT r.id AS "recordId", r.scope, r.metadata #> '{custom,entity}' AS entity
     FROM "BranchPointer" bp JOIN "Record" r ON r.id = bp."recordId"
     WHERE ${cond} AND jsonb_typeof(r.metadata #> '{custom,entity}') = 'object'
       AND (${NORMALIZED(`r.metadata #>> '{custom,entity,name}'`)} = ANY(${phrases})
            OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(${aliases}) a WHERE ${NORMALIZED("a")} = ANY(${phrases})))
     ORDER BY ${tieKey()} LIMIT ${p.add(where.cap, "int")}`;
  return db.$queryRawUnsafe<EntityRow[]>(trace("graph-entities", sql, p.values), ...p.values);
}

export interface BeliefRow {
  recordId: string;
  scope: string;
  belief: unknown;
}

/**
 * Belief records whose subject or object entity is one of `entityIds` (minus `exclude`, the
 * beliefs already read), current ones first, then the newest, then by content key (ids are random);
 * at most `cap`.
 */
export async function beliefsTouching(db: Db, where: GraphWhere & { entityIds: string[]; exclude: string[]; cap: number }): Promise<BeliefRow[]> {
  if (where.entityIds.length === 0 || where.steps.length === 0) return [];
  const p = new Params();
  const cond = pointed(p, where);
  const ids = p.add(where.entityIds, "text[]");
  const exclude = where.exclude.length ? `AND NOT (r.id = ANY(${p.add(where.exclude, "text[]")}))` : "";
  const sql = `SELECT r.id AS "recordId", r.scope, r.metadata #> '{custom,belief}' AS belief
     FROM "BranchPointer" bp JOIN "Record" r ON r.id = bp."recordId"
     WHERE ${cond} ${exclude}
       AND (r.metadata #>> '{custom,belief,subject}' = ANY(${ids}) OR r.metadata #>> '{custom,belief,objectEntity}' = ANY(${ids}))
     ORDER BY (r.metadata #>> '{custom,belief,status}' = 'superseded'), r.metadata #>> '{custom,belief,validFrom}' DESC NULLS LAST, ${tieKey()}
     LIMIT ${p.add(where.cap, "int")}`;
  return db.$queryRawUnsafe<BeliefRow[]>(trace("graph-beliefs", sql, p.values), ...p.values);
}

export interface GraphSourceRow {
  /** The record a belief cites. */
  sourceId: string;
  /** A record of the searched steps standing for it: the source itself, a sibling that holds its turns (a turn window of the same conversation), or a record derived from it. */
  id: string;
  step: string;
  time: string | null;
  /** Tie-break of equal scores (see tieKey). */
  key: string;
  /** `metadata.custom.turns` of the source and of the record (turn numbers), when they have them. */
  sourceTurns: unknown;
  turns: unknown;
}

/**
 * What the records beliefs cite (`ids`) are in the searched `steps`, as the branch shows them and
 * the filters keep: each source itself when its step is searched, the sibling records (same
 * parent) whose turn numbers include all of its turns — the windows around a cited turn — and the
 * records derived from it directly.
 */
export async function graphSourceRows(db: Db, args: { workspaceId: string; branchId: string; ids: string[]; steps: string[]; filters: RecordFilters }): Promise<GraphSourceRow[]> {
  if (args.ids.length === 0 || args.steps.length === 0) return [];
  const p = new Params();
  const ids = p.add(args.ids, "text[]");
  const ws = p.add(args.workspaceId);
  const where = [`r."workspaceId" = ${ws}`, `r.step = ANY(${p.add(args.steps, "text[]")})`, onBranch(p, args.branchId, args.steps), ...filterConditions(p, args.filters)];
  const sql = `WITH src AS MATERIALIZED (
       SELECT s.id, s.metadata #> '{custom,turns}' AS turns FROM "Record" s WHERE s.id = ANY(${ids}) AND s."workspaceId" = ${ws}),
     mapped AS (
       SELECT s.id AS "sourceId", s.id AS id, s.turns AS "sourceTurns" FROM src s
       UNION
       SELECT s.id, sib."childId", s.turns FROM src s
         JOIN "RecordEdge" up ON up."childId" = s.id AND up."workspaceId" = ${ws}
         JOIN "RecordEdge" sib ON sib."parentId" = up."parentId" AND sib."workspaceId" = ${ws} AND sib."childId" <> s.id
         JOIN "Record" w ON w.id = sib."childId"
         WHERE jsonb_typeof(s.turns) = 'array' AND jsonb_array_length(s.turns) > 0 AND jsonb_typeof(w.metadata #> '{custom,turns}') = 'array'
           AND (w.metadata #> '{custom,turns}') @> s.turns
       UNION
       SELECT s.id, down."childId", s.turns FROM src s JOIN "RecordEdge" down ON down."parentId" = s.id AND down."workspaceId" = ${ws})
     SELECT m."sourceId", r.id, r.step, ${TIME_EXPR} AS time, ${tieKey()} AS key, m."sourceTurns", r.metadata #> '{custom,turns}' AS turns
     FROM mapped m JOIN "Record" r ON r.id = m.id
     WHERE ${where.join(" AND ")}`;
  return db.$queryRawUnsafe<GraphSourceRow[]>(trace("graph-sources", sql, p.values), ...p.values);
}
