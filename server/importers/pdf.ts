/**
 * PDF → one item per page: the page's text (pdf.js through `unpdf`, pure JS), its page number,
 * and the document's title and author from its metadata. A page without a text layer (a scan) is
 * OCR'd from its largest embedded image; when that gives nothing, the page is kept as a record that
 * says so (`pdf.needs_ocr`), never silently empty. All pages are read before the first is
 * yielded, so a file that fails on page 7 adds nothing: no half-imported document.
 */
import { readFile } from "node:fs/promises";
import sharp from "sharp";
import { extractImages, getDocumentProxy } from "unpdf";
import type { SourceItem } from "../core/source-item";
import { checkFile, displayName, FileBudget, fileSha256, type MediaLimits, mediaLimits, mediaMetadata, megapixels } from "./media";
import { ocrImage, withOcr } from "./ocr";
import { type PdfImage, scanPdfImages } from "./pdf-images";
import { capTitle, ImportError, toIso, type ImportEvent, type ImporterOptions, type OcrEngine } from "./types";

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

/** PDF date `D:20240301120000Z` (or `+01'00'`) → ISO; null when absent or unreadable. */
export function pdfDate(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const m = /^D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz]|[+-]\d{2}'?\d{2}'?)?/.exec(value.trim());
  if (!m) return toIso(value);
  const [, y, mo = "01", d = "01", h = "00", mi = "00", s = "00", tz] = m;
  const zone = !tz || /z/i.test(tz) ? "Z" : `${tz.slice(0, 3)}:${tz.replace(/'/g, "").slice(3, 5)}`;
  return toIso(`${y}-${mo}-${d}T${h}:${mi}:${s}${zone}`);
}

/** Why pdf.js refused the file, in words a user can act on. */
function openError(name: string, err: unknown): string {
  const e = err as { name?: string; message?: string };
  if (e?.name === "PasswordException") return `${name} is encrypted (password-protected): remove the password and import it again.`;
  if (e?.name === "InvalidPDFException") return `${name} is not a readable PDF (${e.message ?? "invalid structure"}): the file is damaged or truncated.`;
  return `${name} could not be opened as a PDF (${e?.message ?? String(err)}).`;
}

/** The text of one page, lines kept where pdf.js ends them. */
async function pageText(pdf: PdfDocument, n: number): Promise<string> {
  const page = await pdf.getPage(n);
  try {
    const content = await page.getTextContent();
    let text = "";
    for (const item of content.items) {
      if (!("str" in item)) continue;
      text += item.str + (item.hasEOL ? "\n" : "");
    }
    return text.replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
  } finally {
    page.cleanup();
  }
}

/** OCR of a scanned page: its largest embedded image. */
async function ocrPage(pdf: PdfDocument, n: number, ocr: OcrEngine, limits: MediaLimits) {
  const images = await extractImages(pdf, n);
  const biggest = images.sort((a, b) => b.width * b.height - a.width * a.height)[0];
  if (!biggest || biggest.width * biggest.height < 10_000) return null;
  const png = await sharp(Buffer.from(biggest.data.buffer, biggest.data.byteOffset, biggest.data.byteLength), {
    raw: { width: biggest.width, height: biggest.height, channels: biggest.channels },
    limitInputPixels: limits.maxPixels,
  })
    .greyscale()
    .png()
    .toBuffer();
  return ocrImage(png, ocr);
}

const dims = (img: PdfImage) => `${img.width}×${img.height} (${megapixels(img.width * img.height)})`;

/**
 * The pixels pdf.js would decode for each page, from the images' declared dimensions (pdf-lib reads
 * the dictionaries; nothing is decoded): an image over SYNTHEX_IMPORT_MAX_PIXELS anywhere in the
 * file refuses it, naming the page. When pdf-lib's page tree does not match pdf.js's, each page
 * counts as the file's largest image (what OCR of a page reads).
 */
async function pagePixels(file: string, name: string, pages: number, limits: MediaLimits): Promise<(n: number) => number> {
  const scan = await scanPdfImages(new Uint8Array(await readFile(file)));
  if (!scan) return () => 0; // unparsable for pdf-lib: pdf.js's own guard (maxImageSize) and the time budget remain
  const over = (img: PdfImage) => img.width * img.height > limits.maxPixels;
  const limit = `over the ${megapixels(limits.maxPixels)} limit (SYNTHEX_IMPORT_MAX_PIXELS)`;
  for (const [i, images] of scan.pages.entries()) {
    const big = images.find(over);
    if (big) throw new ImportError(`${name}, page ${i + 1}: embedded image ${dims(big)} is ${limit}.`, file, `page ${i + 1}`);
  }
  const stray = scan.unreached.find(over);
  if (stray) throw new ImportError(`${name}: embedded image ${dims(stray)} (object ${stray.ref}, drawn on no page) is ${limit}.`, file);
  const sum = (images: PdfImage[]) => images.reduce((s, img) => s + img.width * img.height, 0);
  if (scan.pages.length === pages) return (n) => sum(scan.pages[n - 1] ?? []);
  const largest = Math.max(0, ...[...scan.pages.flat(), ...scan.unreached].map((img) => img.width * img.height));
  return () => largest;
}

