/**
 * The copies of purged text outside the records (issue 30): rows that quote a record's content
 * without pointing at it through provenance. `countCopies` is the dry run; `purgeCopies` removes
 * exactly what it counts, in the purge's transaction.
 *
 * - Idempotency answers: a kept answer may quote anything the request read, and which request read
 *   what is not recorded, so every answer kept for the workspace's callers is replaced by a
 *   tombstone (410: the request was carried out, its answer is gone; it is never run again), the
 *   answers still being written included. Purge answers stay (they hold ids and counts).
 * - Eval cases: a retrieved record that is purged keeps its id, rank and scores, its preview is
 *   replaced, and the case's answer (written from that context) too; the run's judge samples go.
 *   A case whose question came from purged data — its gold evidence (the records picked as the
 *   answer, or their source conversations) is purged, or it was labelled from a logged query the
 *   purge deletes — keeps its row, ids and scores (the run's metrics stay as they were), and its
 *   question, expected answer and answer are replaced.
 * - Run failures of the pipeline about a purged record (its id is the input key) or about a scope
 *   a purged record was in (fold, aggregate and graph steps read the whole scope): error and raw
 *   response are replaced; the failure is still counted.
 * - Webhook deliveries of the pipeline for a purged record or the purged scope: deleted, pending
 *   ones included (a queued payload must not leave after the purge).
 * - Team question sets: a question loses the purged records it was answered by, and goes when none
 *   is left (it was about purged data; an eval could not score it). A question labelled from a
 *   logged query the purge deletes (its text is that query) goes.
 */
import type { DbTx } from "../core/db";
import { toJsonColumn } from "../core/json";
import { likeEscape } from "./record-sql";

/** What a purge removes besides the records, per kind (rows). */
export interface PurgeCopies {
  /** Idempotency-Key answers replaced by a 410 tombstone. */
  idempotencyResponses: number;
  /** Eval cases whose retrieved previews and answer, or whose question, expected answer and answer, are replaced. */
  evalCases: number;
  /** Run failures whose error and raw model response are replaced. */
  runFailures: number;
  /** Webhook deliveries (pending or sent) deleted. */
  webhookDeliveries: number;
  /** Questions of team question sets that pointed at a purged record (the ids go; a question left with none goes). */
  questions: number;
}

export interface CopiesTarget {
  workspaceId: string;
  pipelineId: string;
  /** Every purged record id. */
  ids: string[];
  /** The scopes of the purged records. */
  scopes: string[];
  /** A scope purge's prefix (normalized), else null. */
  scope: string | null;
}

/** What replaces purged text in eval cases and run failures. */
export const PURGED_TEXT = "(removed by a purge)";
const PURGED_STATUS = 410;

const count = async (db: DbTx, sql: string, ...params: unknown[]) =>
  Number((await db.$queryRawUnsafe<Array<{ n: number }>>(sql, ...params))[0]?.n ?? 0);

// A purge's own answer (ids, counts, scope names: no content) is kept, so a retried purge replays it.
const idempotencyWhere = `k.status IS DISTINCT FROM ${PURGED_STATUS} AND k.path NOT LIKE '%/purge'
  AND (k."workspaceId" = $1 OR (k."workspaceId" = '' AND k.actor IN (SELECT 'user:' || m."userId" FROM "Membership" m WHERE m."workspaceId" = $1)))`;

const evalCaseWhere = `c."workspaceId" = $1 AND jsonb_typeof(c.retrieved) = 'array'
  AND EXISTS (SELECT 1 FROM jsonb_array_elements(c.retrieved) h WHERE h->>'id' = ANY($2::text[]) AND h->>'preview' IS DISTINCT FROM $3)`;

// The logged queries the purge deletes (store/query-log.ts purgeQueryLog: naming a purged record or
// in the purged scope) that a person labelled, i.e. added to a question set as a question. The
// placeholders of the workspace, the purged ids, the pipeline, the scope prefix (or null) and its LIKE pattern.
const purgedLabelWhere = (ws: string, ids: string, pipeline: string, scope: string, under: string) =>
  `e."workspaceId" = ${ws} AND e."pipelineId" = ${pipeline} AND e."labelRecordId" IS NOT NULL
   AND (e."recordIds" && ${ids}::text[] OR e."labelRecordId" = ANY(${ids}::text[]) OR (${scope}::text IS NOT NULL AND (e.scope = ${scope} OR e.scope LIKE ${under})))`;
