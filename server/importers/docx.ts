/** DOCX → text with headings kept (mammoth maps Word's Heading styles to h1–h6; `htmlToText` keeps them), one item per file. */
import mammoth from "mammoth";
import { checkFile, displayName, fileSha256, mediaLimits } from "./media";
import { documentItem, htmlToText } from "./html";
import { ImportError, type ImportEvent, type ImporterOptions } from "./types";

const DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

export async function* importDocx(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const bytes = await checkFile(file, mediaLimits(opts.limits));
  const name = displayName(file, opts);
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ path: file })).value;
  } catch (err) {
    throw new ImportError(`${name} is not a readable Word document (${(err as Error).message}): the file is damaged, or not a .docx.`, file);
  }
  const doc = htmlToText(html);
  if (!doc.text.trim()) throw new ImportError(`${name} has no text to import.`, file);
  const res = documentItem({ format: "docx", file, opts, doc, sha256: await fileSha256(file), bytes, mime: DOCX_MIME });
  if (res.warning) yield { warning: { conversation: name, reason: res.warning } };
  yield { item: res.item };
}
