/**
 * The shadow report (issue 37): what a branch answered to copies of main's live queries, compared
 * with what main served — replay's report (replay-metrics: overlap@k, RBO, gained/lost, latency,
 * citation recall with paired intervals), with the shadow's period and counters (taken, answered,
 * failed, dropped because the queue was full).
 */
import type { Db } from "../core/db";
import { pickShadow, type ShadowRow } from "../services/shadow";
import { listShadowResults } from "../store/shadow";
import { compareServed, summarizeComparisons, type ComparisonSummary, type QueryComparison } from "./replay-metrics";

/** Results a report reads (a shadow keeps at most SHADOW_MAX_RESULTS). */
const REPORT_MAX = 10_000;

export interface ShadowQuery extends QueryComparison {
  id: string;
  at: Date;
  kind: string;
  query: string;
  scope: string | null;
  error: string | null;
}

export interface ShadowStatus extends ShadowRow {
  /** running, scheduled (starts later), ended (its end passed) or stopped. */
  state: "running" | "scheduled" | "ended" | "stopped";
}

export interface ShadowReport {
  shadow: ShadowStatus | null;
  /** The latest compared queries (at most `limit`), newest first. */
  queries: ShadowQuery[];
  summary: ComparisonSummary;
  failed: number;
}

export function shadowState(s: ShadowRow, now = new Date()): ShadowStatus["state"] {
  if (s.stoppedAt) return "stopped";
  if (s.endsAt <= now) return "ended";
  return s.startsAt > now ? "scheduled" : "running";
}

export async function shadowReport(db: Db, workspaceId: string, pipelineId: string, sel: { id?: string; branch: string; limit?: number }): Promise<ShadowReport> {
  const shadow = await pickShadow(db, workspaceId, pipelineId, sel);
  if (!shadow) return { shadow: null, queries: [], summary: summarizeComparisons([]), failed: 0 };
  const rows = await listShadowResults(db, workspaceId, shadow.id, REPORT_MAX);
  const queries: ShadowQuery[] = rows.map((r) => ({ id: r.id, at: r.createdAt, kind: r.kind, query: r.query, scope: r.scope, error: r.error, ...compareServed(r.main, r.branch, r.cited, r.k) }));
  return {
    shadow: { ...shadow, state: shadowState(shadow) },
    queries: queries.slice(0, sel.limit ?? 50),
    summary: summarizeComparisons(queries.filter((q) => !q.error)),
    failed: queries.filter((q) => q.error).length,
  };
}
