import { z } from "zod";
import { MAX_LIMIT, search, SEARCH_MODES } from "../../search/search";
import type { BranchContext } from "../../search/context";
import { effectiveScope } from "../../services/api-keys";
import { ask, ASK_MAX_K } from "../../services/ask";
import { brief } from "../../services/brief";
import { projection } from "../../services/projections";
import { maySeeRecord, visibleOnly } from "../../services/record-visibility";
import { DEFAULT_WALK_BEAM, DEFAULT_WALK_LIMIT, MAX_WALK_BEAM, MAX_WALK_LIMIT, WALK_BREADTHS, WALK_FALLBACKS, walk } from "../../search/walk";
import { answerPacketSchema, projectionResultSchema, searchResultSchema, walkResultSchema } from "../schemas";
import { logServed } from "../query-logging";
import { createTRPCRouter, pipelineProcedure, syncFirst } from "../trpc";

const filters = {
  scope: z.string().max(256).optional(),
  from: z.string().max(40).optional(),
  to: z.string().max(40).optional(),
  period: z.string().max(40).optional(),
  conversationId: z.string().max(500).optional(),
  metadata: z.record(z.string().max(200), z.union([z.string().max(1000), z.number(), z.boolean()])).optional(),
};

/** Search options; the pipeline and branch come from `pipelineProcedure`'s input. */
export const searchInput = syncFirst(z.object({
  // Length is checked by the service, with a clear message.
  query: z.string(),
  mode: z.enum(SEARCH_MODES).default("hybrid"),
  step: z.union([z.string().min(1), z.array(z.string().min(1)).max(50)]).optional(),
  output: z.string().optional(),
  exact: z.boolean().default(false),
  limit: z.number().int().min(1).max(MAX_LIMIT).default(20),
  recency: z.object({ halfLifeDays: z.number().positive().max(36500), weight: z.number().min(0).max(1).optional() }).optional(),
  dedupe: z.boolean().default(true),
  fusion: z
    .object({
      method: z.enum(["rrf", "sum"]).optional(),
      k: z.number().min(0).max(1000).optional(),
      fts: z.number().min(0).max(100).optional(),
      semantic: z.number().min(0).max(100).optional(),
      graph: z.number().min(0).max(100).optional(),
      context: z.number().min(0).max(10).optional(),
      semanticFloor: z.number().min(-1).max(1).optional(),
    })
    .optional(),
  minScore: z.number().min(0).max(10).optional(),
  dates: z.enum(["boost", "filter", "off"]).default("boost"),
  snippets: z.boolean().default(true),
  ...filters,
}));

/** The branch the pipeline procedure resolved, handed to the search so it is not read again. */
const branchContext = (ctx: { workspace: { id: string }; pipeline: { id: string }; branch: { id: string; name: string }; spec: BranchContext["spec"] }): BranchContext => ({
  workspaceId: ctx.workspace.id,
  pipelineId: ctx.pipeline.id,
  branchId: ctx.branch.id,
  branchName: ctx.branch.name,
  spec: ctx.spec,
});

