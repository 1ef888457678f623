/**
 * Importing a file into a pipeline source: detect the format, stream the importer's items in
 * batches into `appendSourceRecords`, and record the attempt as a `SourceImport` row
 * (running → completed | failed). Memory stays flat: at most one batch (~500 items, or ~2 M characters of
 * content) is held at a time. Idempotent through content fingerprints: re-importing the same file
 * adds nothing; a newer export adds only new or changed conversations.
 */
import path from "node:path";
import { detectFormat, IMPORT_FORMATS, ImportError, isImportFormat, readImport, type ImportFormat, type ImportWarning, type MediaOriginal } from "../importers";
import { putMediaBlobs } from "../store/media-blobs";
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { notifySourceAppended, type SourceAppended } from "./executor";
import { recordAudit } from "./audit";
import { appendSourceRecords, getBranch } from "./pipelines";
import { toJsonColumn } from "../core/json";
import { workspaceTranscriber } from "../llm/transcribe";
import type { SourceItem } from "../core/source-item";

export interface ImportFileInput {
  workspaceId: string;
  pipelineId: string;
  /** Source name in the pipeline spec. */
  source: string;
  /** A file, a zip, or (format "folder") a directory. */
  path: string;
  /** Overrides detection; a caller's raw string (form field, query, flag) is checked here. */
  format?: ImportFormat | (string & {});
  /**
   * The name the user knows the file by (an upload's original file name). It labels the records
   * (`metadata.source.path`, so untitled conversations) and every message, instead of `path` —
   * which for an upload is a server temp path that must not leak. Default: `path`.
   */
  displayName?: string;
  /** The file's SHA-256 when the caller computed it (the inbox watcher), kept on the import row. */
  contentSha256?: string;
  /** Items per `appendSourceRecords` call. Default 500. */
  batchSize?: number;
  /** Called after every batch (for progress bars). */
  onProgress?: (p: { received: number; added: number; skipped: number; warnings: number }) => void;
  /** Per-message character limit (longer messages are truncated with a marker and a warning). */
  maxMessageChars?: number;
  /**
   * Who imports (`user:<id>` / `apiKey:<id>`): the import then leaves a `source.import` audit entry,
   * completed or failed (the upload route and the local CLI pass it; no procedure wraps an upload).
   */
  actor?: string;
}

export interface ImportFileResult {
  importId: string;
  format: ImportFormat;
  status: "completed";
  /** Items read from the file (conversations, lines, files). */
  received: number;
  /** New source records (new or changed items). */
  added: number;
  /** Items read that were already imported, unchanged. */
  unchanged: number;
  /** Conversations / lines / files left out because of bad data (each has a warning). */
  skipped: number;
  /** At most MAX_WARNINGS, in file order; `warningCount` is the full count. */
  warnings: ImportWarning[];
  warningCount: number;
  durationMs: number;
}

/** Thrown (after the SourceImport row is marked failed) when the file cannot be imported. Earlier batches stay imported. */
export class ImportFailedError extends ImportError {
  constructor(
    message: string,
    file: string,
    readonly importId: string,
    readonly stats: { received: number; added: number; skipped: number },
    conversation?: string,
  ) {
    super(message, file, conversation);
    this.name = "ImportFailedError";
  }
}

export const MAX_WARNINGS = 1000;
/**
 * A batch is also cut at this much content: appendSourceRecords commits a batch in one interactive
 * transaction (Prisma's default 5 s timeout), and the embedded database indexes ~3 MB/s of text.
 */
const BATCH_CONTENT_CHARS = 2 * 1024 * 1024;

