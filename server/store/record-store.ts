/**
 * The engine's RecordStore on Postgres. Plans are set differences in SQL (anti-joins on
 * materialization/work keys); nothing loads a whole step's content into memory.
 */
import type { GroupBy } from "../pipeline/spec";
import type {
  Audit,
  Checkpoint,
  EngineRecord,
  Group,
  NewRecord,
  OrderedRef,
  RecordStore,
  RunFailureInput,
  StepScope,
} from "./types";
import type { Db, DbTx } from "../core/db";
import { tieKey } from "./record-sql";

type Row = Record<string, unknown>;

const RECORD_COLUMNS = `r.id, r.step, r.content, r."contentFingerprint", r.scope, r.metadata, r."createdAt"`;

function toRecord(row: Row): EngineRecord {
  return {
    id: row.id as string,
    step: row.step as string,
    content: row.content as string,
    contentFingerprint: row.contentFingerprint as string,
    scope: row.scope as string,
    metadata: (typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata) as Record<string, unknown>,
    createdAt: new Date(row.createdAt as string | Date),
  };
}

const metaPath = (path: string) => `{${path.split(".").map((p) => p.replace(/[{},"\\]/g, "")).join(",")}}`;

const PERIOD_FORMATS = { day: "YYYY-MM-DD", week: 'IYYY-"W"IW', month: "YYYY-MM", year: "YYYY" } as const;

/**
 * Within equal times, a split's records in the order they were cut (`metadata.step.index`): the
 * turns of one conversation all carry its time, so without it a tier of 10 observations took ten
 * turns of the session in content-hash order instead of ten consecutive ones. NULL (no index) last.
 */
const SPLIT_INDEX = `CASE WHEN r.metadata #>> '{step,index}' ~ '^[0-9]{1,9}$' THEN (r.metadata #>> '{step,index}')::int END`;

/** SQL expression for the group key of record `r` (params: $1 branch, $2 step, then $3). */
function groupKeyExpr(groupBy: GroupBy, orderKey: string): { expr: string; param: string | number; windowed: boolean } {
  if ("period" in groupBy) {
    const created = `r.metadata #>> '{time,created_at}'`;
    return {
      expr: `CASE WHEN ${created} ~ '^\\d{4}-\\d{2}-\\d{2}' THEN to_char((${created})::timestamptz AT TIME ZONE 'UTC', $3) ELSE 'undated' END`,
      param: PERIOD_FORMATS[groupBy.period],
      windowed: false,
    };
  }
  if ("key" in groupBy) {
    return { expr: `COALESCE(r.metadata #>> $3::text[], '(none)')`, param: metaPath(groupBy.key), windowed: false };
  }
  // Count windows (Pyramid tiers): the n-th block of `every` records in order, per scope.
  return {
    expr: `lpad((((row_number() OVER (PARTITION BY r.scope ORDER BY r.metadata #>> '${metaPath(orderKey)}', ${SPLIT_INDEX}, ${tieKey()})) - 1) / $3)::text, 8, '0')`,
    param: groupBy.every,
    windowed: true,
  };
}

export class PostgresRecordStore implements RecordStore {
  constructor(private readonly db: Db) {}

  private rows(sql: string, ...params: unknown[]): Promise<Row[]> {
    return this.db.$queryRawUnsafe<Row[]>(sql, ...params);
  }

  async missingOneToOne(s: StepScope, upstream: string, page: { afterId?: string; limit: number }) {
    const rows = await this.rows(
      `SELECT ${RECORD_COLUMNS}
       FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
       WHERE p."branchId" = $1 AND p.step = $2 AND ($3::text IS NULL OR p."recordId" > $3)
         AND NOT EXISTS (SELECT 1 FROM "Record" x WHERE x."pipelineId" = $4 AND x."workKey" = $5 || ':' || p."recordId")
       ORDER BY p."recordId" LIMIT $6`,
      s.branchId,
      upstream,
      page.afterId ?? null,
      s.pipelineId,
      s.stepVersionHash,
      page.limit,
    );
    return rows.map(toRecord);
  }

  async countMissingOneToOne(s: StepScope, upstream: string) {
    const [row] = await this.rows(
      `SELECT count(*)::int AS n FROM "BranchPointer" p
       WHERE p."branchId" = $1 AND p.step = $2
         AND NOT EXISTS (SELECT 1 FROM "Record" x WHERE x."pipelineId" = $3 AND x."workKey" = $4 || ':' || p."recordId")`,
      s.branchId,
      upstream,
      s.pipelineId,
      s.stepVersionHash,
    );
    return row!.n as number;
  }

