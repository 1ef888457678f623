/**
 * Streams an upload to a temp file under a byte limit: multipart/form-data (one `file` field,
 * parsed with busboy as it arrives, never buffered whole) or a raw body. Throws
 * BodyTooLargeError as soon as the stream passes the limit, and MalformedUploadError (400, a
 * plain message: busboy's own words stay out of the answer) for a body that is not a well-formed
 * upload. Either way the partial file is removed before the error is thrown: nothing half-written
 * is kept.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebReadableStream } from "node:stream/web";
import busboy from "busboy";
import { DomainError } from "../core/errors";
import { BodyTooLargeError, limitStream, type BodyLimit } from "./body-limit";

/** An upload body that cannot be read as one: a multipart body without a boundary, with a torn part or no end, or one cut off. */
export class MalformedUploadError extends DomainError {
  constructor() {
    super("BAD_REQUEST", 'The upload is not a well-formed multipart/form-data body, or it ended early: send the file in a form field named "file" and try again.');
  }
}

/** A file system failure (disk full, no permission) is the server's, not the upload's. */
const isFileSystemError = (err: unknown) => typeof (err as { syscall?: unknown })?.syscall === "string";

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
  const outputs: Array<{ file: string; out: WriteStream; done: Promise<unknown> }> = [];
  const writeTo = (file: string) => {
    const out = createWriteStream(file);
    outputs.push({ file, out, done: new Promise<void>((resolve) => out.once("close", () => resolve())) });
    return out;
  };
  try {
    if (!contentType.startsWith("multipart/form-data")) {
      const file = path.join(dir, safeFileName(rawFileName));
      await pipeline(toNode(limited), writeTo(file));
      return { file, fields: {} };
    }
    return await receiveMultipart(limited, contentType, dir, limit, writeTo);
  } catch (err) {
    // Nothing half-written stays: each partial file is closed, then removed.
    for (const o of outputs) if (!o.out.closed) o.out.destroy();
    await Promise.all(outputs.map(async (o) => (await o.done, await rm(o.file, { force: true }))));
    if (err instanceof BodyTooLargeError || isFileSystemError(err)) throw err;
    throw new MalformedUploadError();
  }
}

async function receiveMultipart(
  limited: ReadableStream<Uint8Array>,
  contentType: string,
  dir: string,
  limit: BodyLimit,
  writeTo: (file: string) => WriteStream,
): Promise<ReceivedUpload> {
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
    const write = pipeline(stream, writeTo(file));
    write.catch(() => {}); // awaited below; a parse error may end the body first
    writes.push(write);
  });
  await pipeline(toNode(limited), parser);
  await Promise.all(writes);
  return { file, fields };
}
