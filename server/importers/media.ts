/**
 * What the document, image and audio importers share: telling a file's real type from its first
 * bytes (an extension can lie), the file's hash, the size limits, and the metadata every such
 * record carries — `modality`, `file` (name, sha256, bytes, type) and `position` (page, lines, time).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import path from "node:path";
import { ImportError, type ImporterOptions } from "./types";

/** The media formats, as `detectFormat` names them. */
export type MediaFormat = "pdf" | "docx" | "html" | "image" | "audio";
/** What kind of thing a record came from. */
export type Modality = "document" | "image" | "audio";

export const MODALITY: Record<MediaFormat, Modality> = { pdf: "document", docx: "document", html: "document", image: "image", audio: "audio" };

/** File types the sniffer knows, by their first bytes. */
export type FileKind = "pdf" | "zip" | "png" | "jpeg" | "webp" | "gif" | "wav" | "mp3" | "m4a" | "ogg" | "flac" | "html";

const KIND_LABEL: Record<FileKind, string> = {
  pdf: "a PDF document",
  zip: "a zip archive",
  png: "a PNG image",
  jpeg: "a JPEG image",
  webp: "a WebP image",
  gif: "a GIF image",
  wav: "a WAV audio file",
  mp3: "an MP3 audio file",
  m4a: "an M4A/MP4 audio file",
  ogg: "an Ogg audio file",
  flac: "a FLAC audio file",
  html: "an HTML page",
};

/** Extensions that promise a media format, and the kinds of content each may hold. */
export const MEDIA_EXTENSIONS: Record<string, { format: MediaFormat; kinds: FileKind[] }> = {
  ".pdf": { format: "pdf", kinds: ["pdf"] },
  ".docx": { format: "docx", kinds: ["zip"] },
  ".html": { format: "html", kinds: ["html"] },
  ".htm": { format: "html", kinds: ["html"] },
  ".png": { format: "image", kinds: ["png"] },
  ".jpg": { format: "image", kinds: ["jpeg"] },
  ".jpeg": { format: "image", kinds: ["jpeg"] },
  ".webp": { format: "image", kinds: ["webp"] },
  ".wav": { format: "audio", kinds: ["wav"] },
  ".mp3": { format: "audio", kinds: ["mp3"] },
  ".m4a": { format: "audio", kinds: ["m4a"] },
};

const FORMAT_OF_KIND: Partial<Record<FileKind, MediaFormat>> = { pdf: "pdf", png: "image", jpeg: "image", webp: "image", wav: "audio", mp3: "audio", m4a: "audio", html: "html" };

/** The file type its first bytes show, or null (text, or something unknown). */
export function sniff(head: Buffer): FileKind | null {
  const ascii = (from: number, to: number) => head.subarray(from, to).toString("latin1");
  if (ascii(0, 5) === "%PDF-") return "pdf";
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) return "zip";
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "webp";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WAVE") return "wav";
  if (ascii(0, 4) === "GIF8") return "gif";
  if (ascii(0, 3) === "ID3" || (head[0] === 0xff && head.length > 1 && (head[1]! & 0xe0) === 0xe0)) return "mp3";
  if (ascii(4, 8) === "ftyp") return "m4a";
  if (ascii(0, 4) === "OggS") return "ogg";
  if (ascii(0, 4) === "fLaC") return "flac";
  const text = head.toString("utf8", 0, Math.min(head.length, 1024)).replace(/^\uFEFF/, "").trimStart().toLowerCase();
  if (text.startsWith("<!doctype html") || text.startsWith("<html") || (text.startsWith("<?xml") && text.includes("<html"))) return "html";
  return null;
}

async function head(file: string, bytes = 4096): Promise<Buffer> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Extensions that promise text (notes, transcripts, JSON exports): binary content under them is a lie. */
export const TEXT_EXTENSIONS = new Set([".md", ".markdown", ".txt", ".text", ".jsonl", ".ndjson", ".json", ".csv"]);

/** Whether `head` is UTF-8 text (no NUL byte, no invalid sequence). */
function isUtf8Text(head: Buffer): boolean {
  if (head.includes(0)) return false;
  // The head may end inside a multi-byte character: allow up to 3 cut-off bytes.
  for (let cut = 0; cut <= Math.min(3, head.length); cut++) {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(head.subarray(0, head.length - cut));
      return true;
    } catch {
      // try a shorter head
    }
  }
  return false;
}

/**
 * The binary file type `head` shows by a magic number no text starts with, or null. MP3's weak
 * signatures (an `ID3` tag, a frame sync byte) count only when the bytes are not UTF-8 text, and a
 * UTF-16 byte-order mark is text, not an MP3 frame.
 */
export function binaryKind(head: Buffer): FileKind | null {
  const kind = sniff(head);
  if (!kind || kind === "html") return null;
  if (kind === "mp3" && ((head[0] === 0xff && head[1] === 0xfe) || isUtf8Text(head))) return null;
  return kind;
}

