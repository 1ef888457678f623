/**
 * The memory API over a pipeline's memory step (a consolidate step): list the current memories of
 * a scope, the versions a source record led to, edit or delete one. The Mem0 and Zep compat
 * layers (server/compat) call these; every one honours an API key's pipelines and scope.
 */
import { z } from "zod";
import { notFound } from "../../core/errors";
import { effectiveScope } from "../../services/api-keys";
import { reviseMemory } from "../../services/memories";
import { getMemory, listMemories, listSessions, memoryStepOf, memoryVersionsOfSource } from "../../services/memory-reads";
import { assertMayReach, assertMaySeeRecord, visibleOnly } from "../../services/record-visibility";
import { actorRef, createTRPCRouter, pipelineProcedure, workspaceProcedure } from "../trpc";

const step = z.string().min(1).max(64).optional().meta({ description: "The consolidate step; default: `memories`, else the pipeline's only one." });

/** A memory version by record id, on a branch: the key must reach its pipeline and scope (else "not found"). */
const memoryWrite = workspaceProcedure("pipelines:write")
  .meta({ keyRestrictions: "enforced" })
  .input(z.object({ id: z.string().min(1).max(200), branch: z.string().min(1).max(200).default("main") }))
  .use(async ({ ctx, input, next }) => {
    const record = await ctx.db.record.findFirst({ where: { id: input.id, workspaceId: ctx.workspace.id }, select: { pipelineId: true, scope: true } });
    if (record) assertMaySeeRecord(ctx.restrictions, record, `Record "${input.id}"`);
    // A limited key: an id that does not exist answers like one outside its reach.
    assertMayReach(ctx.restrictions, record, `Record "${input.id}"`);
    return next();
  });

export const memoryRouter = createTRPCRouter({
  /** The current memories of the step on the branch (a scope and below), newest first. */
  list: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .input(z.object({ step, scope: z.string().max(256).optional() }))
    .query(async ({ ctx, input }) => {
      const memoryStep = memoryStepOf(ctx.spec, input.step);
      const memories = await listMemories(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name, step: memoryStep.name, scope: effectiveScope(ctx.restrictions, input.scope) });
      return { step: memoryStep.name, memories: visibleOnly(ctx.restrictions, memories) };
    }),
  /** A memory by its id (the same across versions): the version the branch shows (current or deleted). */
  get: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .input(z.object({ step, memoryId: z.string().min(1).max(200) }))
    .query(async ({ ctx, input }) => {
      const memory = await getMemory(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, branch: ctx.branch.name, step: memoryStepOf(ctx.spec, input.step).name, memoryId: input.memoryId });
      assertMaySeeRecord(ctx.restrictions, memory, `Memory "${input.memoryId}"`);
      return memory;
    }),
  /** The live sessions of a source (a scope and below; ids with a prefix), newest first. */
  sessions: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .input(z.object({ source: z.string().min(1).max(200), scope: z.string().max(256).optional(), idPrefix: z.string().max(200).optional(), limit: z.number().int().min(1).max(5000).default(1000) }))
    .query(async ({ ctx, input }) => {
      const sessions = await listSessions(ctx.db, { ...input, workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, scope: effectiveScope(ctx.restrictions, input.scope) });
      return visibleOnly(ctx.restrictions, sessions);
    }),
  /** The memory versions (decisions) a source record led to; `pending` while a run is queued or running. */
  ofSource: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .input(z.object({ step, recordId: z.string().min(1).max(200) }))
    .query(async ({ ctx, input }) => {
      const source = await ctx.db.record.findFirst({ where: { id: input.recordId, workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id }, select: { pipelineId: true, scope: true } });
      if (!source) throw notFound(`Record "${input.recordId}" not found.`);
      assertMaySeeRecord(ctx.restrictions, source, `Record "${input.recordId}"`);
      const found = await memoryVersionsOfSource(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, step: memoryStepOf(ctx.spec, input.step), recordId: input.recordId });
      return { ...found, versions: visibleOnly(ctx.restrictions, found.versions) };
    }),
  /** Edit a current memory: a new version made by the caller, which later runs keep. */
  update: memoryWrite
    .meta({ audit: { action: "memory.update", target: (input) => `record:${String(input.id)}`, summary: (input) => ({ branch: input.branch ?? "main" }) } })
    .input(
      z
        .object({
          content: z.string().trim().min(1).max(100_000).optional(),
          /** The memory's own key/value attributes (Mem0's `metadata`): replace the previous ones; later versions keep them. */
          attributes: z.record(z.string().max(200), z.unknown()).optional(),
        })
        .refine((v) => v.content !== undefined || v.attributes !== undefined, { message: "Give content, attributes or both." }),
    )
    .mutation(({ ctx, input }) =>
      reviseMemory(ctx.db, ctx.workspace.id, { recordId: input.id, branch: input.branch, change: { event: "UPDATE", content: input.content, attributes: input.attributes }, userId: ctx.userId, actor: actorRef(ctx.actor) }),
    ),
  /** Delete a current memory: a tombstone version (restorable, see record.restore). */
  delete: memoryWrite
    .meta({ audit: { action: "memory.delete", target: (input) => `record:${String(input.id)}`, summary: (input) => ({ branch: input.branch ?? "main" }) } })
    .mutation(({ ctx, input }) => reviseMemory(ctx.db, ctx.workspace.id, { recordId: input.id, branch: input.branch, change: { event: "DELETE" }, userId: ctx.userId, actor: actorRef(ctx.actor) })),
});

