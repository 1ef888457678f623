/**
 * merge: N sources → N, mechanical (no model): union with dedupe (content hash, metadata match)
 * and a conflict rule (prefer latest, prefer first, keep all).
 */
import type { MergeStep } from "../../pipeline/spec";
import { mergeKey } from "../keys";
import { EngineError } from "../model";
import type { EngineRecord } from "../types";
import { plannedKind, type PlannedItem } from "./planned";

interface Candidate {
  id: string;
  step: string;
  contentFingerprint: string;
  createdAt: string | null;
  fields: string[];
}

interface DedupeItem extends PlannedItem {
  /** The duplicates, the chosen one first. */
  sorted: Candidate[];
  /** The chosen record, loaded for the whole batch at once. */
  winner?: EngineRecord;
}

export const mergeKind = plannedKind<MergeStep, DedupeItem>({
  type: "merge",
  async wanted(ctx) {
    const step = ctx.step;
    if (typeof step.dedupe === "object" && "fuzzy" in step.dedupe) {
      throw new EngineError(`merge "${step.name}": fuzzy dedupe is not supported yet; use content_hash or metadataMatch`, "permanent");
    }
    const fields = typeof step.dedupe === "object" && "metadataMatch" in step.dedupe ? step.dedupe.metadataMatch : [];
    const candidates = await ctx.store.mergeCandidates(ctx.run.branchId, step.from, fields);
    const order = new Map(step.from.map((name, i) => [name, i]));
    const dedupeKeyOf = (c: Candidate) => {
      if (step.conflict === "keep_all" || step.dedupe === "none") return `id:${c.id}`;
      if (step.dedupe === "content_hash") return `fp:${c.contentFingerprint}`;
      return c.fields.every((f) => f !== "") ? `meta:${JSON.stringify(c.fields)}` : `id:${c.id}`;
    };
    const groups = new Map<string, Candidate[]>();
    for (const c of candidates) {
      const k = dedupeKeyOf(c);
      const list = groups.get(k);
      if (list) list.push(c);
      else groups.set(k, [c]);
    }
    const rank = (a: Candidate, b: Candidate) => {
      if (step.conflict === "prefer_latest") {
        const t = (b.createdAt ?? "").localeCompare(a.createdAt ?? "");
        if (t !== 0) return t;
      }
      const o = order.get(a.step)! - order.get(b.step)!;
      if (o !== 0) return o;
      const t = (a.createdAt ?? "").localeCompare(b.createdAt ?? "");
      return t !== 0 ? t : a.id.localeCompare(b.id);
    };
    return [...groups.entries()].map(([dedupeKey, members]) => {
      const sorted = [...members].sort(rank);
      return { id: dedupeKey, key: mergeKey(step.name, ctx.svh, dedupeKey, sorted[0]!.id), sorted, inputs: sorted.length };
    });
  },
  async prepare(ctx, batch) {
    const byId = new Map((await ctx.store.getRecords(batch.map((i) => i.sorted[0]!.id))).map((r) => [r.id, r]));
    for (const item of batch) item.winner = byId.get(item.sorted[0]!.id);
  },
  async execute(ctx, { id: dedupeKey, key, sorted, winner }) {
    const step = ctx.step;
    if (!winner) throw new Error(`merge "${step.name}": record ${sorted[0]!.id} is gone`);
    return [
      ctx.newRecord({
        workKey: key,
        materializationKey: key,
        content: winner.content,
        scope: winner.scope,
        sources: sorted.map((m) => m.id),
        groupKey: dedupeKey,
        metadata: { ...winner.metadata, merge: { duplicates: sorted.length, from: winner.step } },
        audit: { operator: `merge:${typeof step.dedupe === "string" ? step.dedupe : "metadataMatch"}:${step.conflict}` },
      }),
    ];
  },
  // A new upstream record changes at most one dedupe group.
  estimate: ({ pending, upstreamPending }) => Math.max(pending, upstreamPending),
});