/** A logged query as the question it became (question sets keep it trimmed). */
const loggedQuestion = `btrim(e.query, E' \\t\\n\\r')`;

// A case whose question came from purged data: its gold evidence (picked records, their source
// conversations) names a purged record, or its question is a purged labelled query with that label
// among its evidence. Benchmark cases name benchmark turn ids, never record ids.
const evalQuestionWhere = `c."workspaceId" = $1 AND c.question IS DISTINCT FROM $3
  AND (jsonb_exists_any(c.evidence->'turns', $2::text[])
       OR jsonb_exists_any(c.evidence->'sessions', $2::text[])
       OR EXISTS (SELECT 1 FROM "EvalRun" r JOIN "QueryLogEntry" e ON lower(${loggedQuestion}) = lower(c.question) AND ${purgedLabelWhere("$1", "$2", "$4", "$5", "$6")}
                  WHERE r.id = c."evalRunId" AND r."workspaceId" = $1 AND r."pipelineId" = $4 AND jsonb_exists(c.evidence->'turns', e."labelRecordId")))`;

// The input key of a failure: a record id (1:1, split, consolidate), "id:<record>" (merge), a scope
// (fold, graph steps) or "<scope>\x1f<group>" (aggregate).
const failureWhere = `f."workspaceId" = $1 AND f."runId" IN (SELECT r.id FROM "Run" r WHERE r."pipelineId" = $2 AND r."workspaceId" = $1)
  AND (f."rawResponse" IS NOT NULL OR f.error <> $3)
  AND (f."inputKey" = ANY($4::text[])
       OR (f."inputKey" LIKE 'id:%' AND substr(f."inputKey", 4) = ANY($4::text[]))
       OR split_part(f."inputKey", chr(31), 1) = ANY($5::text[])
       OR ($6::text IS NOT NULL AND split_part(f."inputKey", chr(31), 1) LIKE $7))`;

const webhookWhere = `d."workspaceId" = $1 AND d."pipelineId" = $2
  AND (d.payload->>'recordId' = ANY($3::text[]) OR ($4::text IS NOT NULL AND (d.payload->>'scope' = $4 OR d.payload->>'scope' LIKE $5)))`;

function params(t: CopiesTarget) {
  const under = t.scope === null ? null : `${likeEscape(t.scope)}:%`;
  const scopes = [...new Set([...t.scopes, ...(t.scope === null ? [] : [t.scope])])];
  return {
    failures: [t.workspaceId, t.pipelineId, PURGED_TEXT, t.ids, scopes, t.scope, under],
    webhooks: [t.workspaceId, t.pipelineId, t.ids, t.scope, under],
    questions: [t.workspaceId, t.ids, PURGED_TEXT, t.pipelineId, t.scope, under],
  };
}

/** The copies a purge of `t` removes (read only). */
export async function countCopies(db: DbTx, t: CopiesTarget): Promise<PurgeCopies> {
  const p = params(t);
  return {
    idempotencyResponses: await count(db, `SELECT count(*)::int AS n FROM "IdempotencyKey" k WHERE ${idempotencyWhere}`, t.workspaceId),
    evalCases: await count(db, `SELECT count(*)::int AS n FROM "EvalCase" c WHERE (${evalCaseWhere}) OR (${evalQuestionWhere})`, ...p.questions),
    runFailures: await count(db, `SELECT count(*)::int AS n FROM "RunFailure" f WHERE ${failureWhere}`, ...p.failures),
    webhookDeliveries: await count(db, `SELECT count(*)::int AS n FROM "WebhookDelivery" d WHERE ${webhookWhere}`, ...p.webhooks),
    questions: await questionSets(db, t, false),
  };
}

/** The purged labelled queries: each as a question (lowercased) and its label record. */
async function purgedLabels(db: DbTx, t: CopiesTarget): Promise<Set<string>> {
  const rows = await db.$queryRawUnsafe<Array<{ question: string; recordId: string }>>(
    `SELECT DISTINCT ${loggedQuestion} AS question, e."labelRecordId" AS "recordId" FROM "QueryLogEntry" e WHERE ${purgedLabelWhere("$1", "$2", "$3", "$4", "$5")}`,
    t.workspaceId,
    t.ids,
    t.pipelineId,
    t.scope,
    t.scope === null ? null : `${likeEscape(t.scope)}:%`,
  );
  return new Set(rows.map((r) => labelKey(r.question, r.recordId)));
}

