/**
 * The images a PDF holds, read from its object dictionaries (pdf-lib) before pdf.js decodes
 * anything: each image XObject's declared Width × Height, and which pages draw it. A deflated
 * stream of a few kilobytes can declare 8000×8000 pixels; pdf.js would decode it whole (a gigabyte
 * of memory, seconds of blocked event loop) and OCR would spend half a minute on it. The importer
 * refuses such a file by these numbers, never by decoding it.
 *
 * Per page: every image reachable from the page's dictionary (its resources, form XObjects inside
 * them, patterns, Type 3 fonts, annotation appearances, soft masks) without passing through another
 * page. Images that no page reaches are listed too (page null): the per-image limit applies to every
 * image in the file.
 */
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRef, PDFStream, type PDFObject } from "pdf-lib";

export interface PdfImage {
  width: number;
  height: number;
  /** The object number when the image is an indirect object (always, for an XObject). */
  ref: string | null;
}

export interface PdfImageScan {
  /** For page n (1-based) at index n-1: the distinct images it draws. */
  pages: PdfImage[][];
  /** Images of the file that no page reaches. */
  unreached: PdfImage[];
}

/** Back-references and links: following them would wander into other pages or the document's outline. */
const SKIP_KEYS = new Set(["Parent", "P", "Prev", "Next", "First", "Last", "Dest", "Dests", "A", "AA", "Thread", "B", "StructParent", "StructParents", "Metadata", "Contents"]);

const nameOf = (dict: PDFDict, key: string) => {
  const v = dict.get(PDFName.of(key));
  return v instanceof PDFName ? v.decodeText() : null;
};

function dimension(dict: PDFDict, key: string): number {
  const v = dict.lookup(PDFName.of(key));
  return v instanceof PDFNumber ? v.asNumber() : 0;
}

function imageOf(dict: PDFDict, ref: PDFRef | null): PdfImage | null {
  if (nameOf(dict, "Subtype") !== "Image") return null;
  return { width: Math.max(0, dimension(dict, "Width")), height: Math.max(0, dimension(dict, "Height")), ref: ref ? `${ref.objectNumber} ${ref.generationNumber} R` : null };
}

/**
 * The images each page of `bytes` draws, by their declared dimensions; null when pdf-lib cannot
 * parse the file (pdf.js's own image-size guard and the time budget still apply then).
 */
export async function scanPdfImages(bytes: Uint8Array): Promise<PdfImageScan | null> {
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(bytes, { ignoreEncryption: true, throwOnInvalidObject: false, updateMetadata: false, parseSpeed: 500 });
  } catch {
    return null;
  }
  const context = doc.context;
  const reached = new Set<PDFObject>();
  const pageOf = (page: PDFDict, inherited: PDFDict | undefined): PdfImage[] => {
    const images: PdfImage[] = [];
    const seen = new Set<PDFObject>();
    // The page's own dictionary, and its resources even when inherited from the page tree (Parent is not followed).
    const stack: Array<{ obj: PDFObject | undefined; ref: PDFRef | null }> = [
      { obj: page, ref: null },
      { obj: inherited, ref: null },
    ];
    while (stack.length) {
      const { obj: raw, ref } = stack.pop()!;
      const obj = raw instanceof PDFRef ? context.lookup(raw) : raw;
      const own = raw instanceof PDFRef ? raw : ref;
      if (!obj || seen.has(obj)) continue;
      seen.add(obj);
      const dict = obj instanceof PDFStream ? obj.dict : obj instanceof PDFDict ? obj : null;
      if (obj instanceof PDFArray) {
        for (let i = 0; i < obj.size(); i++) stack.push({ obj: obj.get(i), ref: null });
        continue;
      }
      if (!dict) continue;
      if (obj !== page) {
        const type = nameOf(dict, "Type");
        if (type === "Page" || type === "Pages") continue;
      }
      const image = obj instanceof PDFStream ? imageOf(dict, own) : null;
      if (image) {
        images.push(image);
        reached.add(obj);
      }
      for (const [key, value] of dict.entries()) if (!SKIP_KEYS.has(key.decodeText())) stack.push({ obj: value, ref: null });
    }
    return images;
  };
  let pages: PdfImage[][];
  try {
    pages = doc.getPages().map((p) => pageOf(p.node, p.node.Resources()));
  } catch {
    return null;
  }
  const unreached: PdfImage[] = [];
  for (const [ref, obj] of context.enumerateIndirectObjects()) {
    if (obj instanceof PDFStream && !reached.has(obj)) {
      const image = imageOf(obj.dict, ref);
      if (image) unreached.push(image);
    }
  }
  return { pages, unreached };
}
