/**
 * The output shape of a branch compared with main on the same queries — replay (`log.replay`) and
 * shadow traffic (`shadow.report`) report the same per-query comparison and run summary
 * (server/eval/replay-metrics.ts makes both).
 */
import { z } from "zod";

/** A paired 95% interval of branch − main over the queries. */
export const intervalSchema = z.object({ n: z.number().int(), mean: z.number(), low: z.number().nullable(), high: z.number().nullable() });

const sideSchema = z.object({ ids: z.array(z.string()), latencyMs: z.number(), citationRecall: z.number().nullable() });

/** One query's comparison: both sides' top k, overlap@k, rank-biased overlap, gained / lost, the cited ids. */
export const comparisonShape = {
  k: z.number().int(),
  main: sideSchema,
  branch: sideSchema,
  overlap: z.number(),
  rbo: z.number(),
  gained: z.array(z.string()),
  lost: z.array(z.string()),
  cited: z.array(z.string()),
};

/** The run's means, counts and paired intervals. */
export const comparisonSummaryShape = {
  replayed: z.number().int().meta({ description: "Queries compared (answered without an error)." }),
  meanOverlap: z.number(),
  meanRbo: z.number(),
  gained: z.number().int(),
  lost: z.number().int(),
  meanLatencyMs: z.object({ main: z.number(), branch: z.number() }),
  citationRecall: z.object({ main: z.number().nullable(), branch: z.number().nullable(), diff: intervalSchema }),
  latencyDiff: intervalSchema,
};