export const searchRouter = createTRPCRouter({
  search: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ audit: { none: "a read (its POST route only carries long options); changes nothing" } })
    .meta({
      rest: [
        { method: "GET", path: "/pipelines/{pipelineId}/search", summary: "Search a pipeline's memory (query-string options)", tag: "Search" },
        { method: "POST", path: "/pipelines/{pipelineId}/search", summary: "Search a pipeline's memory (JSON options: fusion, recency, metadata)", tag: "Search" },
      ],
    })
    .input(searchInput)
    .use(async ({ ctx, input, next }) => {
      const started = performance.now();
      const result = await next();
      if (result.ok) logServed(ctx, "search", input as Record<string, unknown>, result.data, started);
      return result;
    })
    .output(syncFirst(searchResultSchema))
    .query(async ({ ctx, input }) => {
      const found = await search(ctx.db, { ...input, scope: effectiveScope(ctx.restrictions, input.scope), workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name, branchContext: branchContext(ctx) });
      return { ...found, hits: visibleOnly(ctx.restrictions, found.hits) };
    }),
  ask: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ audit: { none: "a read that may call a model; stores nothing (questions are record-like content, kept out of the log)" } })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/ask", summary: "Ask a question: evidence with provenance, an answer with citations, a critic verdict, confidence (abstains when weak)", tag: "Search" } })
    .input(
      z.object({
        question: z.string().max(1000).meta({ description: "The question, in natural language." }),
        scope: z.string().max(256).optional().meta({ description: "Scope prefix to answer from, e.g. acme:user-42." }),
        k: z.number().int().min(1).max(ASK_MAX_K).default(5).meta({ description: "How many records of evidence to retrieve." }),
        mode: z.enum(SEARCH_MODES).optional().meta({ description: "How evidence is retrieved; default: graph when the pipeline has entities and relations steps, else hybrid." }),
        step: z.string().min(1).max(200).optional(),
        model: z.string().max(200).optional().meta({ description: "provider/model that writes the answer; omitted: the offline extractive answer." }),
        criticModel: z.string().max(200).optional().meta({ description: "provider/model of the critic (default: the answer model)." }),
        minConfidence: z.number().min(0).max(1).default(0.2).meta({ description: "Below this confidence the packet abstains." }),
      }),
    )
    .use(async ({ ctx, input, next }) => {
      const started = performance.now();
      const result = await next();
      if (result.ok) logServed(ctx, "ask", input as Record<string, unknown>, result.data, started);
      return result;
    })
    .output(syncFirst(answerPacketSchema))
    .mutation(({ ctx, input }) =>
      ask(ctx.db, { ...input, scope: effectiveScope(ctx.restrictions, input.scope), restrictions: ctx.restrictions, workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name, branchContext: branchContext(ctx) }),
    ),
  brief: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/brief", summary: "The brief for a scope: recent turns and the projected memory", tag: "Search" } })
    .input(z.object({ scope: z.string().min(1).max(256), output: z.string().optional(), turns: z.number().int().min(1).max(200).default(20) }))
    .use(async ({ ctx, input, next }) => {
      const started = performance.now();
      const result = await next();
      if (result.ok) logServed(ctx, "brief", input as Record<string, unknown>, result.data, started);
      return result;
    })
    .output(
      z.object({
        scope: z.string(),
        recentTurns: z.array(z.object({ sessionId: z.string(), role: z.string(), content: z.string(), time: z.date() })),
        openSessions: z.number().int(),
        projection: projectionResultSchema.nullable(),
        projections: z.array(projectionResultSchema).meta({ description: "Every projection output of the pipeline for the scope (e.g. Synapse's rolling summary and narrative state)." }),
        now: z.date().meta({ description: "The server's time: the temporal authority for relative dates." }),
      }),
    )
    .query(({ ctx, input }) =>
      brief(ctx.db, { ...input, scope: effectiveScope(ctx.restrictions, input.scope)!, restrictions: ctx.restrictions, workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name }),
    ),
  /** Top-down retrieval (Pyramid): from a high step through provenance to the records and sources closest to the query. */
  walk: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/walk", summary: "Walk the memory top-down: from a high step (a synthesis) through each level to the closest records and their sources", tag: "Search" } })
    .input(
      z.object({
        query: z.string().max(1000),
        from: z.string().min(1).max(64).meta({ description: "The step to start from, e.g. synthesis (the top of the pyramid)." }),
        scope: z.string().max(256).optional(),
        beam: z.number().int().min(1).max(MAX_WALK_BEAM).default(DEFAULT_WALK_BEAM).meta({ description: "Records kept per level on the way down." }),
        limit: z.number().int().min(1).max(MAX_WALK_LIMIT).default(DEFAULT_WALK_LIMIT),
        breadth: z.enum(WALK_BREADTHS).default("question").meta({ description: "question: each level keeps every record scoring at least half its best (beam to 20); fixed: exactly beam." }),
        fallback: z.enum(WALK_FALLBACKS).default("flat").meta({ description: "flat: when the walk does not reach the lowest step's best record in the scope, return that step ranked flat (and fill a short branch from it); none: the walk's hits." }),
      }),
    )
    .use(async ({ ctx, input, next }) => {
      const started = performance.now();
      const result = await next();
      if (result.ok) logServed(ctx, "walk", input as Record<string, unknown>, result.data, started);
      return result;
    })
    .output(walkResultSchema)
    .query(({ ctx, input }) =>
      walk(ctx.db, {
        ...input,
        scope: effectiveScope(ctx.restrictions, input.scope),
        visible: (record) => maySeeRecord(ctx.restrictions, record),
        workspaceId: ctx.workspace.id,
        pipelineId: ctx.pipeline.id,
        branch: ctx.branch.name,
      }),
    ),
  projection: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/outputs/{output}", summary: "Read a projection output (the context block for a scope)", tag: "Search" } })
    .output(projectionResultSchema)
    .input(z.object({ output: z.string().min(1), scope: z.string().max(256).optional() }))
    .query(({ ctx, input }) =>
      projection(ctx.db, ctx.pipeline.id, ctx.branch.name, input.output, effectiveScope(ctx.restrictions, input.scope), { workspaceId: ctx.workspace.id, restrictions: ctx.restrictions }),
    ),
});