export async function importFile(db: Db, input: ImportFileInput): Promise<ImportFileResult> {
  const started = Date.now();
  const pipeline = await db.pipeline.findFirst({ where: { id: input.pipelineId, workspaceId: input.workspaceId } });
  if (!pipeline) throw notFound(`Pipeline ${input.pipelineId} not found in this workspace.`);
  const { spec } = await getBranch(db, pipeline.id, "main");
  const def = spec.sources.find((s) => s.name === input.source);
  if (!def) throw notFound(`Source "${input.source}" is not in pipeline "${pipeline.name}". Sources: ${spec.sources.map((s) => s.name).join(", ") || "none"}.`);
  const requested = input.format || undefined;
  if (requested !== undefined && !isImportFormat(requested)) {
    throw badRequest(`Unknown format "${requested.slice(0, 40)}". Formats: ${IMPORT_FORMATS.join(", ")}.`);
  }

  const file = path.resolve(input.path);
  const display = input.displayName ?? input.path;
  const fileName = path.basename(display);
  /** Messages name the file as the user knows it, never the temp path it was written to. */
  const shown = (message: string) => (input.displayName ? hidePath(message, [file, input.path], input.displayName) : message);
  const row = await db.sourceImport.create({
    data: { workspaceId: input.workspaceId, pipelineId: pipeline.id, source: def.name, fileName, format: requested ?? "detecting", status: "running", contentSha256: input.contentSha256 ?? null },
  });

  const warnings: ImportWarning[] = [];
  let warningCount = 0;
  let received = 0;
  let added = 0;
  let skipped = 0;
  let committed = 0;
  let format: ImportFormat | null = requested ?? null;
  const stats = () => ({ received, added, unchanged: received - added, skipped, warnings: warningCount });
  const stored = () => toJsonColumn(warnings);
  // Counts and the import's id, not the file name (records name it; the log must not outlive a purge).
  const audit = (status: "completed" | "failed") =>
    input.actor
      ? recordAudit(db, {
          workspaceId: input.workspaceId,
          actor: input.actor,
          action: "source.import",
          target: `pipeline:${pipeline.id}/source:${def.name}`,
          summary: { importId: row.id, status, format: format ?? "unknown", ...stats() },
        })
      : null;

  let batch: SourceItem[] = [];
  let originals: MediaOriginal[] = [];
  let batchChars = 0;
  const flush = async () => {
    if (!batch.length) return;
    const items = batch;
    // Images' originals before their records: a record never names an original that is not there.
    await putMediaBlobs(db, input.workspaceId, originals);
    batch = [];
    originals = [];
    batchChars = 0;
    const res = await appendSourceRecords(db, pipeline.id, def.name, items);
    added += res.added;
    committed += items.length;
    input.onProgress?.({ received, added, skipped, warnings: warningCount });
  };

  try {
    format ??= await detectFormat(file);
    if (!input.format) await db.sourceImport.update({ where: { id: row.id }, data: { format } });
    const batchSize = input.batchSize ?? 500;
    const transcribe = workspaceTranscriber(db, input.workspaceId);
    for await (const ev of readImport(file, format, { displayPath: display, maxMessageChars: input.maxMessageChars, transcribe })) {
      if ("warning" in ev) {
        warningCount++;
        if (ev.warning.skipped) skipped++;
        if (warnings.length < MAX_WARNINGS) warnings.push(ev.warning);
        continue;
      }
      received++;
      batch.push(ev.item);
      if (ev.original) {
        originals.push(ev.original);
        // Originals weigh in too: a folder of photos is written a few MB at a time.
        batchChars += ev.original.bytes.length;
      }
      batchChars += ev.item.content.length;
      if (batch.length >= batchSize || batchChars >= BATCH_CONTENT_CHARS) await flush();
    }
    await flush();
  } catch (err) {
    const message = shown(err instanceof Error ? err.message : String(err));
    await db.sourceImport
      .update({
        where: { id: row.id },
        data: { status: "failed", error: message, stats: stats(), warnings: stored(), finishedAt: new Date(), ...(format ? { format } : {}) },
      })
      .catch(() => {});
    // Earlier batches stay imported: the failed import is a change too.
    await audit("failed")?.catch((auditErr: unknown) => console.error("[synthex import] audit entry of a failed import:", (auditErr as Error).message));
    const partial = committed > 0 ? ` ${added} new record(s) from the ${committed} item(s) before it were imported and stay; re-importing is safe.` : "";
    if (err instanceof ImportError) throw new ImportFailedError(`${message}${partial}`, shown(err.file), row.id, { received, added, skipped }, err.conversation);
    if (err instanceof Error && err.name === "DomainError") throw err;
    throw new ImportFailedError(`Importing ${fileName} failed: ${message}.${partial}`, display, row.id, { received, added, skipped });
  }

  await db.sourceImport.update({
    where: { id: row.id },
    data: { status: "completed", stats: stats(), warnings: stored(), finishedAt: new Date() },
  });
  await audit("completed");
  if (added > 0) await announceAppended({ workspaceId: input.workspaceId, pipelineId: pipeline.id, branch: "main" });
  return { importId: row.id, format, status: "completed", ...stats(), warnings, warningCount, durationMs: Date.now() - started };
}

/** `message` with every occurrence of the given paths (longest first) replaced by `name`. */
function hidePath(message: string, paths: string[], name: string): string {
  let out = message;
  for (const p of [...new Set(paths)].sort((a, b) => b.length - a.length)) if (p) out = out.split(p).join(name);
  return out;
}

/**
 * New source records: the executor may follow with an incremental run (Inngest: a debounced one
 * on main, the branch agents read; other branches are experiments and run when asked). The records
 * are stored either way, so a failed notification only delays that run: it is logged, not thrown.
 */
async function announceAppended(input: SourceAppended) {
  try {
    await notifySourceAppended(input);
  } catch (err) {
    console.warn(`[synthex import] could not announce new source records: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Recent imports of a pipeline, newest first. */
export async function listImports(db: Db, workspaceId: string, pipelineId: string, take = 20) {
  return db.sourceImport.findMany({ where: { workspaceId, pipelineId }, orderBy: { createdAt: "desc" }, take });
}
