/**
 * Imported images' originals (bounded, see server/importers/image.ts), one row per workspace and
 * content hash: stored with the batch that adds their records, read through a record the caller
 * may see, and deleted by a purge once no record of the workspace names the hash any more.
 */
import type { DbTx } from "../core/db";

export interface StoredOriginal {
  sha256: string;
  type: string;
  width: number;
  height: number;
  bytes: Buffer;
}

/** Stores originals not yet stored (the same content imported again, or into another pipeline, is kept once). */
export async function putMediaBlobs(db: DbTx, workspaceId: string, originals: StoredOriginal[]): Promise<void> {
  if (!originals.length) return;
  await db.mediaBlob.createMany({
    data: originals.map((o) => ({ workspaceId, sha256: o.sha256, type: o.type, width: o.width, height: o.height, bytes: new Uint8Array(o.bytes) })),
    skipDuplicates: true,
  });
}

export async function getMediaBlob(db: DbTx, workspaceId: string, sha256: string): Promise<StoredOriginal | null> {
  const row = await db.mediaBlob.findUnique({ where: { workspaceId_sha256: { workspaceId, sha256 } } });
  return row ? { sha256: row.sha256, type: row.type, width: row.width, height: row.height, bytes: Buffer.from(row.bytes) } : null;
}

/** The content hashes of the image records among `recordIds` (before they are purged). */
export async function imageHashesOf(db: DbTx, workspaceId: string, recordIds: string[]): Promise<string[]> {
  if (!recordIds.length) return [];
  const rows = await db.record.findMany({
    where: { workspaceId, id: { in: recordIds }, metadata: { path: ["modality"], equals: "image" } },
    select: { metadata: true },
  });
  const hashes = rows.map((r) => ((r.metadata as { file?: { sha256?: unknown } } | null)?.file?.sha256)).filter((h): h is string => typeof h === "string");
  return [...new Set(hashes)];
}

/** Deletes the originals among `hashes` that no record of the workspace names any more; returns how many. */
export async function deleteOrphanBlobs(db: DbTx, workspaceId: string, hashes: string[]): Promise<number> {
  let deleted = 0;
  for (const sha256 of hashes) {
    const still = await db.record.findFirst({ where: { workspaceId, metadata: { path: ["file", "sha256"], equals: sha256 } }, select: { id: true } });
    if (still) continue;
    deleted += (await db.mediaBlob.deleteMany({ where: { workspaceId, sha256 } })).count;
  }
  return deleted;
}