const labelKey = (question: string, recordId: string) => `${question.trim().toLowerCase()}\x1f${recordId}`;

type StoredQuestion = { pipelineId?: unknown; question?: unknown; recordIds?: unknown; sources?: unknown };
const idList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** Questions of the workspace's team question sets that point at a purged record; `apply` rewrites the sets. */
async function questionSets(db: DbTx, t: CopiesTarget, apply: boolean): Promise<number> {
  const ids = new Set(t.ids);
  const labels = await purgedLabels(db, t);
  const labelled = (question: unknown, recordIds: string[]) => typeof question === "string" && recordIds.some((id) => labels.has(labelKey(question, id)));
  let touched = 0;
  const sets = await db.evalQuestionSet.findMany({ where: { workspaceId: t.workspaceId, datasetId: null }, select: { id: true, questions: true } });
  for (const set of sets) {
    if (!Array.isArray(set.questions)) continue;
    const questions = set.questions as StoredQuestion[];
    const kept: StoredQuestion[] = [];
    let changed = false;
    for (const q of questions) {
      const recordIds = idList(q.recordIds);
      const fromLog = q.pipelineId === t.pipelineId && labelled(q.question, recordIds);
      if (q.pipelineId !== t.pipelineId || (!fromLog && !recordIds.some((id) => ids.has(id)))) {
        kept.push(q);
        continue;
      }
      changed = true;
      touched++;
      // A question that is a purged logged query goes with it.
      const left = fromLog ? [] : recordIds.filter((id) => !ids.has(id));
      if (left.length) kept.push({ ...q, recordIds: left, sources: idList(q.sources).filter((id) => !ids.has(id)) });
    }
    if (apply && changed) await db.evalQuestionSet.update({ where: { id: set.id }, data: { questions: toJsonColumn(kept) } });
  }
  return touched;
}

/**
 * Removes the copies `countCopies` counts (call it in the purge's transaction). `tombstone` is the
 * body an Idempotency-Key replay gets from now on (status 410).
 */
export async function purgeCopies(db: DbTx, t: CopiesTarget, tombstone: string): Promise<void> {
  const p = params(t);
  await db.$executeRawUnsafe(`UPDATE "IdempotencyKey" k SET status = ${PURGED_STATUS}, response = $2 WHERE ${idempotencyWhere}`, t.workspaceId, tombstone);
  const cases = await db.$queryRawUnsafe<Array<{ evalRunId: string }>>(
    `UPDATE "EvalCase" c SET answer = $3,
       retrieved = (SELECT jsonb_agg(CASE WHEN h->>'id' = ANY($2::text[]) THEN h || jsonb_build_object('preview', $3::text) ELSE h END ORDER BY o)
                    FROM jsonb_array_elements(c.retrieved) WITH ORDINALITY AS x(h, o))
     WHERE ${evalCaseWhere} RETURNING c."evalRunId"`,
    t.workspaceId,
    t.ids,
    PURGED_TEXT,
  );
  // Cases whose question came from purged data: question, expected answer and answer (empty ones stay empty).
  const asked = await db.$queryRawUnsafe<Array<{ evalRunId: string }>>(
    `UPDATE "EvalCase" c SET question = $3::text,
       gold = CASE WHEN c.gold = '' THEN '' ELSE $3::text END,
       answer = CASE WHEN c.answer = '' THEN '' ELSE $3::text END
     WHERE ${evalQuestionWhere} RETURNING c."evalRunId"`,
    ...p.questions,
  );
  // A judge's sample replies may quote the questions, expected answers and answers they graded.
  const runs = [...new Set([...cases, ...asked].map((c) => c.evalRunId))];
  if (runs.length) await db.$executeRawUnsafe(`UPDATE "EvalRun" SET judge = judge - 'samples' WHERE id = ANY($1::text[]) AND "workspaceId" = $2`, runs, t.workspaceId);
  await db.$executeRawUnsafe(`UPDATE "RunFailure" f SET error = $3, "rawResponse" = NULL WHERE ${failureWhere}`, ...p.failures);
  await db.$executeRawUnsafe(`DELETE FROM "WebhookDelivery" d WHERE ${webhookWhere}`, ...p.webhooks);
  await questionSets(db, t, true);
}
