/**
 * What a run's steps came to, for the live run view and the final Run row: every selected step is
 * listed from the start (queued), and a finished step's green "completed" is only said when it is
 * true. A step whose every work item failed is failed; a step that had nothing to do because a
 * step it reads failed is skipped, with why; steps a failed or cancelled run never reached are
 * skipped too. Pure: the run service applies it to the stats it stores.
 */
import { emptyStats, type StepStats } from "./step-context";
import { inputsOf, type StepDefinition } from "./steps";

/** The stats of the steps a run has selected, none started yet (queued). */
export function queuedStats(steps: Array<{ name: string; type: string }>): Record<string, StepStats> {
  return Object.fromEntries(steps.map((s) => [s.name, emptyStats(s)]));
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/**
 * Settles statuses in execution order. `ended`: the run is still going ("running"), or how it
 * ended; steps still queued at the end are skipped with the run's end as the reason.
 */
export function settleSteps(spec: { steps: StepDefinition[] }, steps: StepStats[], ended: "running" | "completed" | "failed" | "cancelled"): StepStats[] {
  const byName = new Map<string, StepStats>();
  const out: StepStats[] = [];
  for (const original of steps) {
    const s: StepStats = { ...original };
    const def = spec.steps.find((d) => d.name === s.step);
    const failedUpstream = def ? inputsOf(def).filter((u) => byName.get(u)?.status === "failed") : [];
    if (s.status === "completed" && s.errors > 0 && s.output === 0 && s.errors >= (s.items ?? s.errors)) {
      s.status = "failed";
      s.reason = `All ${plural(s.errors, "work item")} failed.`;
    } else if (s.status === "completed" && (s.items ?? 0) === 0 && failedUpstream.length > 0) {
      s.status = "skipped";
      s.reason = `Nothing new to read: ${failedUpstream.join(", ")} failed.`;
    } else if (s.status === "pending" && ended !== "running") {
      const stopped = out.find((x) => x.status === "failed" || x.status === "cancelled");
      s.status = "skipped";
      s.reason =
        ended === "cancelled" ? "The run was cancelled before this step." : stopped ? `Not reached: the run stopped at ${stopped.step}.` : "Not reached: the run ended before this step.";
    }
    byName.set(s.step, s);
    out.push(s);
  }
  return out;
}

/**
 * How a run that was not cancelled and did not stop on an error ended, from its steps' stats. The
 * rule: a run with no failed work item is completed; a run in which some work item failed but
 * something succeeded (a step made a record, or computed more work items than failed) is
 * completed_with_errors; a run in which work items failed and none succeeded — every model call
 * failed — is failed, with the reason naming each step's failures.
 */
export function runOutcome(steps: StepStats[]): { status: "completed" | "completed_with_errors" | "failed"; error?: string } {
  const errors = steps.reduce((n, s) => n + s.errors, 0);
  if (errors === 0) return { status: "completed" };
  const succeeded = steps.some((s) => s.output > 0 || (s.items ?? 0) > s.errors);
  if (succeeded) return { status: "completed_with_errors" };
  const failing = steps.filter((s) => s.errors > 0).map((s) => `${s.step} ${s.errors} of ${Math.max(s.items ?? 0, s.errors)}`);
  return { status: "failed", error: `Every work item failed (${failing.join(", ")}): nothing was computed. The run's failures list each item's error.` };
}
