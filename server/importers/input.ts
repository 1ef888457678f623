/** Opening what the user pointed at: a plain file, or one entry inside a zip (streamed, never extracted to memory). */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import yauzl from "yauzl";
import { ImportError } from "./types";

export const isZipPath = (p: string) => p.toLowerCase().endsWith(".zip");

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false, decodeStrings: true }, (err, zip) => {
      if (err || !zip) reject(new ImportError(`${file} is not a readable zip archive (${err?.message ?? "unknown error"}).`, file));
      else resolve(zip);
    });
  });
}

async function listEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const out: yauzl.Entry[] = [];
    zip.on("entry", (e: yauzl.Entry) => {
      out.push(e);
      zip.readEntry();
    });
    zip.once("end", () => resolve(out));
    zip.once("error", reject);
    zip.readEntry();
  });
}

/** The names of the files in a zip. */
export async function zipEntryNames(file: string): Promise<string[]> {
  const zip = await openZip(file);
  try {
    return (await listEntries(zip)).map((e) => e.fileName);
  } catch (err) {
    throw new ImportError(`${file}: cannot read the zip's directory (${(err as Error).message}).`, file);
  } finally {
    zip.close();
  }
}

/** Picks `conversations.json` in a zip: at the root if there, else the shallowest one. */
export function pickConversationsEntry(names: string[]): string | null {
  const hits = names.filter((n) => !n.endsWith("/") && path.posix.basename(n).toLowerCase() === "conversations.json" && !n.startsWith("__MACOSX/"));
  hits.sort((a, b) => a.split("/").length - b.split("/").length || a.length - b.length);
  return hits[0] ?? null;
}

export interface OpenedInput {
  /** What to call it in messages, e.g. `export.zip:conversations.json`. */
  label: string;
  stream: AsyncIterable<Buffer>;
  close(): void;
}

/** Streams `entryName` out of a zip. */
export async function openZipEntry(file: string, entryName: string): Promise<OpenedInput> {
  const zip = await openZip(file);
  let entries: yauzl.Entry[];
  try {
    entries = await listEntries(zip);
  } catch (err) {
    zip.close();
    throw new ImportError(`${file}: cannot read the zip's directory (${(err as Error).message}).`, file);
  }
  const entry = entries.find((e) => e.fileName === entryName);
  if (!entry) {
    zip.close();
    throw new ImportError(`${file} has no ${entryName}.`, file);
  }
  const stream = await new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(entry, (err, s) => (err || !s ? reject(new ImportError(`${file}: cannot open ${entryName} (${err?.message}).`, file)) : resolve(s))),
  ).catch((err) => {
    zip.close();
    throw err;
  });
  return {
    label: `${path.basename(file)}:${entryName}`,
    stream: stream as AsyncIterable<Buffer>,
    close() {
      stream.destroy();
      zip.close();
    },
  };
}

/** A plain file, or the export's `conversations.json` when `file` is a zip. */
export async function openConversations(file: string): Promise<OpenedInput> {
  const st = await stat(file).catch(() => null);
  if (!st) throw new ImportError(`${file} does not exist.`, file);
  if (st.isDirectory()) throw new ImportError(`${file} is a folder: point at conversations.json or the export .zip (or use --format folder).`, file);
  if (isZipPath(file)) {
    const names = await zipEntryNames(file);
    const entry = pickConversationsEntry(names);
    if (!entry) {
      const shown = names.slice(0, 8).join(", ") + (names.length > 8 ? ", …" : "");
      throw new ImportError(`${file} has no conversations.json: is it a ChatGPT or Claude data export? It holds: ${shown || "nothing"}.`, file);
    }
    return openZipEntry(file, entry);
  }
  const stream = createReadStream(file, { highWaterMark: 1 << 16 });
  return { label: path.basename(file), stream: stream as AsyncIterable<Buffer>, close: () => stream.destroy() };
}

/** The first `bytes` bytes of a file or of a zip entry. */
export async function peek(file: string, bytes = 65536, entryName?: string): Promise<Buffer> {
  const opened = entryName ? await openZipEntry(file, entryName) : { stream: createReadStream(file, { start: 0, end: bytes - 1 }) as AsyncIterable<Buffer>, close() {} };
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of opened.stream) {
      parts.push(c);
      size += c.length;
      if (size >= bytes) break;
    }
  } finally {
    opened.close();
  }
  return Buffer.concat(parts).subarray(0, bytes);
}
