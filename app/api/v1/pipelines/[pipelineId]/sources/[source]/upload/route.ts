/**
 * Upload a file into a pipeline source: POST multipart/form-data with a `file` field (optional
 * `format`, `workspaceId`), or a raw body with `?filename=`. Auth: a signed-in session or a Bearer
 * API key (same context as tRPC); the caller needs `pipelines:write` in the pipeline's workspace.
 * The body is streamed to a temp file and handed to `importFile`; the answer is its report.
 */
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline as pump } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { TRPCError } from "@trpc/server";
import { createContext, roleIn, type Context } from "@/server/api/trpc";
import { can } from "@/server/auth/permissions";
import { getSessionUser } from "@/server/auth/session";
import { DomainError } from "@/server/core/errors";
import { IMPORT_FORMATS, isImportFormat } from "@/server/importers";
import { importFile } from "@/server/services/imports";
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

function fail(status: number, message: string) {
  return Response.json({ error: message }, { status });
}

/** The pipeline (by id, or by name inside the given / the API key's workspace) and the caller's role there. */
async function authorize(ctx: Context, pipelineRef: string, workspaceHint: string | null) {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in or send an API key." });
  const workspaceId = ctx.actor.kind === "apiKey" ? ctx.actor.workspaceId : workspaceHint;
  const pipeline =
    (await ctx.db.pipeline.findFirst({ where: { id: pipelineRef, ...(workspaceId ? { workspaceId } : {}) } })) ??
    (workspaceId ? await ctx.db.pipeline.findFirst({ where: { name: pipelineRef, workspaceId } }) : null);
  const role = pipeline ? await roleIn(ctx.db, ctx.actor, pipeline.workspaceId) : null;
  // Same answer for "does not exist" and "not yours".
  if (!pipeline || !role) throw new TRPCError({ code: "NOT_FOUND", message: "Pipeline not found, or you are not a member of its workspace." });
  if (!can(role, "pipelines:write")) throw new TRPCError({ code: "FORBIDDEN", message: `Your role (${role}) does not allow pipelines:write.` });
  return pipeline;
}

function safeName(name: string) {
  const base = path.basename(name || "upload").replace(/[^\w.\-]+/g, "_").slice(0, 120);
  return base && base !== "." && base !== ".." ? base : "upload";
}

export async function POST(req: Request, { params }: { params: Promise<{ pipelineId: string; source: string }> }) {
  const { pipelineId, source } = await params;
  const url = new URL(req.url);
  let dir: string | null = null;
  try {
    const db = await getDb();
    const authorization = req.headers.get("authorization");
    const ctx = await createContext({ db, session: authorization ? null : await getSessionUser(), authorization });
    const contentType = req.headers.get("content-type") ?? "";
    const multipart = contentType.startsWith("multipart/form-data");
    const form = multipart ? await req.formData() : null;
    const workspaceHint = (form?.get("workspaceId") as string | null) ?? url.searchParams.get("workspaceId");
    const pipeline = await authorize(ctx, decodeURIComponent(pipelineId), workspaceHint);
    const formatParam = ((form?.get("format") as string | null) ?? url.searchParams.get("format")) || undefined;
    if (formatParam !== undefined && !isImportFormat(formatParam)) {
      return fail(400, `Unknown format "${formatParam.slice(0, 40)}". Formats: ${IMPORT_FORMATS.join(", ")}.`);
    }
    const format = formatParam;

    dir = await mkdtemp(path.join(tmpdir(), "synthex-upload-"));
    let file: string;
    if (form) {
      const entry = form.get("file");
      if (!entry || typeof entry === "string") return fail(400, 'Send the file in a multipart field named "file".');
      file = path.join(/*turbopackIgnore: true*/ dir, safeName(entry.name));
      await pump(Readable.fromWeb(entry.stream() as unknown as WebReadableStream), createWriteStream(file));
    } else {
      if (!req.body) return fail(400, "The request has no body.");
      file = path.join(/*turbopackIgnore: true*/ dir, safeName(url.searchParams.get("filename") ?? "upload"));
      await pump(Readable.fromWeb(req.body as unknown as WebReadableStream), createWriteStream(file));
    }
    const result = await importFile(db, {
      workspaceId: pipeline.workspaceId,
      pipelineId: pipeline.id,
      source: decodeURIComponent(source),
      path: file,
      format,
    });
    return Response.json({ ...result, fileName: path.basename(file) });
  } catch (err) {
    if (err instanceof TRPCError) return fail(STATUS[err.code] ?? 500, err.message);
    if (err instanceof DomainError) return fail(STATUS[err.code] ?? 400, err.message);
    console.error("upload failed", err);
    return fail(500, err instanceof Error ? err.message : "Upload failed.");
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}
