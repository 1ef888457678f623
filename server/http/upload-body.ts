/**
 * Streams an upload to a temp file under a byte limit: multipart/form-data (one `file` field,
 * parsed with busboy as it arrives, never buffered whole) or a raw body. Throws
 * BodyTooLargeError as soon as the stream passes the limit; the partial file is the caller's
 * temp dir to remove.
 */
import { createWriteStream } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web";
import busboy from "busboy";
import { BodyTooLargeError, limitStream, type BodyLimit } from "./body-limit";

export interface ReceivedUpload {
  /** Absolute path of the written file, or null when the multipart body had no `file` field. */
  file: string | null;
  /** Small text fields of a multipart body (e.g. `format`). */
  fields: Record<string, string>;
}

export function safeFileName(name: string): string {
  const base = path.basename(name || "upload").replace(/[^\w.\-]+/g, "_").slice(0, 120);
  return base && base !== "." && base !== ".." ? base : "upload";
}

const toNode = (body: ReadableStream<Uint8Array>) => Readable.fromWeb(body as unknown as NodeWebReadableStream<Uint8Array>);

export async function receiveUpload(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  dir: string,
  limit: BodyLimit,
  rawFileName = "upload",
): Promise<ReceivedUpload> {
  const limited = limitStream(body, limit);
  if (!contentType.startsWith("multipart/form-data")) {
    const file = path.join(dir, safeFileName(rawFileName));
    await pipeline(toNode(limited), createWriteStream(file));
    return { file, fields: {} };
  }
  const parser = busboy({
    headers: { "content-type": contentType },
    limits: { files: 1, fileSize: limit.bytes, fields: 20, fieldSize: 4096 },
  });
  const fields: Record<string, string> = {};
  let file: string | null = null;
  const writes: Promise<void>[] = [];
  parser.on("field", (name, value) => (fields[name] = value));
  parser.on("file", (name, stream, info) => {
    if (name !== "file" || file !== null) {
      stream.resume(); // not ours: drain it
      return;
    }
    file = path.join(dir, safeFileName(info.filename ?? "upload"));
    stream.on("limit", () => stream.destroy(new BodyTooLargeError(limit)));
    writes.push(pipeline(stream, createWriteStream(file)));
  });
  await pipeline(toNode(limited), parser);
  await Promise.all(writes);
  return { file, fields };
}
