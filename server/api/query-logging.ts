/**
 * What a served search / ask / brief / walk leaves in the pipeline's query log (issue 37): the
 * procedures of server/api/routers/search.ts call `logServed` once they have their answer; the
 * entry is built and written after the response (services/query-log.ts), so it never slows it.
 */
import type { SearchResult } from "../search/search";
import type { WalkResult } from "../search/walk";
import type { AnswerPacket } from "../services/ask";
import { effectiveScope, type KeyRestrictions } from "../services/api-keys";
import { recordServedQuery, type QueryKind } from "../services/query-log";
import { actorRef, type Actor, type Context } from "./trpc";

interface ServedCtx {
  db: Context["db"];
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

const round = (n: number) => Math.round(n * 1e6) / 1e6;

export function logServed(ctx: ServedCtx, kind: QueryKind, input: Record<string, unknown>, output: unknown, startedAt: number) {
  const latencyMs = Math.round(performance.now() - startedAt);
  recordServedQuery(ctx.db, () => {
    let hits: Array<{ id: string; rank: number; score: number; step: string }> = [];
    let cited: string[] = [];
    let confidence: number | null = null;
    let mode = typeof input.mode === "string" ? input.mode : null;
    if (kind === "search") {
      hits = (output as SearchResult).hits.map((h, i) => ({ id: h.id, rank: i + 1, score: round(h.score.fused), step: h.step }));
    } else if (kind === "ask") {
      const packet = output as AnswerPacket;
      hits = packet.evidence.map((e, i) => ({ id: e.id, rank: i + 1, score: round(e.relevance), step: e.step }));
      cited = [...new Set(packet.citations.map((c) => c.recordId))];
      confidence = packet.confidence.score;
      mode = packet.mode;
    } else if (kind === "walk") {
      hits = (output as WalkResult).hits.map((h, i) => ({ id: h.id, rank: i + 1, score: round(h.score), step: h.step }));
    } else {
      const brief = output as { projections: Array<{ blocks: Array<{ record: { id: string; step: string } }> }> };
      hits = brief.projections.flatMap((p) => p.blocks.map((b) => b.record)).map((r, i) => ({ id: r.id, rank: i + 1, score: 1, step: r.step }));
    }
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
      hits,
      cited,
      confidence,
      latencyMs,
    };
  });
}
