/**
 * What a served search / ask / brief / walk leaves in the pipeline's query log (issue 37): the
 * procedures of server/api/routers/search.ts call `logServed` once they have their answer; the
 * entry is built and written after the response (services/query-log.ts), so it never slows it; a
 * branch shadowing main gets a copy the same way (services/shadow.ts).
 */
import { effectiveScope, type KeyRestrictions } from "../services/api-keys";
import { recordServedQuery, servedHits, type QueryKind } from "../services/query-log";
import { shadowServed } from "../services/shadow";
import { actorRef, type Actor, type Context } from "./trpc";

interface ServedCtx {
  db: Context["db"];
  unlogged?: boolean;
  actor: Actor;
  surface?: Context["surface"];
  workspace: { id: string };
  pipeline: { id: string };
  branch: { name: string };
  version: { id: string };
  restrictions: KeyRestrictions | null;
}

/** Parameters worth replaying (the query and scope have their own columns). */
function paramsOf(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    if (["query", "question", "scope", "workspaceId", "pipelineId", "branch"].includes(k) || v === undefined) continue;
    out[k] = v;
  }
  return out;
}

export function logServed(ctx: ServedCtx, kind: QueryKind, input: Record<string, unknown>, output: unknown, startedAt: number) {
  if (ctx.unlogged) return;
  const latencyMs = Math.round(performance.now() - startedAt);
  recordServedQuery(ctx.db, () => {
    const served = servedHits(kind, output);
    const mode = served.mode ?? (typeof input.mode === "string" ? input.mode : null);
    const query = typeof input.query === "string" ? input.query : typeof input.question === "string" ? input.question : "";
    const scope = typeof input.scope === "string" || ctx.restrictions?.scopePrefix ? (effectiveScope(ctx.restrictions, input.scope as string | undefined) ?? null) : null;
    return {
      workspaceId: ctx.workspace.id,
      pipelineId: ctx.pipeline.id,
      surface: ctx.surface ?? "trpc",
      kind,
      caller: actorRef(ctx.actor),
      scope,
      mode,
      params: paramsOf(input),
      query,
      branch: ctx.branch.name,
      versionId: ctx.version.id,
      hits: served.hits,
      cited: served.cited,
      confidence: served.confidence,
      latencyMs,
    };
  });
  // Shadow traffic: a copy for each branch shadowing main, answered in the background (services/shadow.ts).
  shadowServed(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name, restrictions: ctx.restrictions, kind, input, output, latencyMs });
}
