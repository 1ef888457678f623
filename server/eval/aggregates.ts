/**
 * A completed eval run's per-question vectors, computed once when the run ends and stored on the
 * run (`EvalRun.aggregates`): question ids, categories, which questions are scored apart, and one
 * compact vector per metric (null where the question did not measure it). The leaderboard's paired
 * bootstrap reads these instead of every case (each case carries its hits: kilobytes), so a
 * comparison of 10 runs of 1,500 questions reads 10 rows, not 15,000.
 *
 * Runs completed before the column existed are backfilled on first read (`ensureAggregates`):
 * their cases' scores only, a page at a time, then stored so the next read is the fast one.
 */
import { z } from "zod";
import type { Db } from "../core/db";
import { toJsonColumn } from "../core/json";
import { METRIC_NAMES, type Metrics } from "./metrics";
import { QUESTION_SET_BENCHMARK } from "./question-sets";
import { metricsSchema } from "./stored";
import { datasetSchema } from "./types";

export const AGGREGATES_VERSION = 1;

export const aggregatesSchema = z.object({
  version: z.literal(AGGREGATES_VERSION),
  questionIds: z.array(z.string()),
  categories: z.array(z.string()),
  /** Questions left out of the headline metrics (LoCoMo 5, LongMemEval abstention). */
  apart: z.array(z.boolean()),
  /** Per metric, one value per question (aligned with `questionIds`). */
  metrics: z.record(z.string(), z.array(z.number().nullable())),
});
export type EvalAggregates = z.output<typeof aggregatesSchema>;

export interface ScoredQuestion {
  questionId: string;
  category: string;
  apart: boolean;
  scores: Metrics;
}

/** Six decimals are plenty for a mean over questions and keep the column small. */
const compact = (v: number) => Math.round(v * 1e6) / 1e6;

export function buildAggregates(scored: ScoredQuestion[]): EvalAggregates {
  const metrics: Record<string, Array<number | null>> = {};
  for (const name of METRIC_NAMES) {
    if (!scored.some((s) => typeof s.scores[name] === "number")) continue;
    metrics[name] = scored.map((s) => {
      const v = s.scores[name];
      return typeof v === "number" && Number.isFinite(v) ? compact(v) : null;
    });
  }
  return {
    version: AGGREGATES_VERSION,
    questionIds: scored.map((s) => s.questionId),
    categories: scored.map((s) => s.category),
    apart: scored.map((s) => s.apart),
    metrics,
  };
}

/** The stored aggregates, or null when absent or written by another version (then rebuilt). */
export function parseAggregates(stored: unknown): EvalAggregates | null {
  const parsed = aggregatesSchema.safeParse(stored);
  return parsed.success ? parsed.data : null;
}

const CASE_PAGE = 1000;

/**
 * A completed run's aggregates: stored ones, or built from its cases (scores only) and stored.
 * Runs that did not complete have none (null).
 */
export async function ensureAggregates(
  db: Db,
  run: { id: string; workspaceId: string; status: string; benchmark: string; datasetId: string; aggregates: unknown },
): Promise<EvalAggregates | null> {
  const stored = parseAggregates(run.aggregates);
  if (stored || run.status !== "completed") return stored;
  const apart = await apartQuestions(db, run);
  const scored: ScoredQuestion[] = [];
  let after = -1;
  for (;;) {
    const page = await db.evalCase.findMany({
      where: { workspaceId: run.workspaceId, evalRunId: run.id, position: { gt: after } },
      orderBy: { position: "asc" },
      take: CASE_PAGE,
      select: { position: true, questionId: true, category: true, scores: true },
    });
    for (const c of page) scored.push({ questionId: c.questionId, category: c.category, apart: apart.has(c.questionId), scores: metricsSchema.parse(c.scores) });
    if (page.length < CASE_PAGE) break;
    after = page[page.length - 1]!.position;
  }
  const aggregates = buildAggregates(scored);
  await db.evalRun.updateMany({ where: { id: run.id, workspaceId: run.workspaceId, status: "completed" }, data: { aggregates: toJsonColumn(aggregates) } });
  return aggregates;
}

/** The ids of the questions a benchmark scores apart (none for a team's question set). */
async function apartQuestions(db: Db, run: { workspaceId: string; benchmark: string; datasetId: string }): Promise<Set<string>> {
  if (run.benchmark === QUESTION_SET_BENCHMARK) return new Set();
  const row = await db.evalDataset.findFirst({ where: { id: run.datasetId, workspaceId: run.workspaceId }, select: { data: true } });
  if (!row) return new Set();
  const parsed = datasetSchema.safeParse(row.data);
  return new Set(parsed.success ? parsed.data.questions.filter((q) => q.apart).map((q) => q.id) : []);
}