export async function* importPdf(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const limits = mediaLimits(opts.limits);
  const bytes = await checkFile(file, limits);
  const name = displayName(file, opts);
  const budget = new FileBudget(name, file, limits);
  const sha256 = await fileSha256(file);
  let pdf: PdfDocument;
  try {
    // maxImageSize: pdf.js drops, never decodes, an image over the pixel limit (inline images too, which no dictionary lists).
    pdf = await getDocumentProxy(new Uint8Array(await readFile(file)), { verbosity: 0, isEvalSupported: false, maxImageSize: limits.maxPixels });
  } catch (err) {
    throw new ImportError(openError(name, err), file);
  }
  try {
    if (pdf.numPages > limits.maxPages) {
      throw new ImportError(`${name} has ${pdf.numPages} pages, over the ${limits.maxPages}-page limit (SYNTHEX_IMPORT_MAX_PAGES).`, file);
    }
    // Every embedded image is measured before any is decoded.
    const pixelsOf = await pagePixels(file, name, pdf.numPages, limits);
    budget.check();
    const info = ((await pdf.getMetadata().catch(() => null))?.info ?? {}) as Record<string, unknown>;
    const title = capTitle(typeof info.Title === "string" && info.Title.trim() ? info.Title.trim() : name.replace(/\.pdf$/i, ""));
    const author = typeof info.Author === "string" && info.Author.trim() ? info.Author.trim() : null;
    const createdAt = pdfDate(info.CreationDate);
    const pages: Array<{ text: string; ocr?: Awaited<ReturnType<typeof ocrImage>>; needsOcr?: boolean }> = [];
    let decoded = 0;
    await withOcr(opts.ocr, async (ocrEngine) => {
      for (let n = 1; n <= pdf.numPages; n++) {
        let text: string;
        try {
          text = await budget.within(pageText(pdf, n), `page ${n}`, () => {});
        } catch (err) {
          if (err instanceof ImportError) throw err;
          throw new ImportError(`${name}, page ${n} of ${pdf.numPages}: its text could not be read (${(err as Error).message}).`, file, `page ${n}`);
        }
        if (text) {
          pages.push({ text });
          continue;
        }
        // A scanned page: its images are decoded for OCR. The file's pixel budget counts each page that draws them.
        decoded += pixelsOf(n);
        if (decoded > limits.maxFilePixels) {
          throw new ImportError(
            `${name}, page ${n}: the embedded images of its pages to OCR add up to ${megapixels(decoded)} by this page, over the ${megapixels(limits.maxFilePixels)} limit for one file (SYNTHEX_IMPORT_MAX_FILE_PIXELS).`,
            file,
            `page ${n}`,
          );
        }
        // At the deadline the OCR worker is terminated (a lazy engine starts a fresh one for the next file).
        const ocr = await budget.within(ocrPage(pdf, n, ocrEngine, limits), `page ${n}`, () => ocrEngine.close()).catch((err: Error) => {
          if (err instanceof ImportError) throw err;
          throw new ImportError(`${name}, page ${n} of ${pdf.numPages}: OCR of its scanned image failed (${err.message}).`, file, `page ${n}`);
        });
        pages.push(ocr?.text ? { text: ocr.text, ocr } : { text: "", needsOcr: true });
      }
    });
    const total = pdf.numPages;
    for (const [i, page] of pages.entries()) {
      const n = i + 1;
      if (page.needsOcr) {
        yield { warning: { conversation: `${name} page ${n}`, reason: "has no text layer and no image OCR could read; kept as a record that awaits OCR" } };
      }
      const content = page.needsOcr ? `[${name}, page ${n} of ${total}: no text layer and no readable image; this page awaits OCR.]` : page.text;
      const item: SourceItem = {
        externalId: `${opts.fileKey ?? name}#page=${n}`,
        content,
        metadata: mediaMetadata({
          format: "pdf",
          file: { name, sha256, bytes, type: "application/pdf" },
          position: { page: n, pages: total },
          path: opts.displayPath ?? file,
          title,
          createdAt,
          extra: {
            document: { title, author, pages: total },
            ...(page.ocr ? { ocr: page.ocr.meta } : {}),
            ...(page.needsOcr ? { pdf: { needs_ocr: true } } : {}),
          },
        }),
      };
      yield { item };
    }
  } finally {
    await pdf.destroy().catch(() => {});
  }
}
