/* eslint-disable @typescript-eslint/no-explicit-any -- record metadata read loosely */
/**
 * Documents, images and audio: fixtures are built here (pdf-lib, a hand-made DOCX zip, text
 * rendered to PNG by sharp, a WAV tone); OCR runs the real tesseract.js with its model from node_modules.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourceItem } from "../core/source-item";
import { detectFormat, readImport, type ImportFormat, type ImporterOptions, type ImportWarning } from "./index";
import { lazyOcrEngine } from "./ocr";
import { docx, encryptedPdf, textPdf, textPng, toneWav } from "./testing/media-fixtures";
import type { OcrEngine } from "./types";

let tmp: string;
let ocr: OcrEngine;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "synthex-media-"));
  ocr = lazyOcrEngine();
});
afterAll(async () => {
  await ocr.close();
  await rm(tmp, { recursive: true, force: true });
});

async function collect(file: string, format?: ImportFormat, opts: ImporterOptions = {}) {
  const items: SourceItem[] = [];
  const warnings: ImportWarning[] = [];
  for await (const ev of readImport(file, format ?? (await detectFormat(file)), { ocr, ...opts })) {
    if ("item" in ev) items.push(ev.item);
    else warnings.push(ev.warning);
  }
  return { items, warnings };
}
const meta = (item: SourceItem) => item.metadata as Record<string, any>;
const fx = (name: string) => path.join(tmp, name);

describe("pdf", () => {
  it("makes one item per page with its page number, the document's title and author, and the file's hash", async () => {
    await writeFile(fx("field-notes.pdf"), await textPdf(["Orchard plan\nPlant the pear trees in March.", "The kiwi vines need a trellis by the shed.", "Harvest log"], { title: "Field notes", author: "Ada Lovelace" }));
    expect(await detectFormat(fx("field-notes.pdf"))).toBe("pdf");
    const { items, warnings } = await collect(fx("field-notes.pdf"));
    expect(warnings).toEqual([]);
    expect(items.map((i) => i.externalId)).toEqual(["field-notes.pdf#page=1", "field-notes.pdf#page=2", "field-notes.pdf#page=3"]);
    expect(items[0]!.content).toBe("Orchard plan\nPlant the pear trees in March.");
    expect(items[1]!.content).toContain("kiwi vines need a trellis");
    const m = meta(items[1]!);
    expect(m).toMatchObject({ modality: "document", position: { page: 2, pages: 3 }, document: { title: "Field notes", author: "Ada Lovelace", pages: 3 }, source: { type: "pdf" }, chat: { title: "Field notes" } });
    expect(m.file).toMatchObject({ name: "field-notes.pdf", type: "application/pdf" });
    expect(m.file.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(m.time.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // Same file, same items: a re-import adds nothing.
    expect((await collect(fx("field-notes.pdf"))).items).toEqual(items);
  });

  it("OCRs a scanned page with no text layer, and keeps a blank page as a record that awaits OCR", async () => {
    const scan = await textPng(["Scanned receipt: compost bins", "paid forty euros"]);
    await writeFile(fx("scans.pdf"), await textPdf(["Typed cover page", "", ""], { scanned: { 2: scan } }));
    const { items, warnings } = await collect(fx("scans.pdf"));
    expect(items).toHaveLength(3);
    expect(items[1]!.content).toMatch(/compost bins/i);
    expect(meta(items[1]!).ocr).toMatchObject({ engine: expect.stringContaining("tesseract"), low_confidence: false });
    expect(meta(items[1]!).ocr.lines[0].confidence).toBeGreaterThan(60);
    expect(items[2]!.content).toMatch(/page 3 of 3: no text layer .*awaits OCR/);
    expect(meta(items[2]!).pdf).toEqual({ needs_ocr: true });
    expect(warnings).toEqual([{ conversation: "scans.pdf page 3", reason: expect.stringMatching(/no text layer/) }]);
  }, 60_000);

  it("refuses an encrypted, a corrupt, an empty and a too-long PDF with a message naming the file", async () => {
    await writeFile(fx("locked.pdf"), encryptedPdf());
    await expect(collect(fx("locked.pdf"))).rejects.toThrow(/^locked\.pdf is encrypted \(password-protected\)/);
    await writeFile(fx("broken.pdf"), "%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage");
    await expect(collect(fx("broken.pdf"))).rejects.toThrow(/^broken\.pdf is not a readable PDF .*damaged or truncated/);
    await writeFile(fx("nothing.pdf"), "");
    await expect(collect(fx("nothing.pdf"))).rejects.toThrow(/nothing\.pdf is empty \(0 bytes\)/);
    await writeFile(fx("long.pdf"), await textPdf(["a", "b", "c", "d"]));
    await expect(collect(fx("long.pdf"), "pdf", { limits: { maxPages: 3 } })).rejects.toThrow(/long\.pdf has 4 pages, over the 3-page limit/);
    await expect(collect(fx("long.pdf"), "pdf", { limits: { maxFileBytes: 100 } })).rejects.toThrow(/long\.pdf is 0\.0 MiB, over the 0\.0 MiB limit for one file/);
  });
});

describe("docx and html", () => {
  it("keeps a Word document's headings as structure", async () => {
    await docx(fx("plan.docx"), [
      { text: "Garden plan", style: "Heading1" },
      { text: "Intro paragraph about the plot." },
      { text: "Watering", style: "Heading2" },
      { text: "Drip lines on a timer at 6am." },
    ]);
    expect(await detectFormat(fx("plan.docx"))).toBe("docx");
    const { items } = await collect(fx("plan.docx"));
    expect(items).toHaveLength(1);
    expect(items[0]!.content).toBe("# Garden plan\n\nIntro paragraph about the plot.\n\n## Watering\n\nDrip lines on a timer at 6am.");
    expect(meta(items[0]!)).toMatchObject({
      modality: "document",
      position: { line_start: 1, line_end: 7 },
      document: { title: "Garden plan", headings: [{ level: 1, text: "Garden plan", line: 1 }, { level: 2, text: "Watering", line: 5 }] },
      file: { name: "plan.docx" },
    });
  });

  it("reads HTML: headings, lists and text, never scripts or styles", async () => {
    await writeFile(
      fx("page.html"),
      `<!doctype html><html><head><title>Trip notes</title><style>p{color:red}</style></head><body><script>alert(1)</script><h1>Lyon</h1><p>Take the <b>early</b> train &amp; book the bouchon.</p><h2>List</h2><ul><li>passport</li><li>charger</li></ul></body></html>`,
    );
    expect(await detectFormat(fx("page.html"))).toBe("html");
    const { items } = await collect(fx("page.html"));
    expect(items[0]!.content).toBe("# Lyon\n\nTake the early train & book the bouchon.\n\n## List\n\n- passport\n\n- charger");
    expect(meta(items[0]!).document).toMatchObject({ title: "Trip notes", headings: [{ level: 1, text: "Lyon" }, { level: 2, text: "List" }] });
  });
});

describe("images", () => {
  it("OCRs PNG, JPEG and WebP with per-line confidence and a thumbnail", async () => {
    await writeFile(fx("whiteboard.png"), await textPng(["Sprint goal: migrate billing", "Owner: Priya by Friday"]));
    await writeFile(fx("photo.jpg"), await textPng(["Buy lemons and basil"], { format: "jpeg" }));
    await writeFile(fx("shot.webp"), await textPng(["Meeting moved to Thursday"], { format: "webp" }));
    const png = await collect(fx("whiteboard.png"));
    expect(png.items[0]!.content).toMatch(/Sprint goal: migrate billing\nOwner: Priya by Friday/);
    const m = meta(png.items[0]!);
    expect(m).toMatchObject({ modality: "image", file: { name: "whiteboard.png", type: "image/png" }, position: { line_start: 1, line_end: 2 }, ocr: { low_confidence: false } });
    expect(m.ocr.lines).toHaveLength(2);
    expect(m.ocr.lines[0]).toMatchObject({ text: "Sprint goal: migrate billing", confidence: expect.any(Number) });
    expect(m.image.thumbnail).toMatch(/^data:image\/webp;base64,/);
    expect((await collect(fx("photo.jpg"))).items[0]!.content).toMatch(/lemons and basil/);
    expect((await collect(fx("shot.webp"))).items[0]!.content).toMatch(/moved to Thursday/);
  }, 60_000);

  it("flags low-confidence text", async () => {
    // Faint, tiny, noisy text: tesseract guesses.
    const sharp = (await import("sharp")).default;
    const faint = await sharp(await textPng(["the quick brown fox jumps"], { fontSize: 9, width: 220 })).blur(1.2).linear(0.15, 210).png().toBuffer();
    await writeFile(fx("faint.png"), faint);
    const { items, warnings } = await collect(fx("faint.png"));
    const ocrMeta = meta(items[0]!).ocr;
    if (ocrMeta.lines.length) {
      expect(ocrMeta.low_confidence).toBe(true);
      expect(warnings.some((w) => /OCR confidence is low/.test(w.reason))).toBe(true);
    } else {
      expect(items[0]!.content).toMatch(/OCR found no text/);
    }
  }, 60_000);

  it("refuses a zero-byte, corrupt, oversized or mislabelled image, naming it", async () => {
    await writeFile(fx("empty.png"), "");
    await expect(collect(fx("empty.png"), "image")).rejects.toThrow(/^empty\.png is empty \(0 bytes\)/);
    await expect(detectFormat(fx("empty.png"))).rejects.toThrow(/empty\.png is empty/);
    const png = await textPng(["x"]);
    await writeFile(fx("cut.png"), png.subarray(0, 60));
    await expect(collect(fx("cut.png"), "image")).rejects.toThrow(/^cut\.png (is not a readable image|could not be decoded)/);
    await writeFile(fx("big.png"), png);
    await expect(collect(fx("big.png"), "image", { limits: { maxPixels: 1000 } })).rejects.toThrow(/big\.png is 1100×\d+ .*over the 0-megapixel limit/);
    await writeFile(fx("really-a-pdf.png"), await textPdf(["hi"]));
    await expect(detectFormat(fx("really-a-pdf.png"))).rejects.toThrow(/really-a-pdf\.png is named \.png but its content is a PDF document/);
    await writeFile(fx("notes.pdf"), "just some text");
    await expect(detectFormat(fx("notes.pdf"))).rejects.toThrow(/notes\.pdf is named \.pdf but its content is plain text/);
  });
});

describe("audio", () => {
  it("without a provider, stores a record that awaits transcription; with one, timed segments", async () => {
    await toneWav(fx("memo.wav"), 2);
    expect(await detectFormat(fx("memo.wav"))).toBe("audio");
    const waiting = await collect(fx("memo.wav"));
    expect(waiting.items[0]!.content).toMatch(/memo\.wav: an audio memo of 0:02 that awaits transcription/);
    expect(meta(waiting.items[0]!)).toMatchObject({ modality: "audio", transcript: { status: "awaiting" }, audio: { seconds: 2 }, position: { start_s: 0, end_s: 2 } });
    expect(waiting.warnings[0]!.reason).toMatch(/awaits transcription/);
    const done = await collect(fx("memo.wav"), "audio", {
      transcribe: async ({ name, mime }) => {
        expect([name, mime]).toEqual(["memo.wav", "audio/wav"]);
        return { text: "Call the plumber. Then the bank.", duration: 2, model: "whisper-1", segments: [{ start: 0, end: 1.2, text: "Call the plumber." }, { start: 1.2, end: 2, text: "Then the bank." }] };
      },
    });
    expect(done.items[0]!.externalId).toBe(waiting.items[0]!.externalId);
    expect(done.items[0]!.content).toBe("[0:00–0:01] Call the plumber.\n[0:01–0:02] Then the bank.");
    expect(meta(done.items[0]!).transcript).toMatchObject({ status: "done", model: "whisper-1", segments: [{ start: 0, end: 1.2 }, { start: 1.2, end: 2 }] });
  });

  it("refuses an unknown codec and a recording over the limit", async () => {
    await toneWav(fx("adpcm.wav"), 1, 0x11);
    await expect(collect(fx("adpcm.wav"))).rejects.toThrow(/adpcm\.wav uses WAV codec 0x11, which is not one a transcription service reads/);
    await toneWav(fx("long.wav"), 3);
    await expect(collect(fx("long.wav"), "audio", { limits: { maxAudioSeconds: 2 } })).rejects.toThrow(/long\.wav is 0:03 long, over the 0:02 limit/);
  });
});

describe("folder batch", () => {
  it("imports the good files and skips each bad one whole, naming it", async () => {
    const dir = fx("inbox");
    await mkdir(path.join(dir, "scans"), { recursive: true });
    await writeFile(path.join(dir, "note.md"), "# Note\nbring the ladder");
    await writeFile(path.join(dir, "report.pdf"), await textPdf(["Quarterly report", "Revenue grew in the north region"]));
    await writeFile(path.join(dir, "scans", "board.png"), await textPng(["Retro: fewer meetings"]));
    await writeFile(path.join(dir, "locked.pdf"), encryptedPdf());
    await writeFile(path.join(dir, "zero.png"), "");
    await writeFile(path.join(dir, "liar.jpg"), "<html>not an image</html>");
    const { items, warnings } = await collect(dir, "folder");
    expect(items.map((i) => i.externalId)).toEqual(["note.md", "report.pdf#page=1", "report.pdf#page=2", "scans/board.png"]);
    expect(meta(items[3]!).file.name).toBe("board.png");
    expect(warnings).toEqual([
      { conversation: "liar.jpg", reason: expect.stringMatching(/^liar\.jpg is named \.jpg but its content is an HTML page.*; skipped$/), skipped: true },
      { conversation: "locked.pdf", reason: expect.stringMatching(/^locked\.pdf is encrypted.*; skipped$/), skipped: true },
      { conversation: "zero.png", reason: expect.stringMatching(/^zero\.png is empty \(0 bytes\).*; skipped$/), skipped: true },
    ]);
  }, 60_000);
});
