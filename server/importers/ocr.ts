/**
 * OCR with tesseract.js: its WebAssembly core and the English model both come from node_modules
 * (`tesseract.js-core`, `@tesseract.js-data/eng`), so nothing is downloaded at run time. A worker
 * takes ~1.5 s to start: one import shares one (`withOcr`), and closes it at the end.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { OcrEngine, OcrLine } from "./types";

/** A line under this confidence (0–100) is flagged `low`; a record whose mean is under it is `low_confidence`. */
export const LOW_CONFIDENCE = 60;

/** The folder holding `eng.traineddata.gz` from `@tesseract.js-data/eng` (the integer "best" model: accurate and small). */
function langPath(): string {
  const candidates: string[] = [];
  try {
    candidates.push(path.dirname(createRequire(import.meta.url).resolve("@tesseract.js-data/eng/package.json")));
  } catch {
    // bundled: fall back to the project's node_modules
  }
  candidates.push(path.join(process.cwd(), "node_modules", "@tesseract.js-data", "eng"));
  for (const dir of candidates) {
    const model = path.join(dir, "4.0.0_best_int");
    if (existsSync(path.join(model, "eng.traineddata.gz"))) return model;
  }
  throw new Error("the OCR model @tesseract.js-data/eng is not installed (npm install)");
}

/** A tesseract worker that reads English, loaded from node_modules only. */
export async function createOcrEngine(): Promise<OcrEngine> {
  const { createWorker, OEM } = await import("tesseract.js"); // only when a picture needs reading
  const worker = await createWorker("eng", OEM.LSTM_ONLY, { langPath: langPath(), gzip: true, cacheMethod: "none", logger: () => {}, errorHandler: () => {} });
  // Screenshots and PNGs rendered without a resolution: tell tesseract a print-like one instead of letting it warn.
  await worker.setParameters({ user_defined_dpi: "300" });
  return {
    async recognize(image) {
      const { data } = await worker.recognize(image, {}, { text: true, blocks: true });
      const lines: OcrLine[] = (data.blocks ?? []).flatMap((b) => b.paragraphs.flatMap((p) => p.lines.map((l) => ({ text: l.text.trim(), confidence: Math.round(l.confidence) }))));
      return { text: data.text, lines: lines.filter((l) => l.text) };
    },
    async close() {
      await worker.terminate();
    },
  };
}

/** An engine that starts its worker on first use only (a folder of notes needs none). */
export function lazyOcrEngine(): OcrEngine {
  let engine: Promise<OcrEngine> | null = null;
  return {
    recognize: async (image) => (await (engine ??= createOcrEngine())).recognize(image),
    async close() {
      const started = engine;
      engine = null;
      if (started) await (await started.catch(() => null))?.close();
    },
  };
}

/** Runs `fn` with an OCR engine: the one given (left open), or a lazy one of its own, closed after. */
export async function withOcr<T>(shared: OcrEngine | undefined, fn: (ocr: OcrEngine) => Promise<T>): Promise<T> {
  const ocr = shared ?? lazyOcrEngine();
  try {
    return await fn(ocr);
  } finally {
    if (!shared) await ocr.close();
  }
}

/** OCR text of an image and the metadata a record keeps of it: lines with confidence, low ones flagged. */
export async function ocrImage(image: Buffer, ocr: OcrEngine) {
  const { lines } = await ocr.recognize(image);
  const mean = lines.length ? Math.round(lines.reduce((s, l) => s + l.confidence, 0) / lines.length) : 0;
  const lowLines = lines.filter((l) => l.confidence < LOW_CONFIDENCE).length;
  return {
    text: lines.map((l) => l.text).join("\n"),
    meta: {
      engine: "tesseract.js (eng)",
      mean_confidence: mean,
      low_confidence: lines.length > 0 && (mean < LOW_CONFIDENCE || lowLines > lines.length / 2),
      low_lines: lowLines,
      lines: lines.map((l) => ({ ...l, ...(l.confidence < LOW_CONFIDENCE ? { low: true } : {}) })),
    },
  };
}
