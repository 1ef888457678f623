/**
 * Upload a file into a pipeline source: POST multipart/form-data with a `file` field (optional
 * `format`), or a raw body with `?filename=` (optional `?format=`, `?workspaceId=` to find a
 * pipeline by name). Auth: a signed-in session or a Bearer API key (same context as tRPC); the
 * caller needs `pipelines:write` in the pipeline's workspace. Who is asking and whether they may
 * write there is settled before a byte of the body is read; the body is then streamed to a file in
 * a private staging folder (inbox-roots.ts: mode 0700, outside every inbox root) under
 * SYNTHEX_MAX_UPLOAD_BYTES (413 beyond it) and handed to `importFile`.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { TRPCError } from "@trpc/server";
import { actorRef, createContext, roleIn, type Context } from "@/server/api/trpc";
import { can } from "@/server/auth/permissions";
import { getSessionUser } from "@/server/auth/session";
import { DomainError } from "@/server/core/errors";
import { apiRateLimit } from "@/server/http/api-rate-limit";
import { apiTooLargeResponse, BodyTooLargeError, declaresTooLarge, uploadBodyLimit } from "@/server/http/body-limit";
import { crossSiteRefusal } from "@/server/http/csrf";
import { receiveUpload } from "@/server/http/upload-body";
import { assertMayUpload, assertPipelineAllowed } from "@/server/services/api-keys";
import { importFile } from "@/server/services/imports";
import { makeStagingDir } from "@/server/services/inbox-roots";
import { getDb } from "@/server/store/db";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

const STATUS: Record<string, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
};

const CODES = Object.fromEntries(Object.entries(STATUS).map(([code, status]) => [status, code]));

/** The agent API's error shape: `{ error: { code, message } }`. */
function fail(status: number, message: string) {
  return Response.json({ error: { code: CODES[status] ?? (status >= 500 ? "INTERNAL_SERVER_ERROR" : "BAD_REQUEST"), message } }, { status });
}

/** The pipeline (by id, or by name inside the given / the API key's workspace) and the caller's role there. */
async function authorize(ctx: Context, pipelineRef: string, workspaceHint: string | null) {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in or send an API key." });
  const workspaceId = ctx.actor.kind === "apiKey" ? ctx.actor.workspaceId : workspaceHint;
  const pipeline =
    (await ctx.db.pipeline.findFirst({ where: { id: pipelineRef, ...(workspaceId ? { workspaceId } : {}) } })) ??
    (workspaceId ? await ctx.db.pipeline.findFirst({ where: { name: pipelineRef, workspaceId } }) : null);
  const role = pipeline ? await roleIn(ctx.db, ctx.actor, pipeline.workspaceId) : null;
  // Same answer for "does not exist", "not yours" and "not among the key's pipelines".
  const missing = () => new TRPCError({ code: "NOT_FOUND", message: "Pipeline not found, or you are not a member of its workspace." });
  if (!pipeline || !role) throw missing();
  if (ctx.actor.kind === "apiKey") assertPipelineAllowed(ctx.actor.restrictions, pipeline.id, missing);
  if (!can(role, "pipelines:write")) throw new TRPCError({ code: "FORBIDDEN", message: `Your role (${role}) does not allow pipelines:write.` });
  if (ctx.actor.kind === "apiKey") assertMayUpload(ctx.actor.restrictions);
  return pipeline;
}

export async function POST(req: Request, { params }: { params: Promise<{ pipelineId: string; source: string }> }) {
  // A cookie-signed upload must come from the app's own pages (server/http/csrf.ts).
  const refused = crossSiteRefusal(req, { bodies: "upload" });
  if (refused) return refused;
  const { pipelineId, source } = await params;
  const url = new URL(req.url);
  const limit = uploadBodyLimit();
  let dir: string | null = null;
  try {
    const db = await getDb();
    const authorization = req.headers.get("authorization");
    const ctx = await createContext({ db, session: authorization ? null : await getSessionUser(), authorization });
    if (ctx.actor?.kind === "apiKey") {
      const limited = await apiRateLimit(ctx.actor);
      if (limited) return limited;
    }
    // Nothing of the body is read before this point.
    const pipeline = await authorize(ctx, decodeURIComponent(pipelineId), url.searchParams.get("workspaceId"));
    if (declaresTooLarge(req, limit)) return apiTooLargeResponse(limit);
    if (!req.body) return fail(400, "The request has no body.");

    // A private folder (0700) outside every inbox root: no workspace's inbox can see an upload.
    dir = await makeStagingDir("upload-");
    const received = await receiveUpload(req.body, req.headers.get("content-type") ?? "", dir, limit, url.searchParams.get("filename") ?? "upload");
    if (!received.file) return fail(400, 'Send the file in a multipart field named "file".');
    const result = await importFile(db, {
      workspaceId: pipeline.workspaceId,
      pipelineId: pipeline.id,
      source: decodeURIComponent(source),
      path: received.file,
      // Records and messages name the uploaded file, never the temp path.
      displayName: path.basename(received.file),
      format: (received.fields.format ?? url.searchParams.get("format")) || undefined,
      // The import writes its own audit entry (source.import): no procedure wraps this route.
      actor: actorRef(ctx.actor!),
    });
    return Response.json({ ...result, fileName: path.basename(received.file) });
  } catch (err) {
    if (err instanceof BodyTooLargeError) return apiTooLargeResponse(limit);
    if (err instanceof TRPCError) return fail(STATUS[err.code] ?? 500, err.message);
    if (err instanceof DomainError) return fail(STATUS[err.code] ?? 400, err.message);
    // An unexpected failure is logged here with its detail; the caller gets no internals.
    console.error("upload failed", err);
    return fail(500, "The upload failed on the server; the server log has the detail.");
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}
