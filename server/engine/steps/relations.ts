/**
 * relations (Synapsis): one record per belief of a scope — subject —predicate→ object with its
 * valid time (`validFrom`/`validTo`: when it was true) and transaction time (`learnedAt`: when we
 * learned it), `metadata.custom.belief`, pointed under the belief id, with provenance to the source
 * turns. Every belief is pointed, current and superseded alike: a later source that changes a
 * functional fact supersedes the earlier belief and both are kept (server/engine/belief-extract.ts).
 * Entities named together are linked by "mentioned with" beliefs, so the graph is connected.
 *
 * `from` lists the text step(s) and the entities step; the kind tells them apart by their records
 * (entity records carry `metadata.custom.entity`).
 */
import type { RelationsStep } from "../../pipeline/spec";
import { beliefSentence, extractBeliefs, type BeliefMeta, type BeliefSource } from "../belief-extract";
import { entityLookup, type EntityMeta } from "../entity-extract";
import { metadataAt } from "../step-context";
import { entityOf } from "./entities";
import { scopedKind, type ScopedOutput } from "./scoped";

/** The belief of a belief record (`metadata.custom.belief`). */
export function beliefOf(r: { metadata: Record<string, unknown> }) {
  return metadataAt(r.metadata, "custom.belief") as BeliefMeta | undefined;
}

export const relationsKind = scopedKind<RelationsStep>({
  type: "relations",
  groupKeyOf: (r) => beliefOf(r)?.id,
  async build(ctx, scope, inputs) {
    const entities: EntityMeta[] = [];
    const sources: BeliefSource[] = [];
    for (const { records } of inputs) {
      for (const r of records) {
        const entity = entityOf(r);
        if (entity) {
          entities.push(entity);
          continue;
        }
        const time = metadataAt(r.metadata, "time.created_at");
        sources.push({ recordId: r.id, time: typeof time === "string" ? time : null, learnedAt: r.createdAt.toISOString(), content: r.content });
      }
    }
    if (!entities.length) return [];
    const index = {
      lookup: entityLookup(entities),
      names: new Map(entities.map((e) => [e.id, e.name])),
      forms: entities.flatMap((e) => [e.name, ...e.aliases]),
    };
    const beliefs = extractBeliefs(scope, sources, index, { functional: ctx.step.functional, coMentions: ctx.step.coMentions });
    return beliefs.map(
      (belief): ScopedOutput => ({
        groupKey: belief.id,
        content: beliefSentence(belief),
        metadata: { ...(belief.validFrom ? { time: { created_at: belief.validFrom } } : {}), custom: { belief } },
        sources: belief.sources,
        audit: { operator: "relations:offline" },
      }),
    );
  },
});
