import { z } from "zod";
import { isRestricted } from "../../services/api-keys";
import { ancestorsByStep, neighbourhood } from "../../search/neighbourhood";
import { getRecord, leaves, lineage, listByStep, sources } from "../../search/provenance";
import { recordOriginal } from "../../services/media-originals";
import { deletedMemories, memoryHistory, restoreMemory } from "../../services/memories";
import { purgeRecord, purgeScope } from "../../services/purge";
import { assertMayReach, redactLineage, visibleOnly } from "../../services/record-visibility";
import { deletedMemorySchema, leavesResultSchema, lineageResultSchema, memoryHistorySchema, purgeResultSchema, recordDetailSchema, recordSummarySchema } from "../schemas";
import { actorRef, createTRPCRouter, pipelineProcedure, workspaceProcedure } from "../trpc";

/** With pipelineId (+ branch), the record must be one that branch shows. */
const recordRef = z.object({ id: z.string().min(1).max(200), pipelineId: z.string().min(1).optional(), branch: z.string().default("main") });
const ref = (input: { pipelineId?: string; branch: string }) => (input.pipelineId ? { pipelineId: input.pipelineId, branch: input.branch } : undefined);

/**
 * A key limited to pipelines or a scope reaches only records inside them (others answer "not
 * found"); the records a read reaches from there are filtered too (record-visibility.ts).
 */
const visibleRecord = workspaceProcedure("pipelines:read")
  .meta({ keyRestrictions: "enforced" })
  .input(recordRef)
  .use(async ({ ctx, input, next }) => {
    if (ctx.restrictions && isRestricted(ctx.restrictions)) {
      const record = await ctx.db.record.findFirst({ where: { id: input.id, workspaceId: ctx.workspace.id }, select: { pipelineId: true, scope: true } });
      assertMayReach(ctx.restrictions, record, `Record "${input.id}"`);
    }
    return next();
  });

