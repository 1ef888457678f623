/**
 * The choices of the compare page's charts and question view, as plain constants: the server
 * modules validate with them and the browser offers them (no server code comes along).
 */
import type { MetricName } from "./metrics";

export const COST_AXES = ["contextTokens", "buildCostUsd", "buildTokens", "latencyP50"] as const;
export type CostAxis = (typeof COST_AXES)[number];
export const COST_AXIS_LABELS: Record<CostAxis, string> = {
  contextTokens: "context tokens per query",
  buildCostUsd: "build cost (USD)",
  buildTokens: "build tokens",
  latencyP50: "search latency p50 (ms)",
};

export const QUESTION_OUTCOMES = ["regressed", "improved", "both_wrong", "both_right", "only_one"] as const;
export type QuestionOutcome = (typeof QUESTION_OUTCOMES)[number];

/** Metrics a question can be judged right or wrong by (per question: 0/1 hits, or shares). */
export const OUTCOME_METRICS = ["session_hit@5", "session_hit@1", "session_hit@3", "session_recall@5", "evidence_recall@10", "evidence_recall@2k", "mrr", "f1", "j"] as const satisfies readonly MetricName[];
export type OutcomeMetric = (typeof OUTCOME_METRICS)[number];

/** A question counts as answered right by a run when its metric reaches this (a hit is 1, a miss 0). */
export const RIGHT_AT = 0.5;

/**
 * What a benchmark's questions scored apart are called on screen (LoCoMo's adversarial category,
 * LongMemEval's abstention questions): they are left out of the headline metrics and the
 * leaderboard's question count, and listed in Question by question.
 */
export function apartLabel(benchmark: string | null | undefined): string {
  return benchmark === "locomo" ? "adversarial" : benchmark === "longmemeval" ? "abstention" : "scored apart";
}
