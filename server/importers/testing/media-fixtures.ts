/**
 * Media fixtures built on the spot, for tests and `npm run bench:import`: PDFs (pdf-lib), a DOCX
 * (a minimal OOXML zip written with yazl), PNG images of rendered text (sharp renders an SVG),
 * and a WAV tone. Nothing here is committed binary.
 */
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import { concatTransformationMatrix, drawObject, PDFDocument, popGraphicsState, pushGraphicsState, StandardFonts } from "pdf-lib";
import sharp from "sharp";
import { ZipFile } from "yazl";

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A PNG of black text lines on white, big enough for OCR to read. */
export async function textPng(lines: string[], opts: { width?: number; fontSize?: number; format?: "png" | "jpeg" | "webp" } = {}): Promise<Buffer> {
  const size = opts.fontSize ?? 44;
  const width = opts.width ?? 1100;
  const height = Math.round(size * 1.9 * lines.length + size);
  const text = lines.map((l, i) => `<text x="30" y="${Math.round(size * 1.4 + i * size * 1.9)}" font-family="DejaVu Sans, Liberation Sans, sans-serif" font-size="${size}" fill="black">${escapeXml(l)}</text>`).join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="white"/>${text}</svg>`;
  const img = sharp(Buffer.from(svg));
  return opts.format === "jpeg" ? img.jpeg().toBuffer() : opts.format === "webp" ? img.webp().toBuffer() : img.png().toBuffer();
}

/** A PDF whose page n holds `pages[n-1]` as text (an empty string: a page with no text), with a title and author. */
export async function textPdf(pages: string[], meta: { title?: string; author?: string; scanned?: Record<number, Buffer> } = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  if (meta.title) doc.setTitle(meta.title);
  if (meta.author) doc.setAuthor(meta.author);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const [i, text] of pages.entries()) {
    const page = doc.addPage([612, 792]);
    let y = 740;
    for (const line of text.split("\n")) {
      if (line) page.drawText(line, { x: 50, y, size: 12, font });
      y -= 18;
    }
    const scan = meta.scanned?.[i + 1];
    if (scan) {
      const png = await doc.embedPng(scan);
      page.drawImage(png, { x: 20, y: 300, width: 572, height: (572 * png.height) / png.width });
    }
  }
  return doc.save();
}

/**
 * A PDF image bomb: `pages` scanned pages (no text layer) that all draw one grey image XObject
 * declared `width`×`height`, deflated (8000×8000 of white is a 63 KB file that decodes to 64 MB
 * of grey, 256 MB as pdf.js's RGBA). `textPages` typed pages come first; `viaForm` draws the image
 * from inside a form XObject instead of from the page's own resources.
 */
export async function imagePdf(opts: { width: number; height: number; pages?: number; textPages?: number; viaForm?: boolean }): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < (opts.textPages ?? 0); i++) doc.addPage([612, 792]).drawText(`Typed page ${i + 1}`, { x: 50, y: 740, size: 12, font });
  const pixels = deflateSync(Buffer.alloc(opts.width * opts.height, 0xff), { level: 9 });
  const image = doc.context.register(
    doc.context.stream(pixels, { Type: "XObject", Subtype: "Image", Width: opts.width, Height: opts.height, ColorSpace: "DeviceGray", BitsPerComponent: 8, Filter: "FlateDecode" }),
  );
  const drawn = opts.viaForm
    ? doc.context.register(doc.context.formXObject([drawObject("Im")], { BBox: [0, 0, 1, 1], Resources: { XObject: { Im: image } } }))
    : image;
  for (let i = 0; i < (opts.pages ?? 1); i++) {
    const page = doc.addPage([612, 792]);
    const name = page.node.newXObject(opts.viaForm ? "Fm" : "Im", drawn);
    page.pushOperators(pushGraphicsState(), concatTransformationMatrix(612, 0, 0, 792, 0, 0), drawObject(name), popGraphicsState());
  }
  return doc.save();
}

/** A PDF the standard handler says is encrypted (its password check fails): pdf.js asks for a password. */
export function encryptedPdf(): Buffer {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    `<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <${"ab".repeat(32)}> /U <${"cd".repeat(32)}> >>`,
  ];
  let body = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [<${"01".repeat(16)}> <${"01".repeat(16)}>] >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, "latin1");
}

/** A minimal .docx: paragraphs with a style ("Heading1", "Heading2" or none). */
export async function docx(file: string, paragraphs: Array<{ text: string; style?: "Heading1" | "Heading2" }>): Promise<void> {
  const zip = new ZipFile();
  const add = (name: string, xml: string) => zip.addBuffer(Buffer.from(xml, "utf8"), name);
  add(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`,
  );
  add("_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`);
  add("word/_rels/document.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`);
  const W = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`;
  add(
    "word/styles.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles ${W}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style><w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>`,
  );
  const body = paragraphs
    .map((p) => `<w:p>${p.style ? `<w:pPr><w:pStyle w:val="${p.style}"/></w:pPr>` : ""}<w:r><w:t xml:space="preserve">${escapeXml(p.text)}</w:t></w:r></w:p>`)
    .join("");
  add("word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${W}><w:body>${body}</w:body></w:document>`);
  zip.end();
  const out = createWriteStream(file);
  zip.outputStream.pipe(out);
  await once(out, "close");
}

/** A WAV (16-bit PCM mono, 16 kHz) of a sine tone; `codec` other than 1 writes that format tag instead. */
export async function toneWav(file: string, seconds: number, codec = 1): Promise<void> {
  const rate = 16000;
  const samples = Math.round(rate * seconds);
  const buf = Buffer.alloc(44 + samples * 2);
  buf.write("RIFF", 0, "latin1");
  buf.writeUInt32LE(36 + samples * 2, 4);
  buf.write("WAVE", 8, "latin1");
  buf.write("fmt ", 12, "latin1");
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(codec, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(rate, 24);
  buf.writeUInt32LE(rate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write("data", 36, "latin1");
  buf.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) buf.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 8000), 44 + i * 2);
  await writeFile(file, buf);
}
