/** Line-oriented and plain-file importers: OpenAI-style chat JSONL, Markdown / plain-text transcripts, a folder of notes. */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import type { SourceItem } from "../core/source-item";
import { binaryKind, detectMedia, MEDIA_EXTENSIONS, mismatchError } from "./media";
import { mediaEventsOrSkip } from "./media-file";
import { lazyOcrEngine } from "./ocr";
import { capMessage, capTitle, DEFAULT_MAX_MESSAGE_CHARS, ImportError, isObject, jsonPreview, str, toIso, type ImportEvent, type ImporterOptions, type OcrEngine } from "./types";

type Obj = Record<string, unknown>;

/** Splits a byte stream into lines (LF or CRLF) without decoding the whole file. */
export async function* byteLines(stream: AsyncIterable<Buffer>, maxLineBytes: number): AsyncGenerator<{ line: Buffer | null; tooLong: number }> {
  let parts: Buffer[] = [];
  let size = 0;
  let overflow = false;
  for await (const chunk of stream) {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a, from); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      const piece = chunk.subarray(from, nl);
      from = nl + 1;
      if (overflow || size + piece.length > maxLineBytes) {
        yield { line: null, tooLong: size + piece.length };
      } else {
        const line = parts.length ? Buffer.concat([...parts, piece]) : piece;
        yield { line: line.at(-1) === 0x0d ? line.subarray(0, -1) : line, tooLong: 0 };
      }
      parts = [];
      size = 0;
      overflow = false;
    }
    const rest = chunk.subarray(from);
    size += rest.length;
    if (size > maxLineBytes) {
      overflow = true;
      parts = [];
    } else if (rest.length) parts.push(Buffer.from(rest));
  }
  if (overflow) yield { line: null, tooLong: size };
  else if (size) {
    const line = Buffer.concat(parts);
    yield { line: line.at(-1) === 0x0d ? line.subarray(0, -1) : line, tooLong: 0 };
  }
}

const ROLE_ALIASES: Record<string, string> = { human: "user", gpt: "assistant", model: "assistant", bot: "assistant", developer: "system", function_call: "assistant", observation: "tool", function: "tool" };

/** OpenAI / Anthropic message content: a string or a list of parts/blocks. */
function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => {
      if (typeof p === "string") return p;
      if (!isObject(p)) return "";
      const type = str(p.type);
      if (type === "text" || type === "input_text" || type === "output_text") return str(p.text) ?? "";
      if (type === "image_url" || type === "image" || type === "input_image") return "[image]";
      if (type === "input_audio") return "[audio]";
      if (type === "tool_use") return `[tool call: ${str(p.name) ?? "tool"} ${jsonPreview(p.input, 500)}]`;
      if (type === "tool_result") return `[tool result]\n${partsText(p.content)}`;
      if (type === "thinking" || type === "redacted_thinking") return "";
      return str(p.text) ?? `[${type ?? "part"}]`;
    })
    .filter(Boolean)
    .join("\n");
}

