import { z } from "zod";
import { getSession, ingestInputSchema, ingestMessages } from "../../services/ingest";
import { createTRPCRouter, pipelineProcedure } from "../trpc";

const source = z.string().min(1).max(200).meta({ description: "A source of the pipeline's spec, e.g. chats." });

export const ingestRouter = createTRPCRouter({
  /** Append messages to a session (opened on first use); `close` turns it into a record and requests a run. */
  messages: pipelineProcedure("pipelines:write")
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/sources/{source}/messages", summary: "Ingest messages of a live session", tag: "Ingest" } })
    .input(ingestInputSchema.extend({ source }))
    .output(
      z.object({
        sessionId: z.string(),
        accepted: z.number().int(),
        messageCount: z.number().int(),
        status: z.enum(["open", "closed"]),
        recordId: z.string().nullable(),
        runRequested: z.boolean(),
      }),
    )
    .mutation(({ ctx, input }) =>
      ingestMessages(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, source: input.source }, {
        sessionId: input.sessionId,
        scope: input.scope,
        title: input.title,
        messages: input.messages,
        close: input.close,
      }),
    ),
  session: pipelineProcedure("pipelines:read")
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/sources/{source}/sessions/{sessionId}", summary: "A live session: status and messages so far", tag: "Ingest" } })
    .input(z.object({ source, sessionId: z.string().min(1).max(200) }))
    .output(
      z.object({
        sessionId: z.string(),
        scope: z.string(),
        title: z.string().nullable(),
        status: z.string(),
        messageCount: z.number().int(),
        lastMessageAt: z.date(),
        closedAt: z.date().nullable(),
        recordId: z.string().nullable(),
        messages: z.array(z.object({ position: z.number().int(), role: z.string(), content: z.string(), time: z.date() })),
      }),
    )
    .query(({ ctx, input }) => getSession(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, source: input.source }, input.sessionId)),
});