  async inSyncOneToOne(s: StepScope, upstream: string) {
    // Hash joins only: right after a run wrote the step, the planner's statistics can still say the
    // step has no pointers, and the nested loop it then picks reads "Record" once per pointer (at
    // 100k records under load: over 5 minutes instead of under a second).
    const [, rows] = await this.db.$transaction([
      this.db.$executeRawUnsafe(`SET LOCAL enable_nestloop = off`),
      this.db.$queryRawUnsafe<Row[]>(
        `SELECT
           (SELECT count(*)::int FROM "BranchPointer" WHERE "branchId" = $1 AND step = $2) AS up,
           (SELECT count(*)::int FROM "BranchPointer" WHERE "branchId" = $1 AND step = $3) AS mine,
           (SELECT count(*)::int FROM "BranchPointer" q JOIN "Record" x ON x.id = q."recordId"
             WHERE q."branchId" = $1 AND q.step = $3 AND x."workKey" = $4 || ':' || q."groupKey"
               AND EXISTS (SELECT 1 FROM "BranchPointer" p WHERE p."branchId" = $1 AND p.step = $2 AND p."recordId" = q."groupKey")) AS good`,
        s.branchId,
        upstream,
        s.step,
        s.stepVersionHash,
      ),
    ]);
    const row = (rows as Row[])[0]!;
    return row.up === row.mine && row.mine === row.good;
  }

  async reconcileOneToOne(s: StepScope, upstream: string) {
    // Group key: the input id, plus "#i" for the i-th output of a split (the key's suffix).
    const pointed = await this.db.$executeRawUnsafe(
      `INSERT INTO "BranchPointer" ("workspaceId", "branchId", step, "groupKey", "recordId", "updatedAt")
       SELECT $1, $2, $3, p."recordId" || substr(x."materializationKey", length(x."workKey") + 1), x.id, now()
       FROM "BranchPointer" p JOIN "Record" x ON x."pipelineId" = $4 AND x."workKey" = $5 || ':' || p."recordId"
       WHERE p."branchId" = $2 AND p.step = $6
         AND NOT EXISTS (SELECT 1 FROM "BranchPointer" q WHERE q."branchId" = $2 AND q.step = $3 AND q."recordId" = x.id)
       ON CONFLICT ("branchId", step, "groupKey") DO UPDATE SET "recordId" = EXCLUDED."recordId", "updatedAt" = now()`,
      s.workspaceId,
      s.branchId,
      s.step,
      s.pipelineId,
      s.stepVersionHash,
      upstream,
    );
    const removed = await this.db.$executeRawUnsafe(
      `DELETE FROM "BranchPointer" q
       WHERE q."branchId" = $1 AND q.step = $2
         AND NOT EXISTS (
           SELECT 1 FROM "Record" x
           WHERE x.id = q."recordId" AND x."workKey" = $3 || ':' || substr(x."workKey", length($3) + 2)
             AND EXISTS (SELECT 1 FROM "BranchPointer" p
                         WHERE p."branchId" = $1 AND p.step = $4 AND p."recordId" = substr(x."workKey", length($3) + 2)))`,
      s.branchId,
      s.step,
      s.stepVersionHash,
      upstream,
    );
    return { pointed, removed };
  }

  async planGroups(s: StepScope, upstream: string, groupBy: GroupBy, orderKey: string): Promise<Group[]> {
    const g = groupKeyExpr(groupBy, orderKey);
    const rows = await this.rows(
      `WITH members AS (
         SELECT r.scope, ${g.expr} AS gk, r."contentFingerprint" AS fp
         FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
         WHERE p."branchId" = $1 AND p.step = $2)
       SELECT scope, gk, count(*)::int AS size,
              encode(sha256(convert_to(string_agg(fp, E'\\n' ORDER BY fp), 'UTF8')), 'hex') AS fp
       FROM members GROUP BY scope, gk ORDER BY scope, gk`,
      s.branchId,
      upstream,
      g.param,
    );
    return rows.map((r) => ({
      scope: r.scope as string,
      groupKey: r.gk as string,
      size: r.size as number,
      combinedFingerprint: r.fp as string,
    }));
  }