/** `name is named .md but its content is a PNG image; …` */
export function mismatchError(file: string, ext: string, kind: FileKind | null, head: Buffer): ImportError {
  const is = kind ? KIND_LABEL[kind] : head.includes(0) ? "not a file type Synthex reads" : "plain text";
  return new ImportError(`${path.basename(file)} is named ${ext} but its content is ${is}; rename it to match, or choose its format.`, file);
}

/**
 * The media format of `file` from its extension checked against its content, or null when it is
 * neither named nor shaped like a document, image or audio file. An extension that promises one
 * type over content of another is refused, both ways: a PNG named .pdf, and a PNG (or PDF, zip,
 * audio…) named .md, .txt or .json: importing it as either would be a guess.
 */
export async function detectMedia(file: string): Promise<MediaFormat | null> {
  const ext = path.extname(file).toLowerCase();
  const named = MEDIA_EXTENSIONS[ext];
  const bytes = await head(file);
  const kind = sniff(bytes);
  if (named) {
    if (!bytes.length) throw new ImportError(`${path.basename(file)} is empty (0 bytes): nothing to import.`, file);
    if (kind && named.kinds.includes(kind)) return named.format;
    // An .htm(l) file need not start with a doctype: any text that is not another known type is HTML enough.
    if (named.format === "html" && !kind && !bytes.includes(0)) return "html";
    throw mismatchError(file, ext, kind, bytes);
  }
  if (TEXT_EXTENSIONS.has(ext)) {
    const binary = binaryKind(bytes);
    if (binary) throw mismatchError(file, ext, binary, bytes);
    return null;
  }
  if (ext === ".zip" && kind && kind !== "zip") throw mismatchError(file, ext, kind, bytes);
  return kind ? (FORMAT_OF_KIND[kind] ?? null) : null;
}

/** Kinds of content each chosen format reads; formats not listed take text. */
const KINDS_OF_FORMAT: Partial<Record<string, FileKind[]>> = {
  pdf: ["pdf"],
  docx: ["zip"],
  image: ["png", "jpeg", "webp"],
  audio: ["wav", "mp3", "m4a"],
  "chatgpt-export": ["zip"],
  "claude-export": ["zip"],
};
const BINARY_FORMATS = new Set(["pdf", "docx", "image", "audio"]);

/**
 * Refuses a file whose content is not what `format` reads — whether the format was detected or
 * chosen (the upload's Format menu, `--format`): a PNG imported as markdown, a zip as a PDF.
 * `name` is the file as the user knows it.
 */
export async function assertContentFits(file: string, format: string, name = path.basename(file)): Promise<void> {
  if (format === "folder") return;
  const st = await stat(file).catch(() => null);
  if (!st?.isFile() || st.size === 0) return; // the importer names a missing or empty file itself
  const bytes = await head(file);
  const kinds = KINDS_OF_FORMAT[format] ?? [];
  const kind = BINARY_FORMATS.has(format) ? sniff(bytes) : binaryKind(bytes);
  if (kind && kinds.includes(kind)) return;
  if (BINARY_FORMATS.has(format)) {
    const is = kind ? KIND_LABEL[kind] : bytes.includes(0) ? "not a file type Synthex reads" : "plain text";
    throw new ImportError(`${name} was to be imported as ${format}, but its content is ${is}; choose the format that matches it.`, file);
  }
  if (kind) throw new ImportError(`${name} was to be imported as ${format} (text), but its content is ${KIND_LABEL[kind]}; choose the format that matches it.`, file);
}

/** Limits on what one media file may cost. Each has an environment override; an import may pass its own. */
export interface MediaLimits {
  /** Largest file (bytes). SYNTHEX_IMPORT_MAX_FILE_MB, default 512. */
  maxFileBytes: number;
  /** Most pages of a PDF. SYNTHEX_IMPORT_MAX_PAGES, default 2000. */
  maxPages: number;
  /** Most pixels (width × height) of an image to OCR. SYNTHEX_IMPORT_MAX_PIXELS, default 50,000,000. */
  maxPixels: number;
  /** Longest audio (seconds) to transcribe. SYNTHEX_IMPORT_MAX_AUDIO_SECONDS, default 4 hours. */
  maxAudioSeconds: number;
  /**
   * Most pixels one file may have decoded: the images of every page of a PDF that is OCR'd, an
   * image drawn on 20 pages counting 20 times. SYNTHEX_IMPORT_MAX_FILE_PIXELS, default 1,000,000,000 (some 115 A4 pages scanned at 300 dpi).
   */
  maxFilePixels: number;
  /** Most seconds reading one document or image may take, OCR included. SYNTHEX_IMPORT_MAX_SECONDS, default 300. */
  maxSeconds: number;
}

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw ? Number(raw) : NaN;
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

