/**
 * insights (Synapsis): per scope, one record per insight — a new connection between two entities,
 * a monthly digest, a contradiction (`metadata.custom.insight`, pointed under the insight id, with
 * provenance to the belief records it is about) — and one feed record (pointed under
 * `<scope>\u001ffeed`, `metadata.custom.insightsFeed`): the newest insights as a context block.
 *
 * Only the feed has `time.created_at`, so a projection of the step (latest record per scope)
 * serves the feed, and its webhook fires when a scope's insights change. `from` lists the relations
 * step and, optionally, the entities step (mention counts per month for the digests).
 */
import type { InsightsStep } from "../../pipeline/spec";
import type { BeliefMeta } from "../belief-extract";
import type { EntityMeta } from "../entity-extract";
import { detectInsights, newestFirst, type Insight, type InsightMeta } from "../insight-detect";
import { metadataAt } from "../step-context";
import { entityOf } from "./entities";
import { beliefOf } from "./relations";
import { scopedKind, type ScopedOutput } from "./scoped";

/** Insights listed in a scope's feed (the newest). */
export const FEED_SIZE = 20;
const SOURCE_CAP = 200;

export const feedGroupKey = (scope: string) => `${scope}\u001ffeed`;

/** The insight of an insight record (`metadata.custom.insight`). */
export function insightOf(r: { metadata: Record<string, unknown> }) {
  return metadataAt(r.metadata, "custom.insight") as InsightMeta | undefined;
}

export const insightsKind = scopedKind<InsightsStep>({
  type: "insights",
  groupKeyOf: (r) => insightOf(r)?.id ?? (metadataAt(r.metadata, "custom.insightsFeed") ? feedGroupKey(r.scope) : undefined),
  async build(ctx, scope, inputs) {
    const beliefs: BeliefMeta[] = [];
    const entities: EntityMeta[] = [];
    const recordOfBelief = new Map<string, string>();
    for (const { records } of inputs) {
      for (const r of records) {
        const belief = beliefOf(r);
        if (belief) {
          beliefs.push(belief);
          recordOfBelief.set(belief.id, r.id);
          continue;
        }
        const entity = entityOf(r);
        if (entity) entities.push(entity);
      }
    }
    if (!beliefs.length) return [];
    const insights = detectInsights(scope, beliefs, entities, ctx.step.kinds);
    const sourcesOf = (i: Insight) => i.beliefs.map((b) => recordOfBelief.get(b)).filter((id): id is string => !!id).slice(0, SOURCE_CAP);
    const outputs: ScopedOutput[] = insights.map(({ text, ...insight }) => ({
      groupKey: insight.id,
      content: text,
      metadata: { custom: { insight } },
      sources: sourcesOf({ text, ...insight }),
      audit: { operator: `insights:${insight.kind}` },
    }));
    if (!insights.length) return outputs;
    const listed = newestFirst(insights).slice(0, FEED_SIZE);
    const counts = { connection: 0, digest: 0, contradiction: 0 };
    for (const i of insights) counts[i.kind] += 1;
    const latest = listed.map((i) => i.detectedAt).find((t): t is string => !!t);
    outputs.push({
      groupKey: feedGroupKey(scope),
      content: [
        `${counts.contradiction} contradiction${counts.contradiction === 1 ? "" : "s"}, ${counts.connection} connection${counts.connection === 1 ? "" : "s"}, ${counts.digest} digest${counts.digest === 1 ? "" : "s"}. Newest:`,
        ...listed.map((i) => `- [${i.kind}] ${i.title}`),
      ].join("\n"),
      metadata: { ...(latest ? { time: { created_at: latest } } : {}), custom: { insightsFeed: { counts, insights: listed.map((i) => i.id) } } },
      sources: [...new Set(listed.flatMap(sourcesOf))].slice(0, SOURCE_CAP),
      audit: { operator: "insights:feed" },
    });
    return outputs;
  },
});