  async groupMembers(s: StepScope, upstream: string, groupBy: GroupBy, orderKey: string, group: Group) {
    const g = groupKeyExpr(groupBy, orderKey);
    const rows = await this.rows(
      `SELECT * FROM (
         SELECT ${RECORD_COLUMNS}, ${g.expr} AS gk, r.metadata #>> $5::text[] AS ok, ${SPLIT_INDEX} AS idx, ${tieKey()} AS tie
         FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
         WHERE p."branchId" = $1 AND p.step = $2 ${g.windowed ? "" : "AND r.scope = $4"}) m
       WHERE m.scope = $4 AND m.gk = $6
       ORDER BY m.ok NULLS FIRST, m.idx, m.tie`,
      s.branchId,
      upstream,
      g.param,
      group.scope,
      metaPath(orderKey),
      group.groupKey,
    );
    return rows.map(toRecord);
  }

  async scopesOf(branchId: string, step: string) {
    const rows = await this.rows(
      `SELECT DISTINCT r.scope FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
       WHERE p."branchId" = $1 AND p.step = $2 ORDER BY 1`,
      branchId,
      step,
    );
    return rows.map((r) => r.scope as string);
  }

  async orderedRefs(branchId: string, step: string, scope: string, orderKey: string): Promise<OrderedRef[]> {
    const rows = await this.rows(
      `SELECT r.id, r."contentFingerprint" FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
       WHERE p."branchId" = $1 AND p.step = $2 AND r.scope = $3
       ORDER BY r.metadata #>> $4::text[] NULLS FIRST, ${SPLIT_INDEX}, ${tieKey()}`,
      branchId,
      step,
      scope,
      metaPath(orderKey),
    );
    return rows.map((r) => ({ id: r.id as string, contentFingerprint: r.contentFingerprint as string }));
  }

