/**
 * What eval runs and cases keep in JSON columns, as zod schemas: each column is parsed where it is
 * read (not cast), so a row written by an older version reads as what it holds, or fails loudly.
 */
import { z } from "zod";
import type { JudgeRecord } from "./judge";
import { METRIC_NAMES, type Metrics } from "./metrics";
import type { LoadSkip } from "./types";

/** Known metrics only; a metric that was not measured (absent, or stored as null) stays absent. */
export const metricsSchema = z.record(z.string(), z.unknown()).transform((stored) => {
  const metrics: Metrics = {};
  for (const name of METRIC_NAMES) {
    const value = stored[name];
    if (typeof value === "number") metrics[name] = value;
  }
  return metrics;
});

export const perCategorySchema = z.record(
  z.string(),
  z.record(z.string(), z.unknown()).transform((stored) => ({ ...metricsSchema.parse(stored), questions: typeof stored.questions === "number" ? stored.questions : 0 })),
);

export const loadSkipSchema = z.object({ where: z.string(), reason: z.string(), dropped: z.boolean() }) satisfies z.ZodType<LoadSkip>;
export const loadSkipsSchema = z.array(loadSkipSchema);

export const judgeRecordSchema = z.object({
  measured: z.boolean(),
  reason: z.string().optional(),
  answerModel: z.string().optional(),
  judgeModel: z.string().optional(),
  answerPrompt: z.string().optional(),
  prompt: z.string().optional(),
  categories: z.record(z.string(), z.string()).optional(),
  budgetUsd: z.number().optional(),
  spentUsd: z.number().optional(),
  tokens: z.number().optional(),
  calls: z.number().optional(),
  judged: z.number().optional(),
  garbage: z.number().optional(),
  failed: z.number().optional(),
  overBudget: z.number().optional(),
  samples: z.array(z.object({ question: z.string(), reply: z.string() })).optional(),
}) satisfies z.ZodType<JudgeRecord>;

/** A retrieved record as a case keeps it: its rank, score and what it reached through provenance. */
export const storedHitSchema = z.object({
  id: z.string(),
  step: z.string(),
  rank: z.number(),
  score: z.number(),
  tokens: z.number(),
  sessions: z.array(z.string()),
  goldTurns: z.array(z.string()),
  turns: z.number(),
  inContext: z.boolean(),
  reachesSource: z.boolean(),
  preview: z.string(),
});
export type StoredHit = z.output<typeof storedHitSchema>;
export const storedHitsSchema = z.array(storedHitSchema);

export const evidenceSchema = z.object({ turns: z.array(z.string()), sessions: z.array(z.string()) });

export const stepCostSchema = z.object({ step: z.string(), records: z.number(), tokensIn: z.number(), tokensOut: z.number(), costUsd: z.number() });
export const evalCostSchema = z.looseObject({
  buildTokens: z.number().optional(),
  buildCostUsd: z.number().optional(),
  perStep: z.array(stepCostSchema).optional(),
});
export const latencySchema = z.looseObject({ p50: z.number().optional(), p95: z.number().optional() });

/** Run stats as the eval reads them: the model calls, tokens and cost per step of the build run. */
export const buildStatsSchema = z.looseObject({
  steps: z.array(z.looseObject({ modelCalls: z.number(), tokensIn: z.number(), tokensOut: z.number(), costUsd: z.number() })).default([]),
});
