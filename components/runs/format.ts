import type { RouterOutputs } from "@/lib/trpc";
/** Small formatting helpers shared by the overview, runs and explorer screens. */
export function fmtInt(n: number | null | undefined): string {
  return (n ?? 0).toLocaleString("en-US");
}

export function fmtUsd(n: number | null | undefined): string {
  const v = n ?? 0;
  if (v === 0) return "$0";
  if (v < 0.01) return `$${v.toFixed(4)}`;
  return `$${v.toFixed(2)}`;
}

export function fmtDuration(ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s % 60)} s`;
}

export function fmtDate(d: Date | string | null | undefined): string {
  if (!d) return "—";
  const date = typeof d === "string" ? new Date(d) : d;
  return date.toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" });
}

/** A run's stats as the router returns them (parsed from the Run row on the server). */
export type RunStats = RouterOutputs["run"]["get"]["stats"];
export type RunStepStats = RunStats["steps"][number];

export function runSteps(stats: RunStats): RunStepStats[] {
  return stats.steps;
}

export function runTotals(stats: RunStats) {
  const steps = runSteps(stats);
  return {
    tokens: steps.reduce((a, s) => a + (s.tokensIn ?? 0) + (s.tokensOut ?? 0), 0),
    cost: steps.reduce((a, s) => a + (s.costUsd ?? 0), 0),
    output: steps.reduce((a, s) => a + (s.output ?? 0), 0),
    skipped: steps.reduce((a, s) => a + (s.skipped ?? 0), 0),
    errors: steps.reduce((a, s) => a + (s.errors ?? 0), 0),
  };
}

/** How many steps are queued, running, completed, failed, skipped, cancelled (in that order, zeros left out). */
export function stepStateCounts(steps: RunStepStats[]): Array<[string, number]> {
  const order = ["running", "pending", "completed", "failed", "skipped", "cancelled"];
  const counts = new Map<string, number>();
  for (const s of steps) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  return order.filter((k) => counts.get(k)).map((k) => [k === "pending" ? "queued" : k, counts.get(k)!]);
}

export const ACTIVE_RUN_STATUSES = ["queued", "running"];

export function runDuration(run: { startedAt?: Date | string | null; finishedAt?: Date | string | null; status: string }): number | null {
  if (!run.startedAt) return null;
  const start = new Date(run.startedAt).getTime();
  const end = run.finishedAt ? new Date(run.finishedAt).getTime() : ACTIVE_RUN_STATUSES.includes(run.status) ? Date.now() : null;
  return end == null ? null : end - start;
}
