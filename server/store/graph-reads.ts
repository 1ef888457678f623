/**
 * The SQL of the entity graph's views (server/services/graph.ts): entities, beliefs and insights
 * are ordinary records of `entities`, `relations` and `insights` steps, read through a branch's
 * pointers with their structured data under `metadata.custom.entity|belief|insight` (see
 * notes/synapsis-contract). Every read is filtered by the workspace and the branch; the service
 * validates and shapes the JSON.
 */
import type { Db } from "../core/db";
import { filterConditions, likeEscape, Params, parseJson } from "./record-sql";

/** Which branch and steps a read covers, and an optional scope prefix. */
export interface GraphTarget {
  workspaceId: string;
  branchId: string;
  steps: string[];
  scope?: string;
}

export interface GraphRecordRow<T = unknown> {
  recordId: string;
  step: string;
  scope: string;
  content: string;
  data: T;
  createdAt: Date;
}

type RawRow = { recordId: string; step: string; scope: string; content: string; data: unknown; createdAt: Date; total?: number };

const toRow = (r: RawRow): GraphRecordRow => ({
  recordId: r.recordId,
  step: r.step,
  scope: r.scope,
  content: r.content,
  data: parseJson(r.data),
  createdAt: new Date(r.createdAt),
});

/** FROM/WHERE of records the branch shows for the target's steps that carry `custom.<key>`. */
function shown(p: Params, t: GraphTarget, key: "entity" | "belief" | "insight"): string {
  return `FROM "BranchPointer" bp JOIN "Record" r ON r.id = bp."recordId"
     WHERE bp."branchId" = ${p.add(t.branchId)} AND bp.step = ANY(${p.add(t.steps, "text[]")}) AND r."workspaceId" = ${p.add(t.workspaceId)}
       AND r.metadata #> '{custom,${key}}' IS NOT NULL
       ${filterConditions(p, { scope: t.scope })
         .map((c) => `AND ${c}`)
         .join(" ")}`;
}

const COLUMNS = (key: string) => `r.id AS "recordId", r.step, r.scope, r.content, r.metadata #> '{custom,${key}}' AS data, r."createdAt"`;
const ENTITY = (field: string) => `r.metadata #>> '{custom,entity,${field}}'`;
const BELIEF = (field: string) => `r.metadata #>> '{custom,belief,${field}}'`;
/** How many sources a belief stands for: a co-mention edge's `count`, else one. */
const WEIGHT = `CASE WHEN jsonb_typeof(r.metadata #> '{custom,belief,count}') = 'number' THEN (${BELIEF("count")})::numeric ELSE 1 END`;

/**
 * Entities, best first: with `q`, the ones whose name or an alias contains it (exact name, then
 * name prefix, then the rest), most mentioned first; with `ids`, exactly those. `total` counts
 * every match before the limit.
 */
export async function entityRows(db: Db, t: GraphTarget, args: { q?: string; ids?: string[]; limit: number }): Promise<{ rows: GraphRecordRow[]; total: number }> {
  const p = new Params();
  const where = [shown(p, t, "entity")];
  let rank = "";
  const q = args.q?.trim().toLowerCase();
  if (q) {
    const contains = p.add(`%${likeEscape(q)}%`);
    const aliases = `CASE WHEN jsonb_typeof(r.metadata #> '{custom,entity,aliases}') = 'array' THEN r.metadata #> '{custom,entity,aliases}' ELSE '[]'::jsonb END`;
    where.push(`AND (lower(${ENTITY("name")}) LIKE ${contains} OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(${aliases}) a WHERE lower(a) LIKE ${contains}))`);
    rank = `(lower(${ENTITY("name")}) = ${p.add(q)}) DESC, (lower(${ENTITY("name")}) LIKE ${p.add(`${likeEscape(q)}%`)}) DESC,`;
  }
  if (args.ids) where.push(`AND ${ENTITY("id")} = ANY(${p.add(args.ids, "text[]")})`);
  const rows = await db.$queryRawUnsafe<RawRow[]>(
    `SELECT ${COLUMNS("entity")}, count(*) OVER ()::int AS total ${where.join(" ")}
     ORDER BY ${rank} (CASE WHEN jsonb_typeof(r.metadata #> '{custom,entity,mentions}') = 'number' THEN (${ENTITY("mentions")})::numeric END) DESC NULLS LAST,
              ${ENTITY("name")}, r.id
     LIMIT ${p.add(args.limit, "int")}`,
    ...p.values,
  );
  return { rows: rows.map(toRow), total: rows[0]?.total ?? 0 };
}

/**
 * The entities linked to `ids` by a belief (either direction), other than `exclude`, ranked by how
 * many sources link them (a co-mention edge counts its sources), then by typed beliefs.
 */
