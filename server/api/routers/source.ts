import { z } from "zod";
import { inboxSettings, listInboxes, setInbox } from "../../services/source-inbox";
import { createTRPCRouter, pipelineProcedure, workspaceProcedure } from "../trpc";

const source = z.string().min(1).max(200).meta({ description: "A source of the pipeline's spec, e.g. chats." });

/** Settings → Sources: an inbox folder on the server per pipeline source, watched while the app server runs. */
export const sourceRouter = createTRPCRouter({
  /** Whether this server has inbox folders on (SYNTHEX_INBOX_ROOTS), and this workspace's folder on the server (created when missing). */
  inboxSettings: workspaceProcedure("workspace:update")
    .meta({ rest: { method: "GET", path: "/sources/inbox-settings", summary: "Whether inbox folders are on, and this workspace's inbox folder on the server", tag: "Ingest" } })
    .output(
      z.object({
        enabled: z.boolean().meta({ description: "False when the server's operator has not set SYNTHEX_INBOX_ROOTS: inbox folders are off." }),
        folder: z.string().nullable().meta({ description: "This workspace's inbox folder on the server: a source's inbox is this folder or one below it (relative paths are taken from here)." }),
        folders: z.array(z.string()).meta({ description: "This workspace's folder under each root (the first is `folder`)." }),
      }),
    )
    .query(({ ctx }) => inboxSettings(ctx.workspace.id)),
  inboxes: workspaceProcedure("workspace:update")
    .meta({ rest: { method: "GET", path: "/sources/inboxes", summary: "Every pipeline source with its inbox folder", tag: "Ingest" } })
    .output(
      z.array(
        z.object({
          pipelineId: z.string(),
          pipelineName: z.string(),
          source: z.string(),
          path: z.string().nullable(),
          lastEvent: z.string().nullable(),
          lastEventAt: z.date().nullable(),
          problem: z.string().nullable().meta({ description: "Why this folder is not watched (inbox folders off, outside this workspace's folder, a symlink, missing), or null." }),
        }),
      ),
    )
    .query(({ ctx }) => listInboxes(ctx.db, ctx.workspace.id)),
  /** Set (a folder inside this workspace's inbox folder: relative to it, or absolute) or clear (null) a source's inbox folder. */
  setInbox: pipelineProcedure("workspace:update")
    .meta({
      audit: {
        action: "source.setInbox",
        target: (_input, out) => `pipeline:${(out as { pipelineId: string }).pipelineId}/source:${(out as { source: string }).source}`,
        summary: (_input, out) => ({ path: (out as { path: string | null }).path, previous: (out as { previous: string | null }).previous, changed: (out as { changed: boolean }).changed }),
      },
    })
    .meta({ rest: { method: "POST", path: "/pipelines/{pipelineId}/sources/{source}/inbox", summary: "Set or clear a source's inbox folder (watched by the app server)", tag: "Ingest" } })
    .input(z.object({ source, path: z.string().max(4096).nullable().meta({ description: "A folder inside this workspace's inbox folder (GET /sources/inbox-settings): relative to it (\"support-exports\") or an absolute path below it; null clears the inbox (records already imported stay)." }) }))
    .output(z.object({ pipelineId: z.string(), source: z.string(), path: z.string().nullable(), previous: z.string().nullable(), changed: z.boolean() }))
    .mutation(({ ctx, input }) =>
      setInbox(ctx.db, { workspaceId: ctx.workspace.id, pipelineId: ctx.pipeline.id, source: input.source, path: input.path, userId: ctx.userId }),
    ),
});
