/**
 * fold: N ordered → 1 per scope, sequential state. Resumes from the newest checkpoint whose prefix
 * fingerprint still matches the current sequence, and compresses the state when it grows too big.
 */
import type { FoldStep } from "../../pipeline/spec";
import { countTokens } from "../../llm/tokens";
import { foldKey, sequenceFingerprint } from "../keys";
import { metadataAt, recordVars } from "../step-context";
import type { Audit, Metadata, OrderedRef } from "../types";
import { plannedKind, type PlannedItem } from "./planned";

interface ScopeItem extends PlannedItem {
  refs: OrderedRef[];
}

export const foldKind = plannedKind<FoldStep, ScopeItem>({
  type: "fold",
  async wanted(ctx) {
    const items: ScopeItem[] = [];
    for (const scope of await ctx.store.scopesOf(ctx.run.branchId, ctx.step.from)) {
      const refs = await ctx.store.orderedRefs(ctx.run.branchId, ctx.step.from, scope, ctx.step.orderKey);
      // Stats count the records folded (fewer when resuming from a checkpoint), not the scopes.
      items.push({ id: scope, key: foldKey(ctx.step.name, ctx.svh, scope, sequenceFingerprint(refs.map((r) => r.contentFingerprint))), refs, inputs: 0 });
    }
    return items;
  },
  async execute(ctx, { id: scope, key, refs }) {
    const { step, store } = ctx;
    const every = step.checkpointEvery;
    const prefixes = new Map<number, string>();
    for (let pos = every; pos <= refs.length; pos += every) {
      prefixes.set(pos, sequenceFingerprint(refs.slice(0, pos).map((r) => r.contentFingerprint)));
    }
    const found = ctx.options.full ? [] : await store.getCheckpoints(ctx.run.pipelineId, ctx.svh, scope, [...prefixes.values()]);
    const resume = found.filter((c) => prefixes.get(c.position) === c.prefixFingerprint).sort((a, b) => b.position - a.position)[0];
    let state = resume?.state ?? step.initialState ?? "";
    let audit: Audit = {};
    const totals = { tokensIn: 0, tokensOut: 0, costUsd: 0 };
    const chunkSize = ctx.options.batchSize;
    for (let pos = resume?.position ?? 0; pos < refs.length; pos += chunkSize) {
      await ctx.checkCancelled();
      const chunk = await store.getRecords(refs.slice(pos, pos + chunkSize).map((r) => r.id));
      const byId = new Map(chunk.map((r) => [r.id, r]));
      for (let i = 0; i < chunk.length; i++) {
        const index = pos + i;
        const record = byId.get(refs[index]!.id)!;
        ctx.stats.input += 1;
        const prompt = ctx.render({ state, record: recordVars(record), records: [recordVars(record)], scope });
        const result = await ctx.callModel("fold", prompt, [record], { state, maxOutputTokens: step.maxStateTokens });
        state = result.text;
        audit = result.audit;
        totals.tokensIn += result.audit.tokensIn ?? 0;
        totals.tokensOut += result.audit.tokensOut ?? 0;
        totals.costUsd += result.audit.costUsd ?? 0;
        if (countTokens(state) > step.maxStateTokens) {
          const compressed = await ctx.callModel("compress", ctx.render({ state, scope }), [], { state, maxOutputTokens: Math.floor(step.maxStateTokens / 2) });
          state = compressed.text;
        }
        const position = index + 1;
        const prefix = prefixes.get(position);
        if (prefix) await store.putCheckpoint(ctx.scope, scope, { position, prefixFingerprint: prefix, state });
      }
    }
    const last = refs.length ? (await store.getRecords([refs.at(-1)!.id]))[0] : undefined;
    const metadata: Metadata = { step: { sequence: refs.length } };
    const lastTime = last ? metadataAt(last.metadata, "time") : undefined;
    if (lastTime) metadata.time = lastTime;
    return [
      ctx.newRecord({
        workKey: key,
        materializationKey: key,
        content: state || "(empty)",
        scope,
        sources: refs.map((r) => r.id),
        groupKey: scope,
        metadata,
        audit: { ...audit, ...totals, resumedFrom: resume?.position ?? 0 } as Audit,
      }),
    ];
  },
});