export async function neighbourCounts(
  db: Db,
  t: GraphTarget,
  args: { ids: string[]; exclude: string[]; limit: number },
): Promise<Array<{ entityId: string; weight: number; typed: number }>> {
  const p = new Params();
  const ids = p.add(args.ids, "text[]");
  const rows = await db.$queryRawUnsafe<Array<{ other: string; weight: number; typed: number }>>(
    `WITH linked AS (
       SELECT CASE WHEN ${BELIEF("subject")} = ANY(${ids}) THEN ${BELIEF("objectEntity")} ELSE ${BELIEF("subject")} END AS other,
              ${BELIEF("predicate")} AS predicate, ${WEIGHT} AS weight
       ${shown(p, t, "belief")}
         AND ${BELIEF("objectEntity")} IS NOT NULL
         AND (${BELIEF("subject")} = ANY(${ids}) OR ${BELIEF("objectEntity")} = ANY(${ids})))
     SELECT other, sum(weight)::float8 AS weight, count(*) FILTER (WHERE predicate <> 'mentioned with')::int AS typed
     FROM linked WHERE other IS NOT NULL AND NOT (other = ANY(${p.add(args.exclude, "text[]")}))
     GROUP BY other ORDER BY 2 DESC, 3 DESC, other LIMIT ${p.add(args.limit, "int")}`,
    ...p.values,
  );
  return rows.map((r) => ({ entityId: r.other, weight: Number(r.weight), typed: r.typed }));
}

/** One edge of the drawn graph: the beliefs of one (subject, predicate, object entity). */
export interface EdgeAggregateRow {
  subject: string;
  objectEntity: string;
  predicate: string;
  count: number;
  current: number;
  /** Sources behind it (co-mention edges count theirs; other beliefs one each). */
  weight: number;
  /** Up to `perEdge` belief ids, newest valid time first. */
  beliefIds: string[];
}

/** The beliefs between entities of `ids` (both ends in the set), grouped into edges. */
export async function edgeAggregates(db: Db, t: GraphTarget, args: { ids: string[]; perEdge: number; limit: number }): Promise<EdgeAggregateRow[]> {
  const p = new Params();
  const ids = p.add(args.ids, "text[]");
  const rows = await db.$queryRawUnsafe<EdgeAggregateRow[]>(
    `SELECT ${BELIEF("subject")} AS subject, ${BELIEF("objectEntity")} AS "objectEntity", ${BELIEF("predicate")} AS predicate,
            count(*)::int AS count, count(*) FILTER (WHERE ${BELIEF("status")} = 'current')::int AS current, sum(${WEIGHT})::float8 AS weight,
            (array_agg(${BELIEF("id")} ORDER BY ${BELIEF("validFrom")} DESC NULLS LAST, r.id))[1:${p.add(args.perEdge, "int")}] AS "beliefIds"
     ${shown(p, t, "belief")}
       AND ${BELIEF("subject")} = ANY(${ids}) AND ${BELIEF("objectEntity")} = ANY(${ids}) AND ${BELIEF("subject")} <> ${BELIEF("objectEntity")}
     GROUP BY 1, 2, 3 ORDER BY weight DESC, 1, 2, 3 LIMIT ${p.add(args.limit, "int")}`,
    ...p.values,
  );
  return rows.map((r) => ({ ...r, weight: Number(r.weight) }));
}

/**
 * Beliefs, in valid-time order (oldest first, unknown times last): those with these `ids`, or
 * those whose subject is `subject` (optionally only those without an object entity, or leaving out
 * co-mentions). `total` counts every match before the limit.
 */
export async function beliefRows(
  db: Db,
  t: GraphTarget,
  args: { ids?: string[]; subject?: string; literalOnly?: boolean; skipCoMentions?: boolean; limit: number },
): Promise<{ rows: GraphRecordRow[]; total: number }> {
  const p = new Params();
  const where = [shown(p, t, "belief")];
  if (args.ids) where.push(`AND ${BELIEF("id")} = ANY(${p.add(args.ids, "text[]")})`);
  if (args.subject) where.push(`AND ${BELIEF("subject")} = ${p.add(args.subject)}`);
  if (args.literalOnly) where.push(`AND ${BELIEF("objectEntity")} IS NULL`);
  if (args.skipCoMentions) where.push(`AND ${BELIEF("predicate")} <> 'mentioned with'`);
  const rows = await db.$queryRawUnsafe<RawRow[]>(
    `SELECT ${COLUMNS("belief")}, count(*) OVER ()::int AS total ${where.join(" ")}
     ORDER BY ${BELIEF("validFrom")} NULLS LAST, ${BELIEF("learnedAt")} NULLS LAST, r.id
     LIMIT ${p.add(args.limit, "int")}`,
    ...p.values,
  );
  return { rows: rows.map(toRow), total: rows[0]?.total ?? 0 };
}

/** Insights, newest first (detection time, then creation), optionally of one kind or naming one entity. */
export async function insightRows(
  db: Db,
  t: GraphTarget,
  args: { kind?: string; entity?: string; limit: number },
): Promise<{ rows: GraphRecordRow[]; total: number }> {
  const p = new Params();
  const where = [shown(p, t, "insight")];
  if (args.kind) where.push(`AND r.metadata #>> '{custom,insight,kind}' = ${p.add(args.kind)}`);
  if (args.entity) where.push(`AND r.metadata #> '{custom,insight,entities}' @> jsonb_build_array(${p.add(args.entity)}::text)`);
  const rows = await db.$queryRawUnsafe<RawRow[]>(
    `SELECT ${COLUMNS("insight")}, count(*) OVER ()::int AS total ${where.join(" ")}
     ORDER BY r.metadata #>> '{custom,insight,detectedAt}' DESC NULLS LAST, r."createdAt" DESC, r.id
     LIMIT ${p.add(args.limit, "int")}`,
    ...p.values,
  );
  return { rows: rows.map(toRow), total: rows[0]?.total ?? 0 };
}
