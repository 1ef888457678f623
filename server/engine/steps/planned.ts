/**
 * Planning shared by the kinds whose work items are groups computed in memory (aggregate groups,
 * fold scopes, merge dedupe keys): every wanted item has a materialization key, the missing ones
 * are those whose key no branch has made yet, and the branch keeps one pointer per item.
 */
import type { StepContext } from "../step-context";
import type { NewRecord } from "../types";
import type { StepDefinition, StepKind, EstimateCounts, StepPlanCounts, WorkItem } from "./step-kind";

export interface PlannedItem extends WorkItem {
  /** The item's materialization key; `id` is its pointer's group key on the branch. */
  key: string;
}

const KEY_CHUNK = 1000;

/** Which of these materialization keys exist (key → record id), asked in chunks. */
export async function existingKeys(ctx: StepContext, keys: string[]) {
  const existing = new Map<string, string>();
  for (let i = 0; i < keys.length; i += KEY_CHUNK) {
    for (const [k, v] of await ctx.store.existingKeys(ctx.run.pipelineId, keys.slice(i, i + KEY_CHUNK))) existing.set(k, v);
  }
  return existing;
}

/** Plan counts of a step whose items are `wanted`, of which `missing` are not made yet. */
export async function planCounts(ctx: StepContext, wanted: WorkItem[], missing: () => Promise<WorkItem[]>): Promise<StepPlanCounts> {
  return { total: wanted.length, pending: ctx.options.full ? wanted.length : (await missing()).length };
}

/** One page of items sorted by id: those after `page.after`, at most `page.limit`. */
export function pageAfter<W extends WorkItem>(items: W[], page: { after: string | null; limit: number }): W[] {
  const start = page.after === null ? 0 : items.findIndex((i) => i.id > page.after!);
  return start < 0 ? [] : items.slice(start, start + page.limit);
}

export function plannedKind<S extends StepDefinition, W extends PlannedItem>(def: {
  type: string;
  /** Every work item the step wants on the branch, with its materialization key. */
  wanted(ctx: StepContext<S>): Promise<W[]>;
  prepare?(ctx: StepContext<S>, batch: W[]): Promise<void>;
  execute(ctx: StepContext<S>, item: W): Promise<NewRecord[]>;
  estimate?(counts: EstimateCounts): number;
}): StepKind<S, W> {
  const wanted = (ctx: StepContext<S>) =>
    ctx.memo("wanted", async () => (await def.wanted(ctx)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  const missing = (ctx: StepContext<S>) =>
    ctx.memo("missing", async () => {
      const items = await wanted(ctx);
      const existing = await existingKeys(ctx, items.map((i) => i.key));
      return items.filter((i) => !existing.has(i.key));
    });
  return {
    type: def.type,
    execute: def.execute,
    ...(def.prepare ? { prepare: def.prepare } : {}),
    ...(def.estimate ? { estimate: def.estimate } : {}),
    plan: async (ctx) => planCounts(ctx, await wanted(ctx), () => missing(ctx)),
    missing: async (ctx, page) => pageAfter(await missing(ctx), page),
    async commit(ctx) {
      const items = await wanted(ctx);
      const existing = await existingKeys(ctx, items.map((i) => i.key));
      // One record per item on the branch (last write wins); an item whose new record failed
      // keeps its previous one rather than disappearing.
      await ctx.store.syncPointers(
        ctx.run.branchId,
        ctx.step.name,
        items.filter((i) => existing.has(i.key)).map((i) => ({ groupKey: i.id, recordId: existing.get(i.key)! })),
        items.filter((i) => !existing.has(i.key)).map((i) => i.id),
      );
    },
  };
}
