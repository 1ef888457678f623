/**
 * One document, image or audio file → its events, by format; and the all-or-nothing variant a folder import uses.
 * Each format's module (sharp, pdf.js, mammoth, tesseract) is imported when a file of that format
 * comes: every process that loads the import service (each CLI command) would otherwise pay for them.
 */
import type { MediaFormat } from "./media";
import { ImportError, type ImportEvent, type ImporterOptions } from "./types";

export async function* importMedia(file: string, format: MediaFormat, opts: ImporterOptions): AsyncGenerator<ImportEvent> {
  switch (format) {
    case "pdf":
      return yield* (await import("./pdf")).importPdf(file, opts);
    case "docx":
      return yield* (await import("./docx")).importDocx(file, opts);
    case "html":
      return yield* (await import("./html")).importHtml(file, opts);
    case "image":
      return yield* (await import("./image")).importImage(file, opts);
    case "audio":
      return yield* (await import("./audio")).importAudio(file, opts);
  }
}

/**
 * Every event of one file, or — when it fails anywhere (page 7 of 9) — none of its items and one
 * warning naming the file and why, marked skipped: the rest of a batch goes on, nothing half-written.
 */
export async function mediaEventsOrSkip(file: string, format: MediaFormat, label: string, opts: ImporterOptions): Promise<ImportEvent[]> {
  const events: ImportEvent[] = [];
  try {
    for await (const ev of importMedia(file, format, opts)) events.push(ev);
    return events;
  } catch (err) {
    if (!(err instanceof ImportError)) throw err;
    return [{ warning: { conversation: label, reason: `${err.message.replace(/\.$/, "")}; skipped`, skipped: true } }];
  }
}
