/**
 * Importers: turn an export file into source items, streaming. `detectFormat` picks the importer;
 * `readImport` runs it. The service (`server/services/imports.ts`) writes the items to a pipeline.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { importChatgpt } from "./chatgpt";
import { importClaude } from "./claude";
import { isZipPath, peek, pickConversationsEntry, zipEntryNames } from "./input";
import { assertContentFits, detectMedia, type MediaFormat } from "./media";
import { importMedia } from "./media-file";
import { importFolder, importJsonl, importMarkdown } from "./text";
import { IMPORT_FORMATS, ImportError, type ImportEvent, type ImporterOptions, type ImportFormat } from "./types";

export { IMPORT_FORMATS, ImportError, type ImportEvent, type ImporterOptions, type ImportFormat, type ImportWarning, type MediaOriginal } from "./types";
export { importChatgpt, chatgptConversationToItem } from "./chatgpt";
export { importClaude, claudeConversationToItem } from "./claude";
export { importJsonl, importMarkdown, importFolder } from "./text";
export { mediaLimits, type MediaLimits, type Modality } from "./media";

export function isImportFormat(v: string): v is ImportFormat {
  return (IMPORT_FORMATS as readonly string[]).includes(v);
}

/** How to override detection, wherever the file came from. */
const CHOOSE_FORMAT = "choose its format (the Format menu of the upload box, or --format on the CLI)";

/** Which conversation export a JSON head looks like. */
function shapeOf(head: string): "chatgpt-export" | "claude-export" | "jsonl" | null {
  const text = head.replace(/^\uFEFF/, "").trimStart();
  if (!text.startsWith("[") && !text.startsWith("{")) return null;
  const chatgpt = /"(mapping|current_node)"\s*:/.exec(text)?.index ?? Infinity;
  const claude = /"(chat_messages)"\s*:/.exec(text)?.index ?? Infinity;
  if (chatgpt < claude) return "chatgpt-export";
  if (claude < chatgpt) return "claude-export";
  if (text.startsWith("{") && /^\{[^\n]*"(messages|conversations)"\s*:\s*\[/.test(text) && /\n\s*\{/.test(text)) return "jsonl";
  return null;
}

/**
 * Guesses the format of a file or folder: a folder → `folder`; a zip → by its `conversations.json`;
 * JSON → by its shape (ChatGPT `mapping` vs Claude `chat_messages`); else by extension.
 * Throws an ImportError naming the file when it cannot tell.
 */
export async function detectFormat(file: string): Promise<ImportFormat> {
  const st = await stat(file).catch(() => null);
  if (!st) throw new ImportError(`${file} does not exist.`, file);
  if (st.isDirectory()) return "folder";
  // Documents, images and audio by extension checked against content (a lying extension is refused).
  const media = await detectMedia(file);
  if (media) return media;
  const ext = path.extname(file).toLowerCase();
  if (isZipPath(file)) {
    const names = await zipEntryNames(file);
    const entry = pickConversationsEntry(names);
    if (!entry) throw new ImportError(`${file} has no conversations.json: is it a ChatGPT or Claude data export?`, file);
    for (const size of [65536, 1 << 20]) {
      const shape = shapeOf((await peek(file, size, entry)).toString("utf8"));
      if (shape === "chatgpt-export" || shape === "claude-export") return shape;
    }
    if (names.some((n) => /(^|\/)(users|projects|memories)\.json$/.test(n))) return "claude-export";
    if (names.some((n) => /(^|\/)(user|message_feedback|chat)\.(json|html)$/.test(n))) return "chatgpt-export";
    throw new ImportError(`${file}: cannot tell whether its conversations.json is a ChatGPT or a Claude export; ${CHOOSE_FORMAT}.`, file);
  }
  if (ext === ".jsonl" || ext === ".ndjson") return "jsonl";
  if (ext === ".md" || ext === ".markdown") return "markdown";
  if (ext === ".txt") return "text";
  const head = (await peek(file, 65536)).toString("utf8");
  let shape = shapeOf(head);
  if (!shape && ext === ".json" && st.size > 65536) shape = shapeOf((await peek(file, 1 << 20)).toString("utf8"));
  if (shape) return shape;
  const trimmed = head.replace(/^\uFEFF/, "").trimStart();
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    throw new ImportError(`${file} is JSON but neither a ChatGPT export (mapping) nor a Claude export (chat_messages) nor chat JSONL; ${CHOOSE_FORMAT}.`, file);
  }
  // A .json name promises JSON: never fall through to Markdown for it.
  if (ext === ".json") {
    if (!trimmed) throw new ImportError(`${file} is empty: expected a ChatGPT or Claude export (a JSON array of conversations).`, file);
    throw new ImportError(`${file} is named .json but is not JSON (it starts with ${JSON.stringify(trimmed.slice(0, 20))}); ${CHOOSE_FORMAT}.`, file);
  }
  if (head.includes("\u0000")) throw new ImportError(`${file} looks binary: not a conversation export, JSONL or text transcript.`, file);
  return ext === "" || ext === ".text" ? "text" : "markdown";
}

/**
 * Runs the importer for `format` over `file`; warnings whose reason ends in "skipped" are flagged
 * `skipped: true`. A file whose content is not what the format reads (a PNG as markdown, a zip as
 * a PDF) is refused first, whether the format was detected or chosen.
 */
export async function* readImport(file: string, format: ImportFormat, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  await assertContentFits(file, format, path.basename(opts.displayPath ?? file));
  for await (const ev of importerFor(file, format, opts)) {
    if ("warning" in ev && /;\s*skipped\b/.test(ev.warning.reason)) yield { warning: { ...ev.warning, skipped: true } };
    else yield ev;
  }
}

function importerFor(file: string, format: ImportFormat, opts: ImporterOptions): AsyncGenerator<ImportEvent> {
  switch (format) {
    case "chatgpt-export":
      return importChatgpt(file, opts);
    case "claude-export":
      return importClaude(file, opts);
    case "jsonl":
      return importJsonl(file, opts);
    case "markdown":
    case "text":
      return importMarkdown(file, { ...opts, format });
    case "folder":
      return importFolder(file, opts);
    default:
      return importMedia(file, format satisfies MediaFormat, opts);
  }
}