/** One JSONL object (`{messages}`, ShareGPT `{conversations}`, Anthropic `{system, messages}`) → role-labelled turns. */
export function chatTurns(obj: Obj): Array<{ role: string; text: string }> | null {
  const list = Array.isArray(obj.messages) ? obj.messages : Array.isArray(obj.conversations) ? obj.conversations : null;
  if (!list) return null;
  const turns: Array<{ role: string; text: string }> = [];
  const system = typeof obj.system === "string" ? obj.system : Array.isArray(obj.system) ? partsText(obj.system) : "";
  if (system.trim()) turns.push({ role: "system", text: system });
  for (const m of list) {
    if (!isObject(m)) continue;
    const rawRole = (str(m.role) ?? str(m.from) ?? "unknown").toLowerCase();
    const role = ROLE_ALIASES[rawRole] ?? rawRole;
    let text = partsText(m.content ?? m.value);
    if (Array.isArray(m.tool_calls)) {
      const calls = m.tool_calls
        .filter(isObject)
        .map((c) => {
          const fn = isObject(c.function) ? c.function : {};
          return `[tool call: ${str(fn.name) ?? "function"}(${(str(fn.arguments) ?? "").slice(0, 500)})]`;
        })
        .join("\n");
      text = text ? `${text}\n${calls}` : calls;
    }
    if (text.trim()) turns.push({ role: m.name && role !== "tool" ? `${role} (${String(m.name)})` : role, text });
  }
  return turns;
}

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** Longest scope a line may name (the API's limit). */
const MAX_SCOPE_CHARS = 256;

/**
 * A JSONL line's own scope (`"scope"` or `metadata.scope`, e.g. "acme:user-42"): one file can hold
 * many users' conversations, as a Mem0 export does. Absent or blank: the source's scope applies.
 */
function lineScope(value: unknown): { value?: string; error?: string } {
  if (value === undefined || value === null) return {};
  if (typeof value !== "string") return { error: `its "scope" is ${Array.isArray(value) ? "an array" : typeof value}, not a string` };
  const scope = value.trim();
  if (scope.length > MAX_SCOPE_CHARS) return { error: `its "scope" is ${scope.length} characters, over the ${MAX_SCOPE_CHARS} limit` };
  return scope ? { value: scope } : {};
}

/** OpenAI-style chat JSONL, one conversation per line; a line may carry its own `scope`. */
export async function* importJsonl(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const st = await stat(file).catch(() => null);
  if (!st?.isFile()) throw new ImportError(`${file} does not exist or is not a file.`, file);
  const display = opts.displayPath ?? file;
  const base = path.basename(file);
  const stream = createReadStream(file, { highWaterMark: 1 << 16 });
  const fatal = new TextDecoder("utf-8", { fatal: true });
  const max = opts.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
  let lineNo = 0;
  let parsedAny = false;
  let badLines = 0;
  try {
    for await (const { line, tooLong } of byteLines(stream as AsyncIterable<Buffer>, opts.maxConversationBytes ?? 256 * 1024 * 1024)) {
      lineNo++;
      const where = `${base}:${lineNo}`;
      if (!line) {
        yield { warning: { conversation: where, reason: `line is ${(tooLong / 1_048_576).toFixed(1)} MiB, over the limit; skipped` } };
        continue;
      }
      let text: string;
      try {
        text = fatal.decode(line);
      } catch {
        badLines++;
        yield { warning: { conversation: where, reason: "contains invalid UTF-8; skipped" } };
        continue;
      }
      if (!text.trim()) continue;
      let obj: unknown;
      try {
        obj = JSON.parse(text);
      } catch (err) {
        badLines++;
        if (lineNo === 1 && !parsedAny && !text.trimStart().startsWith("{")) {
          throw new ImportError(`${file} is not JSONL: line 1 is not a JSON object (${(err as Error).message}). Is this the right file or format?`, file);
        }
        yield { warning: { conversation: where, reason: `is not valid JSON (${(err as Error).message}); skipped` } };
        continue;
      }
      parsedAny = true;
      const turns = isObject(obj) ? chatTurns(obj) : null;
      if (!turns) {
        yield { warning: { conversation: where, reason: "has no messages list ({\"messages\": [...]} expected); skipped" } };
        continue;
      }
      if (!turns.length) {
        yield { warning: { conversation: where, reason: "has no messages with text; skipped" } };
        continue;
      }
      const o = obj as Obj;
      const meta = isObject(o.metadata) ? o.metadata : {};
      const scope = lineScope(o.scope ?? meta.scope);
      if (scope.error) {
        // A line meant for one user's scope must not land in the source's default scope instead.
        yield { warning: { conversation: where, reason: `${scope.error}; skipped` } };
        continue;
      }
      const ownId = str(o.id) ?? str(o.conversation_id) ?? str(meta.id) ?? str(meta.conversation_id);
      const rendered = turns.map((t) => {
        const c = capMessage(t.text, max);
        return { ...t, text: c.text, truncated: c.truncated };
      });
      for (const t of rendered) if (t.truncated) yield { warning: { conversation: where, reason: t.truncated } };
      const title = capTitle(str(o.title) ?? str(meta.title));
      const content = [...(title ? [`# ${title}`] : []), ...rendered.map((t) => `${t.role}: ${t.text.trim()}`)].join("\n\n");
      const externalId = ownId ?? `${base}#${sha(text).slice(0, 16)}`;
      const createdAt = toIso(o.created_at ?? meta.created_at ?? o.timestamp ?? meta.timestamp);
      const item: SourceItem = {
        externalId,
        content,
        ...(scope.value ? { scope: scope.value } : {}),
        metadata: {
          ...(createdAt ? { time: { created_at: createdAt } } : {}),
          chat: { conversation_id: externalId, title, author: [...new Set(turns.map((t) => t.role))].join(", "), roles: [...new Set(turns.map((t) => t.role))], message_count: turns.length },
          source: { type: "jsonl", path: display },
          custom: { line: lineNo },
        },
      };
      yield { item };
    }
  } finally {
    stream.destroy();
  }
  if (!parsedAny && badLines > 0) throw new ImportError(`${file}: none of its ${lineNo} lines is a JSON object; not a JSONL file.`, file);
}

// Markdown / plain-text transcripts ---------------------------------------------------------------

const SPEAKERS: Array<[RegExp, string]> = [
  [/^(?:user|you|human|me|q)$/i, "user"],
  [/^(?:assistant|ai|chatgpt|claude|gpt(?:-[\w.]+)?|bot|model|a)$/i, "assistant"],
  [/^system$/i, "system"],
];

function speakerOf(label: string): string | null {
  const l = label.trim().replace(/\s+said$/i, "");
  for (const [re, role] of SPEAKERS) if (re.test(l)) return role;
  return null;
}

/** Line that starts a turn: `## User`, `**You:**`, `User:`, `You said:`. Returns the role and the rest of the line. */
function turnStart(line: string): { role: string; rest: string } | null {
  let m = /^#{1,6}\s+\**([A-Za-z][\w .-]{0,30}?)\**\s*:?\s*$/.exec(line);
  if (m) {
    const role = speakerOf(m[1]!);
    return role ? { role, rest: "" } : null;
  }
  m = /^\*\*([A-Za-z][\w .-]{0,30}?):?\*\*:?\s*(.*)$/.exec(line);
  if (m) {
    const role = speakerOf(m[1]!);
    return role ? { role, rest: m[2]! } : null;
  }
  m = /^([A-Za-z][\w .-]{0,30}?):\s*(.*)$/.exec(line);
  if (m) {
    const role = speakerOf(m[1]!);
    return role ? { role, rest: m[2]! } : null;
  }
  return null;
}

function frontMatter(text: string): { fields: Record<string, string>; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) return { fields: {}, body: text };
  const fields: Record<string, string> = {};
  for (const line of m[1]!.split(/\r?\n/)) {
    const kv = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    if (kv) fields[kv[1]!.toLowerCase()] = kv[2]!.trim().replace(/^["']|["']$/g, "");
  }
  return { fields, body: text.slice(m[0].length) };
}

/** Splits a transcript into turns at speaker labels, never inside fenced code; null when there are no labels. */
export function parseTranscript(body: string): Array<{ role: string; text: string }> | null {
  const turns: Array<{ role: string; lines: string[] }> = [];
  const preamble: string[] = [];
  let inFence = false;
  for (const line of body.split(/\r?\n/)) {
    const start = !inFence ? turnStart(line) : null;
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (start) turns.push({ role: start.role, lines: start.rest ? [start.rest] : [] });
    else if (turns.length) turns.at(-1)!.lines.push(line);
    else if (!/^#\s/.test(line)) preamble.push(line);
  }
  const roles = new Set(turns.map((t) => t.role));
  if (turns.length < 2 || !roles.has("user")) return null;
  const out = turns.map((t) => ({ role: t.role, text: t.lines.join("\n").trim() })).filter((t) => t.text);
  // Text before the first speaker label (an intro, a note) is kept, not dropped.
  const intro = preamble.join("\n").trim();
  return intro ? [{ role: "note", text: intro }, ...out] : out;
}

export function markdownToItem(
  raw: string,
  ctx: { externalId: string; path: string; fileName: string; format: "markdown" | "text"; mtime?: Date; maxMessageChars?: number },
): { item: SourceItem | null; warning?: string } {
  const { fields, body } = frontMatter(raw.replace(/^\uFEFF/, ""));
  const heading = /^#\s+(.+)$/m.exec(body)?.[1]?.trim();
  const title = capTitle(fields.title ?? heading ?? path.basename(ctx.fileName).replace(/\.[^.]+$/, ""));
  const turns = parseTranscript(body);
  const max = ctx.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
  let content: string;
  let warning: string | undefined;
  if (turns) {
    const lines = turns.map((t) => {
      const c = capMessage(t.text, max);
      if (c.truncated) warning = c.truncated;
      return `${t.role}: ${c.text}`;
    });
    content = [`# ${title}`, ...lines].join("\n\n");
  } else {
    const c = capMessage(body.trim(), max * 4);
    if (c.truncated) warning = c.truncated;
    content = c.text;
  }
  if (!content.trim()) return { item: null, warning: "is empty; skipped" };
  const createdAt =
    toIso(fields.date ?? fields.created ?? fields.created_at) ??
    (() => {
      const d = /^#{1,6}.*?\b(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?)/m.exec(body)?.[1];
      return d ? toIso(d.replace(" ", "T")) : null;
    })() ??
    (() => {
      const d = /(?:^|[^\d])(\d{4}-\d{2}-\d{2})(?:[^\d]|$)/.exec(path.basename(ctx.fileName))?.[1];
      return d ? toIso(`${d}T00:00:00Z`) : null;
    })() ??
    (ctx.mtime ? ctx.mtime.toISOString() : null);
  const roles = turns ? [...new Set(turns.map((t) => t.role).filter((r) => r !== "note"))] : [];
  return {
    item: {
      externalId: ctx.externalId,
      content,
      metadata: {
        ...(createdAt ? { time: { created_at: createdAt } } : {}),
        chat: turns ? { conversation_id: ctx.externalId, title, author: roles.join(", "), roles, message_count: turns.length } : { title },
        source: { type: ctx.format, path: ctx.path },
        custom: { kind: turns ? "transcript" : "document", file: ctx.fileName },
      },
    },
    warning,
  };
}

const MAX_TEXT_FILE_BYTES = 64 * 1024 * 1024;

async function readTextFile(file: string): Promise<{ text: string | null; reason?: string; mtime: Date }> {
  const st = await stat(file);
  if (st.size > MAX_TEXT_FILE_BYTES) return { text: null, reason: `is ${(st.size / 1_048_576).toFixed(1)} MiB, over the 64 MiB limit for a text file; skipped`, mtime: st.mtime };
  const buf = await readFile(file);
  // A PNG (PDF, zip, audio…) named .md is refused by name, not read as text nor as what it is.
  const binary = binaryKind(buf.subarray(0, 4096));
  if (binary) return { text: null, reason: `${mismatchError(file, path.extname(file).toLowerCase(), binary, buf).message.slice(path.basename(file).length + 1).replace(/\.$/, "")}; skipped`, mtime: st.mtime };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(buf), mtime: st.mtime };
  } catch {
    return { text: null, reason: "is not valid UTF-8; skipped", mtime: st.mtime };
  }
}

export async function* importMarkdown(file: string, opts: ImporterOptions & { format?: "markdown" | "text" } = {}): AsyncGenerator<ImportEvent> {
  const st = await stat(file).catch(() => null);
  if (!st?.isFile()) throw new ImportError(`${file} does not exist or is not a file.`, file);
  const { text, reason, mtime } = await readTextFile(file);
  if (text === null) throw new ImportError(`${file} ${reason?.replace(/; skipped$/, "")}.`, file);
  if (text.includes("\u0000")) throw new ImportError(`${file} looks binary (it contains NUL bytes): not a text transcript.`, file);
  const fileName = path.basename(file);
  const format = opts.format ?? (/\.(md|markdown)$/i.test(file) ? "markdown" : "text");
  const res = markdownToItem(text, { externalId: fileName, path: opts.displayPath ?? file, fileName, format, mtime, maxMessageChars: opts.maxMessageChars });
  if (res.warning) yield { warning: { conversation: fileName, reason: res.warning } };
  if (res.item) yield { item: res.item };
}

const NOTE_EXT = /\.(md|markdown|txt)$/i;
const isImportable = (name: string) => NOTE_EXT.test(name) || path.extname(name).toLowerCase() in MEDIA_EXTENSIONS;

async function* walk(dir: string, rel = ""): AsyncGenerator<string> {
  const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) yield* walk(dir, r);
    else if (e.isFile() && isImportable(e.name)) yield r;
  }
}

