/**
 * Images (PNG, JPEG, WebP) → OCR text, one item per file: per-line confidence in `metadata.ocr`, a
 * low-confidence result flagged, a small WebP thumbnail (a data URL, ≤ 160 px) in the metadata, and
 * the original beside the item (bounded: ≤ ORIGINAL_MAX_PX on its longer side and re-encoded as WebP
 * when larger or heavier than ORIGINAL_MAX_BYTES), which the import stores by content hash so the
 * explorer can show the picture itself beside its OCR text. sharp decodes
 * the image (a corrupt or oversized one is refused before any OCR) and hands tesseract a greyscale PNG.
 */
import { readFile } from "node:fs/promises";
import sharp, { type Metadata } from "sharp";
import { checkFile, displayName, FileBudget, fileSha256, mediaLimits, mediaMetadata } from "./media";
import { ocrImage, withOcr } from "./ocr";
import { ImportError, type ImportEvent, type ImporterOptions, type MediaOriginal } from "./types";

const MIME: Record<string, string> = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };
export const THUMBNAIL_PX = 160;
/** The stored original's bound: longer side in pixels, and size in bytes below which an image is kept as it came. */
export const ORIGINAL_MAX_PX = 1600;
export const ORIGINAL_MAX_BYTES = 1024 * 1024;

export async function* importImage(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const limits = mediaLimits(opts.limits);
  const bytes = await checkFile(file, limits);
  const name = displayName(file, opts);
  const budget = new FileBudget(name, file, limits);
  let meta: Metadata;
  try {
    meta = await sharp(file, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new ImportError(`${name} is not a readable image (${(err as Error).message}).`, file);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (!meta.format || !MIME[meta.format]) throw new ImportError(`${name} is a ${meta.format ?? "unknown"} image; OCR reads PNG, JPEG and WebP.`, file);
  if (width * height > limits.maxPixels) {
    throw new ImportError(`${name} is ${width}×${height} (${(width * height / 1e6).toFixed(1)} megapixels), over the ${(limits.maxPixels / 1e6).toFixed(0)}-megapixel limit (SYNTHEX_IMPORT_MAX_PIXELS).`, file);
  }
  let png: Buffer;
  let thumb: Buffer;
  let original: Omit<MediaOriginal, "sha256">;
  try {
    png = await sharp(file, { limitInputPixels: false }).rotate().greyscale().png().toBuffer();
    thumb = await sharp(file, { limitInputPixels: false }).rotate().resize(THUMBNAIL_PX, THUMBNAIL_PX, { fit: "inside", withoutEnlargement: true }).webp({ quality: 60 }).toBuffer();
    original = await boundedOriginal(file, bytes, { width, height, type: MIME[meta.format]!, orientation: meta.orientation });
  } catch (err) {
    throw new ImportError(`${name} could not be decoded (${(err as Error).message}): the image is damaged or truncated.`, file);
  }
  // OCR runs in tesseract's worker thread: at the file's deadline (SYNTHEX_IMPORT_MAX_SECONDS) it is terminated.
  const ocr = await withOcr(opts.ocr, (engine) => budget.within(ocrImage(png, engine), undefined, () => engine.close())).catch((err: Error) => {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`${name}: OCR failed (${err.message}).`, file);
  });
  if (!ocr.text.trim()) yield { warning: { conversation: name, reason: "OCR found no text in the image; kept as a record that says so" } };
  if (ocr.meta.low_confidence) yield { warning: { conversation: name, reason: `OCR confidence is low (mean ${ocr.meta.mean_confidence}/100): check the text` } };
  const title = name.replace(/\.[^.]+$/, "");
  const sha256 = await fileSha256(file);
  yield {
    original: { ...original, sha256 },
    item: {
      externalId: opts.fileKey ?? name,
      content: ocr.text.trim() || `[${name}: an image in which OCR found no text.]`,
      metadata: mediaMetadata({
        format: "image",
        file: { name, sha256, bytes, type: MIME[meta.format]! },
        position: { line_start: 1, line_end: Math.max(1, ocr.meta.lines.length) },
        path: opts.displayPath ?? file,
        title,
        extra: {
          image: { width, height, thumbnail: `data:image/webp;base64,${thumb.toString("base64")}`, original: { type: original.type, width: original.width, height: original.height, bytes: original.bytes.length } },
          ocr: ocr.meta,
        },
      }),
    },
  };
}

/** The image as stored beside its record: as it came when small and upright, else ≤ ORIGINAL_MAX_PX, re-encoded as WebP. */
async function boundedOriginal(file: string, bytes: number, img: { width: number; height: number; type: string; orientation?: number }): Promise<Omit<MediaOriginal, "sha256">> {
  const upright = !img.orientation || img.orientation === 1;
  if (upright && bytes <= ORIGINAL_MAX_BYTES && Math.max(img.width, img.height) <= ORIGINAL_MAX_PX) {
    return { type: img.type, width: img.width, height: img.height, bytes: await readFile(file) };
  }
  const { data, info } = await sharp(file, { limitInputPixels: false })
    .rotate()
    .resize(ORIGINAL_MAX_PX, ORIGINAL_MAX_PX, { fit: "inside", withoutEnlargement: true })
    .webp({ quality: 80 })
    .toBuffer({ resolveWithObject: true });
  return { type: "image/webp", width: info.width, height: info.height, bytes: data };
}
