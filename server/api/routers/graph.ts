import { z } from "zod";
import { effectiveScope } from "../../services/api-keys";
import {
  beliefDetail,
  entityNeighbourhood,
  getBeliefs,
  INSIGHT_KINDS,
  listEntities,
  listInsights,
  MAX_HOPS,
  MAX_NEIGHBOURS,
  type GraphBranch,
} from "../../services/graph";
import { visibleOnly } from "../../services/record-visibility";
import { beliefDetailSchema, entityListSchema, entityNeighbourhoodSchema, graphBeliefSchema, insightListSchema } from "../schemas";
import { createTRPCRouter, pipelineProcedure } from "../trpc";

const scope = z.string().max(256).optional().meta({ description: "Scope prefix, e.g. locomo:conv-26." });

/** Reads of the entity graph: a key limited to a scope reads only inside it. */
const graphRead = pipelineProcedure("pipelines:read").meta({ keyRestrictions: "enforced" });

/** The branch the procedure loaded, as the graph service reads it. */
function branchOf(ctx: { workspace: { id: string }; pipeline: { id: string }; branch: { id: string; name: string }; spec: GraphBranch["spec"] }): GraphBranch {
  return { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branchId: ctx.branch.id, branchName: ctx.branch.name, spec: ctx.spec };
}

export const graphRouter = createTRPCRouter({
  entities: graphRead
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/graph/entities", summary: "List or search the entities of the graph (by name or alias)", tag: "Graph" } })
    .input(
      z.object({
        q: z.string().max(200).optional().meta({ description: "Part of a name or alias, e.g. mel." }),
        scope,
        limit: z.number().int().min(1).max(200).default(30),
      }),
    )
    .output(entityListSchema)
    .query(({ ctx, input }) => listEntities(ctx.db, branchOf(ctx), { ...input, scope: effectiveScope(ctx.restrictions, input.scope) })),
  entity: graphRead
    .meta({
      rest: {
        method: "GET",
        path: "/pipelines/{pipelineId}/graph/entities/{entityId}",
        summary: "An entity's neighbourhood (beliefs as edges, neighbours up to N hops) and its beliefs over time",
        tag: "Graph",
      },
    })
    .input(
      z.object({
        entityId: z.string().min(1).max(200),
        scope,
        hops: z.number().int().min(1).max(MAX_HOPS).default(1),
        limit: z.number().int().min(1).max(MAX_NEIGHBOURS).default(12).meta({ description: "At most this many neighbour entities." }),
        timelineLimit: z.number().int().min(1).max(1000).default(200),
      }),
    )
    .output(entityNeighbourhoodSchema)
    .query(({ ctx, input }) => entityNeighbourhood(ctx.db, branchOf(ctx), { ...input, scope: effectiveScope(ctx.restrictions, input.scope) })),
  belief: graphRead
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/graph/beliefs/{beliefId}", summary: "A belief with its source records and supersession neighbours", tag: "Graph" } })
    .input(z.object({ beliefId: z.string().min(1).max(200), scope }))
    .output(beliefDetailSchema)
    .query(async ({ ctx, input }) => {
      const detail = await beliefDetail(ctx.db, branchOf(ctx), { ...input, scope: effectiveScope(ctx.restrictions, input.scope) });
      return { ...detail, sources: visibleOnly(ctx.restrictions, detail.sources) };
    }),
  beliefs: graphRead
    .input(z.object({ ids: z.array(z.string().min(1).max(200)).max(200), scope }))
    .output(z.array(graphBeliefSchema))
    .query(({ ctx, input }) => getBeliefs(ctx.db, branchOf(ctx), { ...input, scope: effectiveScope(ctx.restrictions, input.scope) })),
  insights: graphRead
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/insights", summary: "Insights: new connections, digests and contradictions, newest first", tag: "Graph" } })
    .input(
      z.object({
        scope,
        kind: z.enum(INSIGHT_KINDS).optional(),
        entity: z.string().min(1).max(200).optional().meta({ description: "Only insights naming this entity id." }),
        limit: z.number().int().min(1).max(500).default(100),
      }),
    )
    .output(insightListSchema)
    .query(({ ctx, input }) => listInsights(ctx.db, branchOf(ctx), { ...input, scope: effectiveScope(ctx.restrictions, input.scope) })),
});
