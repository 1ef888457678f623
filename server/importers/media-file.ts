/** One document, image or audio file → its events, by format; and the all-or-nothing variant a folder import uses. */
import { importAudio } from "./audio";
import { importDocx } from "./docx";
import { importHtml } from "./html";
import { importImage } from "./image";
import type { MediaFormat } from "./media";
import { importPdf } from "./pdf";
import { ImportError, type ImportEvent, type ImporterOptions } from "./types";

export function importMedia(file: string, format: MediaFormat, opts: ImporterOptions): AsyncGenerator<ImportEvent> {
  switch (format) {
    case "pdf":
      return importPdf(file, opts);
    case "docx":
      return importDocx(file, opts);
    case "html":
      return importHtml(file, opts);
    case "image":
      return importImage(file, opts);
    case "audio":
      return importAudio(file, opts);
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
