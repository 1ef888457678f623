/**
 * The Run row's JSON column `stats`, parsed where it is read instead of cast. The engine writes one
 * entry per step (server/engine/runner.ts `StepStats`); unknown keys pass through, so a field the
 * engine adds later reaches the UI without a change here.
 */
import { z } from "zod";

export const STEP_STATUSES = ["pending", "running", "completed", "failed", "skipped", "cancelled"] as const;

export const stepStatsSchema = z.looseObject({
  step: z.string(),
  /** The step kind ("transform", "fold", …; a registered kind's name). */
  type: z.string(),
  input: z.number(),
  output: z.number(),
  skipped: z.number(),
  errors: z.number(),
  modelCalls: z.number(),
  retries: z.number(),
  tokensIn: z.number(),
  tokensOut: z.number(),
  costUsd: z.number(),
  durationMs: z.number(),
  status: z.enum(STEP_STATUSES),
  items: z.number().optional().meta({ description: "Work items the step found to compute when it started." }),
  reason: z.string().optional().meta({ description: "Why the step was skipped, or failed as a whole." }),
});

export const runStatsSchema = z.object({ steps: z.array(stepStatsSchema).default([]) });

export type StepRunStats = z.output<typeof stepStatsSchema>;
export type RunStats = z.output<typeof runStatsSchema>;

/** `Run.stats` (null before the run starts) as typed stats; a malformed value names the run. */
export function parseRunStats(run: { id: string; stats: unknown }): RunStats {
  if (run.stats === null || run.stats === undefined) return { steps: [] };
  const parsed = runStatsSchema.safeParse(run.stats);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Run ${run.id} has malformed stats at ${issue?.path.join(".") || "stats"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** A Run row with its stats parsed. */
export function withRunStats<T extends { id: string; stats: unknown }>(run: T): Omit<T, "stats"> & { stats: RunStats } {
  return { ...run, stats: parseRunStats(run) };
}
