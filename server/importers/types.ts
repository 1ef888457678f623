import { DomainError } from "../core/errors";
import type { SourceItem } from "../core/source-item";

export const IMPORT_FORMATS = ["chatgpt-export", "claude-export", "jsonl", "markdown", "text", "folder", "pdf", "docx", "html", "image", "audio"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface ImportWarning {
  /** Conversation id (or file / line) the warning is about, when known. */
  conversation?: string;
  reason: string;
  /** True when the conversation/file/line was left out (otherwise it was imported, repaired). */
  skipped?: boolean;
}

/**
 * An image's original kept beside its record (bounded: at most ORIGINAL_MAX_PX on its longer side,
 * re-encoded when larger), addressed by the imported file's SHA-256 (`metadata.file.sha256`).
 */
export interface MediaOriginal {
  sha256: string;
  type: string;
  width: number;
  height: number;
  bytes: Buffer;
}

/**
 * What every importer yields: an item ready for `appendSourceRecords` (an image's with its bounded
 * original, stored by the service with the item's batch), or a warning (the item was skipped or repaired).
 */
export type ImportEvent = { item: SourceItem; original?: MediaOriginal } | { warning: ImportWarning };

export interface ImporterOptions {
  /** Shown in `metadata.source.path` and in messages; defaults to the path given. */
  displayPath?: string;
  /** A single message longer than this (UTF-16 code units) is truncated with a visible marker and a warning. Default 1,000,000. */
  maxMessageChars?: number;
  /** A single conversation larger than this (bytes of JSON) is skipped with a warning. Default 256 MiB. */
  maxConversationBytes?: number;
  /** A media file's identity inside its source (a folder import passes its relative path); default its name. */
  fileKey?: string;
  /** Limits for documents, images and audio (see `mediaLimits`); unset ones come from the environment. */
  limits?: Partial<{ maxFileBytes: number; maxPages: number; maxPixels: number; maxAudioSeconds: number; maxFilePixels: number; maxSeconds: number }>;
  /** An OCR engine to share across the files of one import (a folder); else each image starts its own. */
  ocr?: OcrEngine;
  /** Transcribes audio; without it an audio file becomes a record that awaits transcription. */
  transcribe?: Transcriber;
}

/** One recognised line of an image, with the engine's confidence (0–100). */
export interface OcrLine {
  text: string;
  confidence: number;
}

export interface OcrEngine {
  /** OCR of an image (any format the engine reads; the importer hands it a greyscale PNG). */
  recognize(image: Buffer): Promise<{ text: string; lines: OcrLine[] }>;
  close(): Promise<void>;
}

/** A transcription segment: seconds from the start of the recording. */
export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

/** Turns an audio file into text with timed segments (the workspace's OpenAI-compatible provider); null when there is no provider. */
export type Transcriber = (input: { file: string; name: string; mime: string }) => Promise<{ text: string; duration?: number; segments: TranscriptSegment[]; model: string } | null>;

/** A failure that stops the whole import: it names the file (and the conversation, when known) and says why. */
export class ImportError extends DomainError {
  constructor(
    message: string,
    readonly file: string,
    readonly conversation?: string,
  ) {
    super("BAD_REQUEST", message);
    this.name = "ImportError";
  }
}

export const DEFAULT_MAX_MESSAGE_CHARS = 1_000_000;
export const DEFAULT_MAX_CONVERSATION_BYTES = 256 * 1024 * 1024;

/** Truncates an oversize message with an explicit marker; returns the warning text when it did. */
export function capMessage(text: string, max: number): { text: string; truncated: string | null } {
  if (text.length <= max) return { text, truncated: null };
  const mb = (n: number) => `${(n / 1_000_000).toFixed(1)}M`;
  return {
    text: `${text.slice(0, max)}\n[… message truncated by the importer: ${mb(text.length)} characters, limit ${mb(max)} …]`,
    truncated: `a message of ${mb(text.length)} characters is over the ${mb(max)} limit; kept the first ${mb(max)} with a truncation marker`,
  };
}

/** Longest title kept: a title is a label, and a huge one would be stored twice (header and metadata). */
export const MAX_TITLE_CHARS = 500;

/** A title cut to MAX_TITLE_CHARS with a visible ellipsis; null stays null. */
export function capTitle<T extends string | null | undefined>(title: T): T {
  return (typeof title === "string" && title.length > MAX_TITLE_CHARS ? `${title.slice(0, MAX_TITLE_CHARS)}…` : title) as T;
}

/** ISO string from epoch seconds (ChatGPT) or an ISO-ish string (Claude); null when absent or invalid. */
export function toIso(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) {
    const ms = value > 1e12 ? value : value * 1000;
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  if (typeof value === "string" && value.trim()) {
    const d = new Date(value.trim());
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  return null;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * A short JSON preview of tool arguments. Arguments nested deeper than the stack allows (a
 * hostile or broken export) are named, not rendered: stringifying them would crash the import.
 */
export function jsonPreview(value: unknown, max: number): string {
  try {
    const json = JSON.stringify(value ?? {});
    return json.length > max ? `${json.slice(0, max)}…` : json;
  } catch {
    return "[arguments nested too deeply to show]";
  }
}
