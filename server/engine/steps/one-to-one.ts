/**
 * Planning shared by the 1 → 1 and 1 → N kinds (transform, split): a work item is one upstream
 * record on the branch; what is missing is computed in SQL (keyset-paged by record id), and the
 * branch's pointers are reconciled once the last batch is committed.
 */
import type { StepContext } from "../step-context";
import type { EngineRecord } from "../types";
import { inputsOf, type StepDefinition, type StepKind, type EstimateCounts, type WorkItem } from "./step-kind";

export interface InputItem extends WorkItem {
  input: EngineRecord;
}

const upstreamOf = (ctx: StepContext) => inputsOf(ctx.step)[0]!;

/** plan, missing, commit and estimate of a kind whose work item is one input record. */
export function oneToOnePlanning<S extends StepDefinition>(options: {
  /** True when the step makes exactly one record per input (a cheap check can then skip reconciling). */
  exactlyOne: boolean;
}): Omit<StepKind<S, InputItem>, "type" | "execute"> {
  return {
    async plan(ctx) {
      const upstream = upstreamOf(ctx);
      const total = await ctx.store.countPointers(ctx.run.branchId, upstream);
      return { total, pending: ctx.options.full ? total : await ctx.store.countMissingOneToOne(ctx.scope, upstream) };
    },
    async missing(ctx, page) {
      const rows = await ctx.store.missingOneToOne(ctx.scope, upstreamOf(ctx), { afterId: page.after ?? undefined, limit: page.limit });
      return rows.map((input) => ({ id: input.id, input }));
    },
    async commit(ctx) {
      const upstream = upstreamOf(ctx);
      // Reconciling scans the step; skip it when a cheaper check says the pointers are already right.
      if (!options.exactlyOne || !(await ctx.store.inSyncOneToOne(ctx.scope, upstream))) {
        await ctx.store.reconcileOneToOne(ctx.scope, upstream);
      }
    },
    /**
     * Each record an upstream step makes is a work item; the step's own pending items on upstream
     * records that are recomputed leave with them (a prompt edit upstream replaces every record:
     * the step then computes one item per new record, not its old pending plus the new ones).
     */
    estimate: ({ pending, total, upstreamPending, upstreamTotal }: EstimateCounts) => {
      if (upstreamTotal === undefined || total === 0) return pending + upstreamPending;
      const kept = Math.max(0, upstreamTotal - upstreamPending);
      return Math.round(pending * Math.min(1, kept / total)) + upstreamPending;
    },
  };
}
