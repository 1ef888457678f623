/** aggregate: N → 1 per group (period, metadata key or count window), one record per group on a branch. */
import type { AggregateStep } from "../../pipeline/spec";
import { aggregateKey, scopedGroupKey } from "../keys";
import { applyAggregateOperator } from "../operators";
import { inheritedMetadata, recordVars } from "../step-context";
import type { Audit, Group } from "../types";
import { plannedKind, type PlannedItem } from "./planned";

const ORDER_KEY = "time.created_at";

interface GroupItem extends PlannedItem {
  group: Group;
}

export const aggregateKind = plannedKind<AggregateStep, GroupItem>({
  type: "aggregate",
  async wanted(ctx) {
    const groups = await ctx.store.planGroups(ctx.scope, ctx.step.from, ctx.step.groupBy, ORDER_KEY);
    return groups.map((group) => ({
      id: scopedGroupKey(group.scope, group.groupKey),
      key: aggregateKey(ctx.step.name, ctx.svh, group.scope, group.groupKey, group.combinedFingerprint),
      group,
      // Stats count the records a group reads (what its tokens scale with), not the group.
      inputs: group.size,
    }));
  },
  async execute(ctx, { id, key, group }) {
    const step = ctx.step;
    const members = await ctx.store.groupMembers(ctx.scope, step.from, step.groupBy, ORDER_KEY, group);
    const result = step.operator
      ? { text: applyAggregateOperator(step.operator, members.map((m) => m.content)), audit: { operator: step.operator.kind } as Audit }
      : await ctx.callModel(
          "summarize",
          ctx.render({ records: members.map(recordVars), group: { key: group.groupKey, scope: group.scope, size: group.size }, scope: group.scope }),
          members,
        );
    const metadata = inheritedMetadata(members);
    if ("period" in step.groupBy) metadata.time = { ...(metadata.time as object), period: group.groupKey };
    else metadata.group = { key: group.groupKey };
    return [
      ctx.newRecord({
        workKey: key,
        materializationKey: key,
        content: result.text,
        scope: group.scope,
        sources: members.map((m) => m.id),
        groupKey: id,
        metadata,
        audit: result.audit,
      }),
    ];
  },
});
