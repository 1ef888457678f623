import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/api/root";
import { LOWER_IS_BETTER } from "@/server/eval/metrics";

type Outputs = inferRouterOutputs<AppRouter>["evals"];
export type EvalRunSummary = Outputs["list"][number];
export type EvalComparison = Outputs["compare"];
export type ComparedRun = EvalComparison["runs"][number];
export type ComparedQuestion = EvalComparison["questions"][number];
export type QuestionSetSummary = Outputs["questionSets"][number];
export type EvalLeaderboard = Outputs["leaderboard"];
export type LeaderboardRunRow = EvalLeaderboard["rows"][number];
export type CompareChartsData = Outputs["compareCharts"];
export type QuestionComparison = Outputs["compareQuestions"];
export type QuestionDrilldownData = Outputs["question"];

/** The metrics the compare view shows as cards and bars, in this order. */
export const HEADLINE_METRICS = ["session_hit@1", "session_hit@5", "session_recall@5", "evidence_recall@10", "evidence_recall@2k", "precision@5", "mrr", "context_tokens"] as const;

export const CATEGORY_NAMES: Record<string, Record<string, string>> = {
  locomo: { "1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial (apart)" },
};

export function fmtMetric(name: string, v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) return "—";
  return name === "context_tokens" ? Math.round(v).toLocaleString("en-US") : v.toFixed(3);
}

/** "+0.031" / "−12"; `good` says whether the change is an improvement. */
export function fmtDelta(name: string, d: number): { text: string; good: boolean | null } {
  if (Math.abs(d) < 1e-9) return { text: "±0", good: null };
  const text = `${d > 0 ? "+" : "−"}${name === "context_tokens" ? Math.abs(Math.round(d)).toLocaleString("en-US") : Math.abs(d).toFixed(3)}`;
  return { text, good: LOWER_IS_BETTER.has(name) ? d < 0 : d > 0 };
}

/** Distinct colours for runs in charts (baseline first). */
export const RUN_COLORS = ["#64748b", "#2563eb", "#16a34a", "#d97706", "#db2777", "#7c3aed", "#0891b2", "#dc2626"];
