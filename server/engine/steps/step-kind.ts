/**
 * The one interface every step kind implements (transform, split, aggregate, fold, merge, and any
 * kind added later). The runner (../runner.ts) only orchestrates: it asks the kind what is
 * missing, executes the missing work items in batches, commits each batch's records, and lets the
 * kind point the branch at its records once the last batch is done. It never looks at the kind.
 *
 * Adding a kind = one module here implementing `StepKind`, one line in ./index.ts, its spec schema
 * (server/pipeline/spec.ts) and its canvas node.
 */
import type { NewRecord } from "../types";
import type { StepContext } from "../step-context";

/** What the engine needs of a step; each kind narrows it to its own spec type. */
export interface StepDefinition {
  type: string;
  name: string;
  from: string | string[];
}

/** One unit of work: its records are computed together and share a work key. */
export interface WorkItem {
  /**
   * Stable and unique within the step: the batch cursor (work items are handled in `id` order) and
   * the input key of a failure (an input record id, a group, a scope, a dedupe key).
   */
  id: string;
  /** Input records this item counts for in the step's stats (default 1). */
  inputs?: number;
}

export interface StepPlanCounts {
  /** Work items the step has on the branch once up to date. */
  total: number;
  /** Work items with no record yet (the set difference on materialization keys). */
  pending: number;
}

/** A step's counts downstream of pending work: its upstream steps' pending and total work items. */
export type EstimateCounts = StepPlanCounts & { upstreamPending: number; upstreamTotal?: number };

export interface StepKind<S extends StepDefinition = StepDefinition, W extends WorkItem = WorkItem> {
  readonly type: string;
  /** Plan: how many work items the step wants and how many of them have no record yet. */
  plan(ctx: StepContext<S>): Promise<StepPlanCounts>;
  /** The next missing work items after `after` (by id, ascending), at most `limit` of them. */
  missing(ctx: StepContext<S>, page: { after: string | null; limit: number }): Promise<W[]>;
  /** Optional: load what a batch's items need in one query before they execute. */
  prepare?(ctx: StepContext<S>, batch: W[]): Promise<void>;
  /**
   * Execute one work item: its new records, each with its materialization key, content, scope,
   * provenance and audit (built with `ctx.newRecord`). No writes: the runner commits the batch.
   */
  execute(ctx: StepContext<S>, item: W): Promise<NewRecord[]>;
  /**
   * After the last batch: make the branch point at the step's current records (existing keys are
   * reused, whichever branch made them). A work item that failed keeps its previous record.
   */
  commit(ctx: StepContext<S>): Promise<void>;
  /**
   * A plan downstream of pending work: how many work items may become pending when upstream steps
   * add `upstreamPending` records (of `upstreamTotal` they will have: the records they recompute
   * replace theirs). Default: every group may change (at least one).
   */
  estimate?(counts: EstimateCounts): number;
}

/** The inputs of a step (`from` as a list). */
export function inputsOf(step: StepDefinition): string[] {
  return Array.isArray(step.from) ? step.from : [step.from];
}