  async mergeCandidates(branchId: string, steps: string[], fields: string[]) {
    const fieldSql = fields.length
      ? `ARRAY[${fields.map((_, i) => `COALESCE(r.metadata #>> $${i + 3}::text[], '')`).join(", ")}]`
      : `ARRAY[]::text[]`;
    const rows = await this.rows(
      `SELECT r.id, p.step, r."contentFingerprint", r.metadata #>> '{time,created_at}' AS created, ${fieldSql} AS fields
       FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
       WHERE p."branchId" = $1 AND p.step = ANY($2::text[])`,
      branchId,
      steps,
      ...fields.map(metaPath),
    );
    return rows.map((r) => ({
      id: r.id as string,
      step: r.step as string,
      contentFingerprint: r.contentFingerprint as string,
      createdAt: (r.created as string | null) ?? null,
      fields: (r.fields as string[]) ?? [],
    }));
  }

  async getRecords(ids: string[]) {
    if (ids.length === 0) return [];
    const rows = await this.rows(`SELECT ${RECORD_COLUMNS} FROM "Record" r WHERE r.id = ANY($1::text[])`, ids);
    return rows.map(toRecord);
  }

  async existingKeys(pipelineId: string, keys: string[]) {
    const found = new Map<string, string>();
    for (let i = 0; i < keys.length; i += 5000) {
      const rows = await this.rows(
        `SELECT "materializationKey" AS k, id FROM "Record" WHERE "pipelineId" = $1 AND "materializationKey" = ANY($2::text[])`,
        pipelineId,
        keys.slice(i, i + 5000),
      );
      for (const r of rows) found.set(r.k as string, r.id as string);
    }
    return found;
  }

  async retireStep(pipelineId: string, step: string, stepVersionHash: string) {
    await this.db.$executeRawUnsafe(
      `UPDATE "Record" SET "materializationKey" = "materializationKey" || '~' || id, "workKey" = "workKey" || '~' || id
       WHERE "pipelineId" = $1 AND step = $2 AND "stepVersionHash" = $3 AND position('~' in "workKey") = 0`,
      pipelineId,
      step,
      stepVersionHash,
    );
    await this.db.foldCheckpoint.deleteMany({ where: { pipelineId, step, stepVersionHash } });
  }

  async commit(branchId: string, records: NewRecord[]) {
    await commitRecords(this.db, branchId, records);
  }

  /** The step's pointers become exactly these (and `keep`): one statement, all or nothing, no interactive transaction. */
  async syncPointers(branchId: string, step: string, pointers: Array<{ groupKey: string; recordId: string }>, keep: string[] = []) {
    const branch = await this.db.branch.findUniqueOrThrow({ where: { id: branchId }, select: { workspaceId: true } });
    // The upsert and the delete touch different rows (the delete spares every listed group key).
    await this.db.$executeRawUnsafe(
      `WITH up AS (
         INSERT INTO "BranchPointer" ("workspaceId", "branchId", step, "groupKey", "recordId", "updatedAt")
         SELECT $1, $2, $3, g, r, now() FROM unnest($4::text[], $5::text[]) AS t(g, r)
         ON CONFLICT ("branchId", step, "groupKey") DO UPDATE SET "recordId" = EXCLUDED."recordId", "updatedAt" = now()
         WHERE "BranchPointer"."recordId" <> EXCLUDED."recordId"
         RETURNING 1
       )
       DELETE FROM "BranchPointer" WHERE "branchId" = $2 AND step = $3 AND NOT ("groupKey" = ANY($6::text[]))`,
      branch.workspaceId,
      branchId,
      step,
      pointers.map((p) => p.groupKey),
      pointers.map((p) => p.recordId),
      [...pointers.map((p) => p.groupKey), ...keep],
    );
  }

  async countPointers(branchId: string, step: string) {
    return this.db.branchPointer.count({ where: { branchId, step } });
  }

  async pointedRecordsWhere(branchId: string, step: string, path: string, value: string) {
    const rows = await this.rows(
      `SELECT ${RECORD_COLUMNS} FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
       WHERE p."branchId" = $1 AND p.step = $2 AND r.metadata #>> $3::text[] = $4`,
      branchId,
      step,
      metaPath(path),
      value,
    );
    return rows.map(toRecord);
  }

  async getCheckpoints(pipelineId: string, stepVersionHash: string, scope: string, prefixFingerprints: string[]): Promise<Checkpoint[]> {
    if (prefixFingerprints.length === 0) return [];
    const rows = await this.db.foldCheckpoint.findMany({
      where: { pipelineId, stepVersionHash, scope, prefixFingerprint: { in: prefixFingerprints } },
    });
    return rows.map((r) => ({ position: r.position, prefixFingerprint: r.prefixFingerprint, state: r.state }));
  }

  async putCheckpoint(s: StepScope, scope: string, c: Checkpoint) {
    await this.db.foldCheckpoint.upsert({
      where: {
        pipelineId_stepVersionHash_scope_prefixFingerprint: {
          pipelineId: s.pipelineId,
          stepVersionHash: s.stepVersionHash,
          scope,
          prefixFingerprint: c.prefixFingerprint,
        },
      },
      create: { workspaceId: s.workspaceId, pipelineId: s.pipelineId, step: s.step, stepVersionHash: s.stepVersionHash, scope, ...c },
      update: {},
    });
  }

  async findResponse(workspaceId: string, renderedPromptHash: string): Promise<Audit | null> {
    const [row] = await this.rows(
      `SELECT audit FROM "Record" WHERE "workspaceId" = $1 AND audit ->> 'renderedPromptHash' = $2 AND audit ? 'rawResponse' LIMIT 1`,
      workspaceId,
      renderedPromptHash,
    );
    return row ? (row.audit as Audit) : null;
  }

  async recordFailure(runId: string, workspaceId: string, f: RunFailureInput) {
    // A provider's garbage may hold NUL bytes, which Postgres text refuses: the failure must still be recorded.
    const text = (s: string) => s.replace(/\u0000/g, "\uFFFD");
    await this.db.runFailure.create({
      data: { runId, workspaceId, step: f.step, inputKey: f.inputKey, error: text(f.error), attempts: f.attempts, rawResponse: f.rawResponse == null ? null : text(f.rawResponse) },
    });
  }

  async isCancelled(runId: string) {
    const run = await this.db.run.findUnique({ where: { id: runId }, select: { cancelRequested: true } });
    return run?.cancelRequested ?? false;
  }
}

/**
 * Records, their provenance edges and branch pointers, in ONE statement (data-modifying CTEs): all or
 * nothing without an interactive transaction, so no transaction timeout can expire while a big batch
 * is written on a busy machine (issue 48: "expired transaction … 120000 ms" in the facts step).
 * A key that already exists (another branch, or a crashed run that got this far) is reused, not
 * duplicated. Works on the client or inside a caller's transaction.
 */
export async function commitRecords(tx: DbTx, branchId: string, records: NewRecord[]) {
  if (!records.length) return;
  const branch = await tx.branch.findUniqueOrThrow({ where: { id: branchId }, select: { workspaceId: true, pipelineId: true } });
  const edges = records.flatMap((r) => r.sources.map((parent, i) => [parent, r.id, i] as const));
  const pointed = records.filter((r) => r.pointerStep !== null);
  const params = [
    branch.workspaceId,
    branch.pipelineId,
    records.map((r) => r.id),
    records.map((r) => r.step),
    records.map((r) => r.stepVersionHash),
    records.map((r) => r.workKey),
    records.map((r) => r.materializationKey),
    records.map((r) => r.contentFingerprint),
    records.map((r) => r.content),
    records.map((r) => r.scope),
    records.map((r) => JSON.stringify(r.metadata)),
    records.map((r) => JSON.stringify(r.audit ?? null)),
    records.map((r) => r.runId ?? null),
    records.map((r) => (r.pointerStep === null ? null : (r.pointerStep ?? r.step))),
    records.map((r) => r.groupKey),
    edges.map((e) => e[0]),
    edges.map((e) => e[1]),
    edges.map((e) => e[2]),
    branchId,
  ];
  // A record skipped on conflict points at the row that holds its key: one inserted by this
  // statement (RETURNING) or one that was there before it (the statement's snapshot).
  const pointers = await tx.$executeRawUnsafe(
    `WITH t AS (
       SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                            $11::text[], $12::text[], $13::text[], $14::text[], $15::text[])
         AS t(id, step, svh, wk, mk, fp, content, scope, meta, audit, run, pstep, gkey)
     ), ins AS (
       INSERT INTO "Record" (id, "workspaceId", "pipelineId", step, "stepVersionHash", "workKey", "materializationKey",
                             "contentFingerprint", content, scope, metadata, audit, "runId", "createdAt")
       SELECT id, $1, $2, step, svh, wk, mk, fp, content, scope, meta::jsonb, NULLIF(audit, 'null')::jsonb, run, now() FROM t
       ON CONFLICT ("pipelineId", "materializationKey") DO NOTHING
       RETURNING id, "materializationKey" AS mk
     ), edges AS (
       INSERT INTO "RecordEdge" ("workspaceId", "parentId", "childId", position)
       SELECT $1, e.p, e.c, e.i FROM unnest($16::text[], $17::text[], $18::int[]) AS e(p, c, i) JOIN ins ON ins.id = e.c
       ON CONFLICT DO NOTHING
     )
     INSERT INTO "BranchPointer" ("workspaceId", "branchId", step, "groupKey", "recordId", "updatedAt")
     SELECT $1, $19, t.pstep, t.gkey, COALESCE(ins.id, old.id), now()
     FROM t LEFT JOIN ins ON ins.mk = t.mk LEFT JOIN "Record" old ON old."pipelineId" = $2 AND old."materializationKey" = t.mk
     WHERE t.pstep IS NOT NULL AND COALESCE(ins.id, old.id) IS NOT NULL
     ON CONFLICT ("branchId", step, "groupKey") DO UPDATE SET "recordId" = EXCLUDED."recordId", "updatedAt" = now()`,
    ...params,
  );
  if (pointers >= pointed.length) return;
  // A key another transaction committed while this statement ran is not in its snapshot: point at
  // it now (every key exists once the statement is done).
  await tx.$executeRawUnsafe(
    `INSERT INTO "BranchPointer" ("workspaceId", "branchId", step, "groupKey", "recordId", "updatedAt")
     SELECT $1, $2, t.s, t.g, r.id, now() FROM unnest($3::text[], $4::text[], $5::text[]) AS t(s, g, k)
     JOIN "Record" r ON r."pipelineId" = $6 AND r."materializationKey" = t.k
     ON CONFLICT ("branchId", step, "groupKey") DO UPDATE SET "recordId" = EXCLUDED."recordId", "updatedAt" = now()`,
    branch.workspaceId,
    branchId,
    pointed.map((r) => r.pointerStep ?? r.step),
    pointed.map((r) => r.groupKey),
    pointed.map((r) => r.materializationKey),
    branch.pipelineId,
  );
}
