/**
 * Refuse work a workspace cannot pay for with a provider before it starts: the plan lists
 * "no provider for openai — add one in Settings → Models", and starting a run fails with it,
 * instead of a run that ends with one identical failure per record.
 */
import { envProviderConfig } from "../llm/workspace-model";
import { providerProblems } from "../pipeline/provider-problems";
import type { Problem } from "../pipeline/spec";
import type { Db, DbTx } from "../core/db";
import { badRequest } from "../core/errors";
import { getBranch } from "./pipelines";

/** Provider names runs of this workspace can call: its Settings → Models entries, env-configured openai/anthropic, offline. */
export async function availableProviders(db: DbTx, workspaceId: string, env: Record<string, string | undefined> = process.env): Promise<string[]> {
  const rows = await db.providerCredential.findMany({ where: { workspaceId }, select: { name: true } });
  const names = new Set(["offline", ...rows.map((r) => r.name)]);
  for (const builtin of ["openai", "anthropic"]) if (envProviderConfig(builtin, env)) names.add(builtin);
  return [...names].sort();
}

/** The provider problems of a pipeline branch's current spec (empty when every model can be called). */
export async function branchProviderProblems(db: Db, workspaceId: string, pipelineId: string, branch = "main"): Promise<Problem[]> {
  const { spec } = await getBranch(db, pipelineId, branch);
  return providerProblems(spec, await availableProviders(db, workspaceId));
}

/** Throws a clear BAD_REQUEST naming every step whose model has no provider. */
export async function assertProvidersAvailable(db: Db, workspaceId: string, pipelineId: string, branch = "main"): Promise<void> {
  const problems = await branchProviderProblems(db, workspaceId, pipelineId, branch);
  if (problems.length === 0) return;
  const lines = problems.map((p) => `step "${p.node ?? "?"}": ${p.message}`);
  throw badRequest(`Cannot start the run: ${lines.join("; ")}.`);
}
