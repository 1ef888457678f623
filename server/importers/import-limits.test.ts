/**
 * What one imported file may cost, and what its name may promise: a PDF's embedded images are
 * measured from their dictionaries before anything decodes them (an 8000×8000 image in a 63 KB
 * PDF), the pages of a file share one pixel budget (20 pages drawing one image count 20 times),
 * reading a file has a time budget that ends running OCR, and content that contradicts the
 * extension or the chosen format is refused by name. Real files, built here; OCR is a recording
 * fake except where the real tesseract worker is the point.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { detectFormat, readImport, type ImportEvent, type ImportFormat, type ImporterOptions } from "./index";
import { imagePdf, textPdf, textPng } from "./testing/media-fixtures";
import type { OcrEngine } from "./types";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "synthex-limits-"));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));
const fx = (name: string) => path.join(tmp, name);

/** An OCR engine that answers at once and counts the images it was given (and their size). */
function recordingOcr() {
  const seen: number[] = [];
  const engine: OcrEngine = {
    async recognize(image) {
      seen.push(image.length);
      return { text: "scanned words", lines: [{ text: "scanned words", confidence: 90 }] };
    },
    async close() {},
  };
  return { engine, seen };
}

async function collect(file: string, format?: ImportFormat, opts: ImporterOptions = {}) {
  const events: ImportEvent[] = [];
  for await (const ev of readImport(file, format ?? (await detectFormat(file)), opts)) events.push(ev);
  return events;
}

describe("a PDF's embedded images are measured before any is decoded", () => {
  const env = { ...process.env };
  afterEach(() => {
    process.env = { ...env };
  });

  it("refuses the 63 KB PDF holding an 8000×8000 image, naming the file and page, without decoding or OCR-ing it", async () => {
    const bytes = await imagePdf({ width: 8000, height: 8000 });
    expect(bytes.length).toBeLessThan(100_000);
    await writeFile(fx("scan.pdf"), bytes);
    const { engine, seen } = recordingOcr();
    const started = Date.now();
    const rss = process.memoryUsage().rss;
    await expect(collect(fx("scan.pdf"), undefined, { ocr: engine })).rejects.toThrow(
      "scan.pdf, page 1: embedded image 8000×8000 (64 MP) is over the 50 MP limit (SYNTHEX_IMPORT_MAX_PIXELS).",
    );
    expect(seen).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
    // Decoding it would take 64 MB of grey and 256 MB of RGBA.
    expect(process.memoryUsage().rss - rss).toBeLessThan(150 * 1024 * 1024);
  });

  it("finds the image inside a form XObject on page 3, behind two typed pages, and reads the limit from the environment", async () => {
    process.env.SYNTHEX_IMPORT_MAX_PIXELS = "1000000";
    await writeFile(fx("hidden.pdf"), await imagePdf({ width: 1200, height: 1000, textPages: 2, viaForm: true }));
    const { engine, seen } = recordingOcr();
    await expect(collect(fx("hidden.pdf"), "pdf", { ocr: engine })).rejects.toThrow(/^hidden\.pdf, page 3: embedded image 1200×1000 \(1\.2 MP\) is over the 1 MP limit \(SYNTHEX_IMPORT_MAX_PIXELS\)\.$/);
    expect(seen).toEqual([]);
  });

  it("counts an image once for every scanned page that draws it: 20 pages sharing one image pass the file's pixel budget at page 11", async () => {
    process.env.SYNTHEX_IMPORT_MAX_FILE_PIXELS = "10000000";
    await writeFile(fx("shared.pdf"), await imagePdf({ width: 1000, height: 1000, pages: 20 }));
    const { engine, seen } = recordingOcr();
    await expect(collect(fx("shared.pdf"), "pdf", { ocr: engine })).rejects.toThrow(
      "shared.pdf, page 11: the embedded images of its pages to OCR add up to 11 MP by this page, over the 10 MP limit for one file (SYNTHEX_IMPORT_MAX_FILE_PIXELS).",
    );
    // Pages 1–10 were read (nothing of them is kept: a PDF is read whole before any page is yielded); page 11's image never was.
    expect(seen).toHaveLength(10);
    // Within the budget the same file imports, one OCR'd record per page.
    process.env.SYNTHEX_IMPORT_MAX_FILE_PIXELS = "20000000";
    const events = await collect(fx("shared.pdf"), "pdf", { ocr: recordingOcr().engine });
    expect(events.filter((e) => "item" in e)).toHaveLength(20);
  });

  it("pages with a text layer are not decoded, so their images do not count against the file's budget", async () => {
    const scan = await textPng(["Scanned receipt"]);
    await writeFile(fx("typed.pdf"), await textPdf(["Typed page one", "Typed page two", ""], { scanned: { 1: scan, 2: scan, 3: scan } }));
    const { engine, seen } = recordingOcr();
    const pixels = 1100 * 127; // textPng's size for one line
    const events = await collect(fx("typed.pdf"), "pdf", { ocr: engine, limits: { maxFilePixels: pixels * 1.5 } });
    expect(events.filter((e) => "item" in e)).toHaveLength(3);
    expect(seen).toHaveLength(1);
  });
});

