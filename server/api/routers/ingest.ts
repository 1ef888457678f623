import { z } from "zod";
import { effectiveScope } from "../../services/api-keys";
import { getSession, ingestInputSchema, ingestMessages } from "../../services/ingest";
import { noteInputSchema } from "../../core/note";
import { addNote } from "../../services/notes";
import { createTRPCRouter, pipelineProcedure } from "../trpc";

const source = z.string().min(1).max(200).meta({ description: "A source of the pipeline's spec, e.g. chats." });

export const ingestRouter = createTRPCRouter({
  /** Append messages to a session (opened on first use); `close` turns it into a record and requests a run. */
  messages: pipelineProcedure("pipelines:write")
    .meta({ keyRestrictions: "enforced" })
    .meta({
      audit: {
        none: "agents' high-volume data writes (an entry per call would bury every other change); the run a closed session starts is audited (run.start by system, server/services/ingest.ts), and the session keeps its messages",
      },
    })
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
    // Which scope the session is in, and whether this caller may write it, is decided by the service (one place for every surface).
    .mutation(async ({ ctx, input }) =>
      ingestMessages(
        ctx.db,
        { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, source: input.source },
        { sessionId: input.sessionId, scope: input.scope, title: input.title, messages: input.messages, close: input.close },
        new Date(),
        { restrictions: ctx.restrictions },
      ),
    ),
  /** Quick add: a note or pasted text becomes a source item (same note twice: nothing added); a new one requests a run. */
  addItem: pipelineProcedure("pipelines:write")
    .meta({ keyRestrictions: "enforced" })
    .meta({
      audit: {
        action: "source.addNote",
        target: (_input, out) => `pipeline:${(out as { pipelineId: string }).pipelineId}/source:${(out as { source: string }).source}`,
        // Counts and ids only: never the note's text, title or url.
        summary: (_input, out) => {
          const o = out as { recordId: string | null; added: boolean; chars: number; runRequested: boolean };
          return { recordId: o.recordId, added: o.added, chars: o.chars, runRequested: o.runRequested };
        },
      },
    })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/sources/{source}/items", summary: "Add a note (or pasted text) as a source item", tag: "Ingest" } })
    .input(noteInputSchema.extend({ source }))
    .output(
      z.object({
        pipelineId: z.string(),
        source: z.string(),
        recordId: z.string().nullable(),
        scope: z.string(),
        added: z.boolean().meta({ description: "false: the same note is there already (nothing added)." }),
        chars: z.number().int(),
        runRequested: z.boolean(),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      addNote(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, source: input.source }, {
        text: input.text,
        title: input.title,
        url: input.url,
        scope: effectiveScope(ctx.restrictions, input.scope),
      }),
    ),
  session: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
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
        messages: z.array(z.object({ position: z.number().int(), role: z.string(), content: z.string(), time: z.date(), metadata: z.record(z.string(), z.unknown()) })),
      }),
    )
    .query(({ ctx, input }) => getSession(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, source: input.source }, input.sessionId, { restrictions: ctx.restrictions })),
});
