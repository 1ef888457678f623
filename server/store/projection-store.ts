/**
 * SQL of projection outputs: the latest record per scope on a branch, and the atomic swap of
 * ProjectionState that tells which scopes changed since the last look (so each change is
 * announced exactly once).
 */
import type { DbTx } from "../core/db";
import { filterConditions, Params, parseJson } from "./record-sql";

export interface ProjectedRecord {
  id: string;
  step: string;
  scope: string;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

/**
 * The latest record per exact scope among `steps` on the branch, newest by meta.time.period, then
 * meta.time.created_at, then creation. A scope filter is a prefix (`acme` covers `acme:eng`).
 */
export async function latestRecordPerScope(
  db: DbTx,
  target: { workspaceId: string; branchId: string },
  steps: string[],
  scope?: string,
): Promise<ProjectedRecord[]> {
  const params = new Params();
  const where = [
    `p."branchId" = ${params.add(target.branchId)}`,
    `p.step = ANY(${params.add(steps, "text[]")})`,
    `r."workspaceId" = ${params.add(target.workspaceId)}`,
    ...filterConditions(params, { scope }),
  ];
  const rows = await db.$queryRawUnsafe<Array<Omit<ProjectedRecord, "metadata"> & { metadata: unknown }>>(
    `SELECT DISTINCT ON (r.scope) r.id, r.step, r.scope, r.content, r.metadata, r."createdAt"
     FROM "BranchPointer" p JOIN "Record" r ON r.id = p."recordId"
     WHERE ${where.join(" AND ")}
     ORDER BY r.scope, r.metadata #>> '{time,period}' DESC NULLS LAST, r.metadata #>> '{time,created_at}' DESC NULLS LAST,
              r."createdAt" DESC, r.id DESC
     LIMIT 1000`,
    ...params.values,
  );
  return rows.map((r) => ({ ...r, metadata: parseJson<Record<string, unknown>>(r.metadata), createdAt: new Date(r.createdAt) }));
}

/**
 * Sets the projected record of each scope and returns only the scopes whose record changed
 * (new scopes included). Run inside the transaction that enqueues the notifications.
 */
export async function swapProjectionState(
  tx: DbTx,
  target: { workspaceId: string; branchId: string; output: string },
  records: Array<{ scope: string; id: string }>,
): Promise<Array<{ scope: string; recordId: string }>> {
  return tx.$queryRawUnsafe<Array<{ scope: string; recordId: string }>>(
    `INSERT INTO "ProjectionState" ("workspaceId", "branchId", output, scope, "recordId", "updatedAt")
     SELECT $1, $2, $3, s, r, now() FROM unnest($4::text[], $5::text[]) AS t(s, r)
     ON CONFLICT ("branchId", output, scope) DO UPDATE SET "recordId" = EXCLUDED."recordId", "updatedAt" = now()
       WHERE "ProjectionState"."recordId" <> EXCLUDED."recordId"
     RETURNING scope, "recordId"`,
    target.workspaceId,
    target.branchId,
    target.output,
    records.map((r) => r.scope),
    records.map((r) => r.id),
  );
}