describe("one file's time budget, OCR included", () => {
  /** An OCR engine that never answers until it is closed (a worker grinding through a huge image). */
  function stuckOcr() {
    let closed = 0;
    const engine: OcrEngine = {
      recognize: () => new Promise(() => {}),
      async close() {
        closed++;
      },
    };
    return { engine, closed: () => closed };
  }

  it("ends a PDF's OCR at the deadline, closes the engine and names the file and page", async () => {
    await writeFile(fx("slow.pdf"), await textPdf(["Typed cover", ""], { scanned: { 2: await textPng(["a scanned page"]) } }));
    const { engine, closed } = stuckOcr();
    const started = Date.now();
    await expect(collect(fx("slow.pdf"), "pdf", { ocr: engine, limits: { maxSeconds: 0.5 } })).rejects.toThrow(
      /^slow\.pdf, page 2: reading the file took longer than the 0\.5-second limit for one file \(SYNTHEX_IMPORT_MAX_SECONDS\); nothing of it was imported\.$/,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(closed()).toBeGreaterThanOrEqual(1);
  }, 15_000);

  it("ends an image's OCR at the deadline: the real tesseract worker is terminated, and a lazy engine starts afresh for the next file", async () => {
    const { lazyOcrEngine } = await import("./ocr");
    const ocr = lazyOcrEngine();
    try {
      await writeFile(fx("photo.png"), await textPng(["A photo of a whiteboard", "with three lines", "of marker text"]));
      const started = Date.now();
      process.env.SYNTHEX_IMPORT_MAX_SECONDS = "0.2";
      await expect(collect(fx("photo.png"), undefined, { ocr })).rejects.toThrow(/^photo\.png: reading the file took longer than the 0\.2-second limit for one file \(SYNTHEX_IMPORT_MAX_SECONDS\)/);
      expect(Date.now() - started).toBeLessThan(10_000);
      delete process.env.SYNTHEX_IMPORT_MAX_SECONDS;
      const [event] = await collect(fx("photo.png"), undefined, { ocr });
      expect(event && "item" in event && event.item.content).toMatch(/whiteboard/);
    } finally {
      delete process.env.SYNTHEX_IMPORT_MAX_SECONDS;
      await ocr.close();
    }
  }, 60_000);
});

describe("content that contradicts its name or its chosen format", () => {
  let png: Buffer;
  beforeAll(async () => {
    png = await textPng(["not a note"]);
  });

  it("a .md (or .txt, .json, .jsonl) holding a PNG, a PDF or a zip is refused by name, not imported as what it is", async () => {
    await writeFile(fx("notes.md"), png);
    await expect(detectFormat(fx("notes.md"))).rejects.toThrow("notes.md is named .md but its content is a PNG image; rename it to match, or choose its format.");
    await writeFile(fx("notes.txt"), await textPdf(["a PDF"]));
    await expect(detectFormat(fx("notes.txt"))).rejects.toThrow("notes.txt is named .txt but its content is a PDF document;");
    await writeFile(fx("chats.jsonl"), Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(40)]));
    await expect(detectFormat(fx("chats.jsonl"))).rejects.toThrow("chats.jsonl is named .jsonl but its content is a zip archive;");
    await writeFile(fx("export.json"), png);
    await expect(detectFormat(fx("export.json"))).rejects.toThrow("export.json is named .json but its content is a PNG image;");
    // The other way: a PNG named .pdf, and a PDF named .zip.
    await writeFile(fx("report.pdf"), png);
    await expect(detectFormat(fx("report.pdf"))).rejects.toThrow("report.pdf is named .pdf but its content is a PNG image;");
    await writeFile(fx("export.zip"), await textPdf(["a PDF"]));
    await expect(detectFormat(fx("export.zip"))).rejects.toThrow("export.zip is named .zip but its content is a PDF document;");
  });

  it("a chosen format must fit the content too: a PNG is neither markdown nor a PDF, but is an image whatever its name", async () => {
    await writeFile(fx("shot.md"), png);
    await expect(collect(fx("shot.md"), "markdown")).rejects.toThrow("shot.md was to be imported as markdown (text), but its content is a PNG image; choose the format that matches it.");
    await expect(collect(fx("shot.md"), "pdf")).rejects.toThrow("shot.md was to be imported as pdf, but its content is a PNG image; choose the format that matches it.");
    await writeFile(fx("doc.pdf"), await textPdf(["a PDF"]));
    await expect(collect(fx("doc.pdf"), "image")).rejects.toThrow("doc.pdf was to be imported as image, but its content is a PDF document;");
    await expect(collect(fx("doc.pdf"), "jsonl")).rejects.toThrow("doc.pdf was to be imported as jsonl (text), but its content is a PDF document;");
    // Choosing the format that matches the content is the way out the message offers.
    const events = await collect(fx("shot.md"), "image", { ocr: recordingOcr().engine });
    expect(events.find((e) => "item" in e)).toBeTruthy();
  });

  it("text that merely starts like a weak signature (an ID3 mention, a UTF-16 note) is still text", async () => {
    await writeFile(fx("tags.md"), "ID3 tags hold an MP3's title and artist.\n");
    expect(await detectFormat(fx("tags.md"))).toBe("markdown");
    expect(await collect(fx("tags.md"))).toHaveLength(1);
    await writeFile(fx("utf16.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello", "utf16le")]));
    expect(await detectFormat(fx("utf16.txt"))).toBe("text");
  });

  it("in a folder, a .md holding a PNG is skipped by name and the other notes are imported", async () => {
    const dir = fx("vault");
    await mkdir(dir);
    await writeFile(path.join(dir, "photo.md"), png);
    await writeFile(path.join(dir, "real.md"), "# Real\n\nA real note.\n");
    const events = await collect(dir, "folder");
    expect(events.filter((e) => "item" in e).map((e) => ("item" in e ? e.item.externalId : ""))).toEqual(["real.md"]);
    expect(events.filter((e) => "warning" in e).map((e) => ("warning" in e ? e.warning : null))).toEqual([
      { conversation: "photo.md", reason: "is named .md but its content is a PNG image; rename it to match, or choose its format; skipped", skipped: true },
    ]);
  });
});
