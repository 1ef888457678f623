/**
 * HTML → text with its headings kept as structure (`## Heading` lines, and an outline in
 * `metadata.document.headings` with each heading's line), one item per file. Scripts, styles and
 * other non-content elements are dropped. DOCX goes through here too (mammoth renders it as HTML).
 */
import { readFile } from "node:fs/promises";
import { Parser } from "htmlparser2";
import type { SourceItem } from "../core/source-item";
import { checkFile, displayName, fileSha256, mediaLimits, mediaMetadata, type MediaFormat } from "./media";
import { capMessage, capTitle, DEFAULT_MAX_MESSAGE_CHARS, ImportError, type ImportEvent, type ImporterOptions } from "./types";

export interface Heading {
  level: number;
  text: string;
  /** 1-based line of the heading in the record's content. */
  line: number;
}

const SKIP = new Set(["script", "style", "noscript", "template", "svg", "head", "iframe", "object", "canvas"]);
const BLOCK = new Set(["p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "ul", "ol", "table", "tr", "blockquote", "pre", "figure", "figcaption", "dl", "dt", "dd", "form", "fieldset", "hr", "address"]);

/** Text of an HTML document, headings as Markdown-style lines, and its title (`<title>` or the first heading). */
export function htmlToText(html: string): { title: string | null; text: string; headings: Heading[] } {
  const blocks: Array<{ text: string; heading?: number }> = [];
  let current = "";
  let heading: number | undefined;
  let skipDepth = 0;
  let inTitle = false;
  let inPre = 0;
  let title = "";
  const flush = () => {
    const text = inPre ? current.replace(/^\n+|\s+$/g, "") : current.replace(/\s+/g, " ").trim();
    if (text) blocks.push({ text, heading });
    current = "";
    heading = undefined;
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIP.has(name) && name !== "head") skipDepth++;
        if (name === "title") inTitle = true;
        if (skipDepth) return;
        const h = /^h([1-6])$/.exec(name);
        if (h) {
          flush();
          heading = Number(h[1]);
        } else if (BLOCK.has(name)) flush();
        else if (name === "li") {
          flush();
          current = "- ";
        } else if (name === "br") current += inPre ? "\n" : " \n";
        else if (name === "td" || name === "th") current += current ? " | " : "";
        if (name === "pre") inPre++;
      },
      ontext(data) {
        if (inTitle) title += data;
        else if (!skipDepth) current += data;
      },
      onclosetag(name) {
        if (name === "title") inTitle = false;
        if (SKIP.has(name) && name !== "head") {
          skipDepth = Math.max(0, skipDepth - 1);
          return;
        }
        if (skipDepth) return;
        if (/^h[1-6]$/.test(name) || BLOCK.has(name) || name === "li") flush();
        if (name === "pre") inPre = Math.max(0, inPre - 1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  flush();
  const lines: string[] = [];
  const headings: Heading[] = [];
  for (const b of blocks) {
    if (lines.length) lines.push("");
    if (b.heading) {
      headings.push({ level: b.heading, text: b.text, line: lines.length + 1 });
      lines.push(`${"#".repeat(b.heading)} ${b.text}`);
    } else lines.push(...b.text.split("\n"));
  }
  const cleanTitle = title.replace(/\s+/g, " ").trim();
  return { title: cleanTitle || headings[0]?.text || null, text: lines.join("\n"), headings };
}

/** The one item of a document converted to text (HTML, DOCX). */
export function documentItem(input: {
  format: MediaFormat;
  file: string;
  opts: ImporterOptions;
  doc: { title: string | null; text: string; headings: Heading[] };
  sha256: string;
  bytes: number;
  mime: string;
  author?: string | null;
}): { item: SourceItem; warning?: string } {
  const name = displayName(input.file, input.opts);
  const capped = capMessage(input.doc.text, (input.opts.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS) * 4);
  const title = capTitle(input.doc.title ?? name.replace(/\.[^.]+$/, ""));
  const lineCount = capped.text.split("\n").length;
  return {
    item: {
      externalId: input.opts.fileKey ?? name,
      content: capped.text,
      metadata: mediaMetadata({
        format: input.format,
        file: { name, sha256: input.sha256, bytes: input.bytes, type: input.mime },
        position: { line_start: 1, line_end: lineCount },
        path: input.opts.displayPath ?? input.file,
        title,
        extra: { document: { title, author: input.author ?? null, headings: input.doc.headings.slice(0, 500) } },
      }),
    },
    ...(capped.truncated ? { warning: capped.truncated } : {}),
  };
}

export async function* importHtml(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const bytes = await checkFile(file, mediaLimits(opts.limits));
  const name = displayName(file, opts);
  const buf = await readFile(file);
  let html: string;
  try {
    html = new TextDecoder("utf-8", { fatal: true }).decode(buf);
  } catch {
    html = new TextDecoder("latin1").decode(buf);
  }
  const doc = htmlToText(html);
  if (!doc.text.trim()) throw new ImportError(`${name} has no text to import (an empty page, or only scripts and styles).`, file);
  const res = documentItem({ format: "html", file, opts, doc, sha256: await fileSha256(file), bytes, mime: "text/html" });
  if (res.warning) yield { warning: { conversation: name, reason: res.warning } };
  yield { item: res.item };
}