export function mediaLimits(over: Partial<MediaLimits> = {}): MediaLimits {
  return {
    maxFileBytes: over.maxFileBytes ?? envNumber("SYNTHEX_IMPORT_MAX_FILE_MB", 512) * 1024 * 1024,
    maxPages: over.maxPages ?? envNumber("SYNTHEX_IMPORT_MAX_PAGES", 2000),
    maxPixels: over.maxPixels ?? envNumber("SYNTHEX_IMPORT_MAX_PIXELS", 50_000_000),
    maxAudioSeconds: over.maxAudioSeconds ?? envNumber("SYNTHEX_IMPORT_MAX_AUDIO_SECONDS", 4 * 3600),
    maxFilePixels: over.maxFilePixels ?? envNumber("SYNTHEX_IMPORT_MAX_FILE_PIXELS", 1_000_000_000),
    maxSeconds: over.maxSeconds ?? envNumber("SYNTHEX_IMPORT_MAX_SECONDS", 300),
  };
}

/** Pixels as megapixels for messages: `64 MP`, `0.25 MP`. */
export function megapixels(pixels: number): string {
  const mp = pixels / 1e6;
  const digits = mp >= 10 ? 0 : mp >= 1 ? 1 : 2;
  return `${Number(mp.toFixed(digits)).toLocaleString("en-US")} MP`;
}

const EXPIRED: unique symbol = Symbol("expired");

/**
 * One file's time budget (SYNTHEX_IMPORT_MAX_SECONDS), from when its import starts. `check` throws
 * once it is spent; `within` ends work that is still running at the deadline (`stop` terminates it:
 * OCR runs in tesseract's worker thread, which is terminated) and throws, naming the file and page.
 */
export class FileBudget {
  private readonly deadline: number;
  constructor(
    private readonly name: string,
    private readonly file: string,
    private readonly limits: Pick<MediaLimits, "maxSeconds">,
  ) {
    this.deadline = Date.now() + limits.maxSeconds * 1000;
  }

  error(where?: string): ImportError {
    const s = this.limits.maxSeconds;
    return new ImportError(
      `${this.name}${where ? `, ${where}` : ""}: reading the file took longer than the ${s}-second limit for one file (SYNTHEX_IMPORT_MAX_SECONDS); nothing of it was imported.`,
      this.file,
      where,
    );
  }

  check(where?: string): void {
    if (Date.now() >= this.deadline) throw this.error(where);
  }

  async within<T>(work: Promise<T>, where: string | undefined, stop: () => Promise<unknown> | unknown): Promise<T> {
    this.check(where);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<typeof EXPIRED>((resolve) => (timer = setTimeout(() => resolve(EXPIRED), Math.max(0, this.deadline - Date.now()))));
    try {
      const first = await Promise.race([work, expired]);
      if (first === EXPIRED) {
        work.catch(() => {}); // its end, once stopped, is nobody's error
        await Promise.resolve(stop()).catch(() => {});
        throw this.error(where);
      }
      return first;
    } finally {
      clearTimeout(timer);
    }
  }
}

const mib = (n: number) => `${(n / 1_048_576).toFixed(1)} MiB`;

/** The file's size, refusing a missing, empty or too-large file with its name. */
export async function checkFile(file: string, limits: MediaLimits): Promise<number> {
  const st = await stat(file).catch(() => null);
  const name = path.basename(file);
  if (!st?.isFile()) throw new ImportError(`${file} does not exist or is not a file.`, file);
  if (st.size === 0) throw new ImportError(`${name} is empty (0 bytes): nothing to import.`, file);
  if (st.size > limits.maxFileBytes) throw new ImportError(`${name} is ${mib(st.size)}, over the ${mib(limits.maxFileBytes)} limit for one file (SYNTHEX_IMPORT_MAX_FILE_MB).`, file);
  return st.size;
}

/** SHA-256 of a file, streamed. */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 16 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Where in its file a record's text is: a page, a line range, a time range (seconds). */
export type Position = { page: number; pages: number } | { line_start: number; line_end: number } | { start_s: number; end_s: number };

export interface MediaFile {
  name: string;
  sha256: string;
  bytes: number;
  type: string;
}

/** The name records use for a file: the display path's base name (an upload's original name). */
export const displayName = (file: string, opts: ImporterOptions) => path.basename(opts.displayPath ?? file);

/** The metadata every media record carries, plus its format's own fields. */
export function mediaMetadata(input: {
  format: MediaFormat;
  file: MediaFile;
  position: Position;
  path: string;
  title: string | null;
  createdAt?: string | null;
  extra?: Record<string, unknown>;
}): Record<string, unknown> {
  return {
    ...(input.createdAt ? { time: { created_at: input.createdAt } } : {}),
    modality: MODALITY[input.format],
    file: input.file,
    position: input.position,
    chat: { title: input.title },
    source: { type: input.format, path: input.path },
    ...input.extra,
  };
}