export const recordRouter = createTRPCRouter({
  /** An image record's stored original (bounded size), for the explorer's picture beside the OCR text. */
  original: visibleRecord
    .meta({ rest: { method: "GET", path: "/records/{id}/original", summary: "An image record's stored original (a data URL)", tag: "Records" } })
    .input(recordRef)
    .output(z.object({ recordId: z.string(), name: z.string(), type: z.string(), width: z.number().int(), height: z.number().int(), bytes: z.number().int(), dataUrl: z.string() }))
    .query(({ ctx, input }) => recordOriginal(ctx.db, ctx.workspace.id, input.id)),
  get: visibleRecord
    .meta({ rest: { method: "GET", path: "/records/{id}", summary: "Get a record with its metadata, audit and provenance counts", tag: "Records" } })
    .input(recordRef)
    .output(recordDetailSchema)
    .query(({ ctx, input }) => getRecord(ctx.db, ctx.workspace.id, input.id, ref(input))),
  sources: visibleRecord
    .meta({ rest: { method: "GET", path: "/records/{id}/sources", summary: "The records a record was made from", tag: "Records" } })
    .input(recordRef)
    .output(z.array(recordSummarySchema))
    .query(async ({ ctx, input }) => visibleOnly(ctx.restrictions, await sources(ctx.db, ctx.workspace.id, input.id, ref(input)))),
  leaves: visibleRecord
    .meta({ rest: { method: "GET", path: "/records/{id}/leaves", summary: "The source records a record derives from, through every step", tag: "Records" } })
    .output(leavesResultSchema)
    .input(recordRef.extend({ maxDepth: z.number().int().min(1).max(50).default(10), maxCount: z.number().int().min(1).max(10_000).default(100) }))
    .query(async ({ ctx, input }) => {
      const found = await leaves(ctx.db, ctx.workspace.id, input.id, { maxDepth: input.maxDepth, maxCount: input.maxCount }, ref(input));
      return { ...found, leaves: visibleOnly(ctx.restrictions, found.leaves) };
    }),
  lineage: visibleRecord
    .meta({ rest: { method: "GET", path: "/records/{id}/lineage", summary: "The tree of a record's sources", tag: "Records" } })
    .output(lineageResultSchema)
    .input(recordRef.extend({ maxDepth: z.number().int().min(1).max(50).default(10), maxNodes: z.number().int().min(1).max(5000).default(500) }))
    .query(async ({ ctx, input }) => redactLineage(ctx.restrictions, await lineage(ctx.db, ctx.workspace.id, input.id, { maxDepth: input.maxDepth, maxNodes: input.maxNodes }, ref(input)))),
  /** A record and everything derived from it, on every branch (GDPR); `dryRun` lists exactly that and deletes nothing. */
  purge: workspaceProcedure("records:purge")
    .meta({ audit: { action: "purge", writtenBy: "server/services/purge.ts, in the purge's transaction (a dry run deletes nothing and leaves none)" } })
    .meta({ rest: { method: "POST", path: "/records/{id}/purge", summary: "Purge a record and everything derived from it (dryRun=true lists the cascade)", tag: "Records" } })
    .input(z.object({ id: z.string().min(1).max(200), dryRun: z.boolean().default(false) }))
    .output(purgeResultSchema)
    .mutation(({ ctx, input }) => purgeRecord(ctx.db, { workspaceId: ctx.workspace.id, actor: actorRef(ctx.actor), dryRun: input.dryRun }, input.id)),
  /** Every record of a scope (prefix) in the pipeline, what derives from them, and the scope's live sessions. */
  purgeScope: pipelineProcedure("records:purge")
    .meta({ audit: { action: "purge", writtenBy: "server/services/purge.ts, in the purge's transaction (a dry run deletes nothing and leaves none)" } })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/purge", summary: "Purge a scope's records, everything derived from them and its live sessions (dryRun=true lists the cascade)", tag: "Records" } })
    .input(z.object({ scope: z.string().min(1).max(256), dryRun: z.boolean().default(false) }))
    .output(purgeResultSchema)
    .mutation(({ ctx, input }) => purgeScope(ctx.db, { workspaceId: ctx.workspace.id, actor: actorRef(ctx.actor), dryRun: input.dryRun }, ctx.pipeline.id, input.scope)),
  /** Parents and children grouped by step with counts (a page of one group with direction + step + offset). */
  neighbourhood: workspaceProcedure("pipelines:read")
    .input(
      recordRef.extend({
        limit: z.number().int().min(1).max(200).default(25),
        direction: z.enum(["parents", "children"]).optional(),
        step: z.string().min(1).max(200).optional(),
        offset: z.number().int().min(0).max(10_000_000).default(0),
      }),
    )
    .query(({ ctx, input }) =>
      neighbourhood(ctx.db, ctx.workspace.id, input.id, { limit: input.limit, direction: input.direction, step: input.step, offset: input.offset }, ref(input)),
    ),
  /** Ancestors beyond the parents, counted per step. */
  ancestry: workspaceProcedure("pipelines:read")
    .input(recordRef)
    .query(({ ctx, input }) => ancestorsByStep(ctx.db, ctx.workspace.id, input.id, ref(input))),
  listByStep: workspaceProcedure("pipelines:read")
    .input(
      z.object({
        pipelineId: z.string().min(1),
        branch: z.string().default("main"),
        step: z.string().min(1),
        scope: z.string().max(256).optional(),
        period: z.string().max(40).optional(),
        conversationId: z.string().max(500).optional(),
        cursor: z.string().max(1000).nullish(),
        limit: z.number().int().min(1).max(200).default(50),
      }),
    )
    .query(({ ctx, input }) => listByStep(ctx.db, { ...input, workspaceId: ctx.workspace.id })),
  /** A memory's versions (consolidate steps): what it said when, and which fact changed it. */
  history: workspaceProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "GET", path: "/records/{id}/history", summary: "A memory's history: every version, when and which fact changed it", tag: "Memories" } })
    .input(z.object({ id: z.string().min(1).max(200), branch: z.string().min(1).max(200).default("main") }))
    .output(memoryHistorySchema)
    .query(async ({ ctx, input }) => {
      // A key limited to pipelines or a scope: another scope's record answers "not found" before anything is said about it.
      if (ctx.restrictions && isRestricted(ctx.restrictions)) {
        const record = await ctx.db.record.findFirst({ where: { id: input.id, workspaceId: ctx.workspace.id }, select: { pipelineId: true, scope: true } });
        assertMayReach(ctx.restrictions, record, `Record "${input.id}"`);
      }
      return memoryHistory(ctx.db, ctx.workspace.id, input.id, { branch: input.branch });
    }),
  /** Restore a deleted memory on a branch (a new version; the tombstone stays in its history). */
  restore: workspaceProcedure("pipelines:write")
    .meta({ audit: { action: "memory.restore", target: (input) => `record:${String(input.id)}`, summary: (input) => ({ branch: input.branch ?? "main" }) } })
    .meta({ rest: { method: "POST", path: "/records/{id}/restore", summary: "Restore a deleted memory on a branch", tag: "Memories" } })
    .input(z.object({ id: z.string().min(1).max(200), branch: z.string().min(1).max(200).default("main") }))
    .output(memoryHistorySchema)
    .mutation(({ ctx, input }) =>
      restoreMemory(ctx.db, ctx.workspace.id, {
        recordId: input.id,
        branch: input.branch,
        userId: ctx.userId,
        actor: actorRef(ctx.actor),
      }),
    ),
  /** The deleted memories of a consolidate step on a branch. */
  deletedMemories: workspaceProcedure("pipelines:read")
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/memories/deleted", summary: "The deleted memories of a consolidate step", tag: "Memories" } })
    .input(
      z.object({
        pipelineId: z.string().min(1).max(200),
        branch: z.string().min(1).max(200).default("main"),
        step: z.string().min(1).max(64),
        scope: z.string().max(256).optional(),
        limit: z.number().int().min(1).max(1000).default(200),
      }),
    )
    .output(z.array(deletedMemorySchema))
    .query(({ ctx, input }) => deletedMemories(ctx.db, ctx.workspace.id, input)),
});