/**
 * A folder of notes, documents, images and audio, one file at a time. A document, image or audio
 * file that cannot be imported (a corrupt PDF, an extension that lies, a file over a limit) is
 * skipped whole with a warning naming it, and the rest go on. Images share one OCR worker.
 */
export async function* importFolder(dir: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) throw new ImportError(`${dir} is not a folder.`, dir);
  const ocr: OcrEngine = opts.ocr ?? lazyOcrEngine();
  let files = 0;
  try {
    for await (const rel of walk(dir)) {
      files++;
      const full = path.join(dir, rel);
      const shownPath = path.join(/*turbopackIgnore: true*/ opts.displayPath ?? dir, rel);
      if (!NOTE_EXT.test(rel)) {
        const format = await detectMedia(full).catch((err: unknown) => (err instanceof ImportError ? err : Promise.reject(err)));
        if (format instanceof ImportError || !format) {
          yield { warning: { conversation: rel, reason: `${format ? format.message.replace(/\.$/, "") : "not a document, image or audio file"}; skipped`, skipped: true } };
          continue;
        }
        yield* await mediaEventsOrSkip(full, format, rel, { ...opts, ocr, fileKey: rel, displayPath: shownPath });
        continue;
      }
      const { text, reason, mtime } = await readTextFile(full);
      if (text === null) {
        yield { warning: { conversation: rel, reason: reason ?? "unreadable; skipped" } };
        continue;
      }
      const res = markdownToItem(text, {
        externalId: rel,
        path: shownPath,
        fileName: rel,
        format: /\.txt$/i.test(rel) ? "text" : "markdown",
        mtime,
        maxMessageChars: opts.maxMessageChars,
      });
      if (res.warning) yield { warning: { conversation: rel, reason: res.warning } };
      if (res.item) yield { item: res.item };
    }
  } finally {
    if (!opts.ocr) await ocr.close();
  }
  if (files === 0) throw new ImportError(`${dir} has no .md or .txt files, documents, images or audio.`, dir);
}
