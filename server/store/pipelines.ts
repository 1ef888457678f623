/**
 * Reads of pipelines, branches and versions: the one way to resolve "pipeline X, branch Y" to
 * rows and a parsed spec. Services, search and the API all come through here.
 */
import type { Prisma } from "../generated/prisma/client";
import type { DbTx } from "../core/db";
import { notFound } from "../core/errors";
import { parseSpecShape, type PipelineSpec } from "../pipeline/spec";

/**
 * A stored spec (a JSON column), parsed with the spec schema instead of cast. Versions are
 * immutable, so a parsed spec is cached by version id. A stored spec that does not parse is
 * corrupt data, never a user error: it throws naming the version and the first problems.
 */
export function storedSpec(version: { id: string; spec: Prisma.JsonValue }): PipelineSpec {
  const cached = specCache.get(version.id);
  if (cached) return cached;
  const parsed = parseSpecShape(version.spec);
  if (!parsed.ok) {
    const problems = parsed.problems.slice(0, 3).map((p) => `${p.path.join(".") || "spec"}: ${p.message}`);
    throw new Error(`Stored spec of pipeline version ${version.id} is invalid: ${problems.join("; ")}`);
  }
  if (specCache.size >= 500) specCache.delete(specCache.keys().next().value!);
  specCache.set(version.id, parsed.spec);
  return parsed.spec;
}

const specCache = new Map<string, PipelineSpec>();

/** The answer for a pipeline that is not there (or that the caller may not know is there). */
export const pipelineNotFound = (idOrName: string) => notFound(`Pipeline "${idOrName.slice(0, 100)}" not found in this workspace.`);

/** A pipeline of the workspace by id or name. */
export async function findPipeline(db: DbTx, workspaceId: string, idOrName: string) {
  const pipeline = await db.pipeline.findFirst({ where: { workspaceId, OR: [{ id: idOrName }, { name: idOrName }] } });
  if (!pipeline) throw pipelineNotFound(idOrName);
  return pipeline;
}

/** A branch of a pipeline with its head version and parsed spec. */
export async function findBranch(db: DbTx, pipelineId: string, name = "main") {
  const branch = await db.branch.findUnique({ where: { pipelineId_name: { pipelineId, name } } });
  if (!branch) throw notFound(`Branch "${name.slice(0, 100)}" not found.`);
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: branch.versionId } });
  return { branch, version, spec: storedSpec(version) };
}

/** One version of a pipeline with its parsed spec. */
export async function findVersion(db: DbTx, pipelineId: string, versionId: string) {
  const version = await db.pipelineVersion.findFirst({ where: { id: versionId, pipelineId } });
  if (!version) throw notFound(`Version ${versionId.slice(0, 100)} not found in this pipeline.`);
  return { version, spec: storedSpec(version) };
}

export interface BranchContext {
  workspaceId: string;
  pipelineId: string;
  branchId: string;
  branchName: string;
  spec: PipelineSpec;
}

/**
 * The pipeline (id or name) must belong to the workspace; the branch must exist. One round trip
 * on the hot path (search, context); the slow path only runs to give the precise error.
 */
export async function resolveBranch(db: DbTx, workspaceId: string, pipeline: string, branch = "main"): Promise<BranchContext> {
  const [row] = await db.$queryRawUnsafe<Array<{ pipelineId: string; branchId: string; versionId: string }>>(
    `SELECT p.id AS "pipelineId", b.id AS "branchId", b."versionId" FROM "Pipeline" p
     JOIN "Branch" b ON b."pipelineId" = p.id AND b.name = $3
     WHERE p."workspaceId" = $1 AND (p.id = $2 OR p.name = $2) ORDER BY (p.id = $2) DESC LIMIT 1`,
    workspaceId,
    pipeline,
    branch,
  );
  if (!row) {
    const p = await findPipeline(db, workspaceId, pipeline);
    const { branch: b, spec } = await findBranch(db, p.id, branch);
    return { workspaceId, pipelineId: p.id, branchId: b.id, branchName: b.name, spec };
  }
  let spec = specCache.get(row.versionId);
  if (!spec) {
    const v = await db.pipelineVersion.findUniqueOrThrow({ where: { id: row.versionId }, select: { id: true, spec: true } });
    spec = storedSpec(v);
  }
  return { workspaceId, pipelineId: row.pipelineId, branchId: row.branchId, branchName: branch, spec };
}

/** Records per pipeline of the workspace (every version, every branch: what the store holds). */
export async function recordCountsByPipeline(db: DbTx, workspaceId: string) {
  return db.$queryRawUnsafe<Array<{ pipelineId: string; n: number }>>(
    `SELECT "pipelineId", count(*)::int AS n FROM "Record" WHERE "workspaceId" = $1 GROUP BY 1`,
    workspaceId,
  );
}
