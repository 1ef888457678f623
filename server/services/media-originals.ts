/** An image record's stored original (the explorer shows it beside the OCR text), read through the record. */
import type { Db } from "../core/db";
import { notFound } from "../core/errors";
import { getMediaBlob } from "../store/media-blobs";

export interface RecordOriginal {
  recordId: string;
  name: string;
  type: string;
  width: number;
  height: number;
  bytes: number;
  /** `data:<type>;base64,…` (bounded: see server/importers/image.ts). */
  dataUrl: string;
}

export async function recordOriginal(db: Db, workspaceId: string, recordId: string): Promise<RecordOriginal> {
  const record = await db.record.findFirst({ where: { id: recordId, workspaceId }, select: { id: true, metadata: true } });
  if (!record) throw notFound(`Record "${recordId.slice(0, 100)}" not found.`);
  const meta = record.metadata as { modality?: unknown; file?: { sha256?: unknown; name?: unknown } } | null;
  const sha = meta?.modality === "image" && typeof meta.file?.sha256 === "string" ? meta.file.sha256 : null;
  const blob = sha ? await getMediaBlob(db, workspaceId, sha) : null;
  if (!blob) throw notFound(`Record "${recordId.slice(0, 100)}" has no stored image${sha ? " (imported before originals were kept: re-import the file)" : ""}.`);
  return {
    recordId: record.id,
    name: typeof meta?.file?.name === "string" ? meta.file.name : "image",
    type: blob.type,
    width: blob.width,
    height: blob.height,
    bytes: blob.bytes.length,
    dataUrl: `data:${blob.type};base64,${blob.bytes.toString("base64")}`,
  };
}
