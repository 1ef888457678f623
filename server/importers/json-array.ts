/**
 * Streams the elements of a top-level JSON array (or of the `conversations` array of a
 * `{"conversations": [...]}` wrapper) one by one, without ever holding the whole file: a byte-level
 * scanner finds each element's boundaries and only that element is decoded and `JSON.parse`d.
 * Memory is bounded by the largest single element (itself capped by `maxElementBytes`).
 */
import { ImportError } from "./types";

export type JsonArrayEvent =
  | { index: number; offset: number; value: unknown; invalidUtf8: boolean }
  | { index: number; offset: number; error: string; idHint?: string };

export interface JsonArrayOptions {
  /** File name used in errors. */
  file: string;
  /** An element over this many bytes is skipped (an error event), not buffered. */
  maxElementBytes: number;
  /** Key of the array inside a top-level object wrapper. Default "conversations". */
  wrapperKey?: string;
  /** What one element is called in messages. Default "conversation". */
  noun?: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEAD_BYTES = 4096;

/** Best-effort id of a (possibly broken) element from its first bytes, for error messages. */
export function idHintFrom(head: string): string | undefined {
  const m = /"(?:conversation_id|uuid|id)"\s*:\s*"([^"\\]{1,200})"/.exec(head);
  return m?.[1];
}

interface Element {
  offset: number;
  kind: "container" | "string" | "primitive";
  pieces: Buffer[];
  size: number;
  /** Start of the element inside the current chunk (0 after the first chunk). */
  chunkStart: number;
  skipping: boolean;
  head: Buffer | null;
}

export async function* streamJsonArray(chunks: AsyncIterable<Buffer | Uint8Array | string>, opts: JsonArrayOptions): AsyncGenerator<JsonArrayEvent> {
  const wrapperKey = opts.wrapperKey ?? "conversations";
  const noun = opts.noun ?? "conversation";
  const fatal = new TextDecoder("utf-8", { fatal: true });
  const lossy = new TextDecoder("utf-8");
  let phase: "start" | "wrapper" | "array" | "after" = "start";
  let depth = 0;
  let elemDepth = 1;
  let inStr = false;
  let esc = false;
  let keyBytes: number[] | null = null;
  let lastKey = "";
  let elem: Element | null = null;
  let index = 0;
  let pos = 0; // global offset of the current chunk's byte 0
  let sawBom = false;

  const finish = (end: Buffer, endAt: number): JsonArrayEvent => {
    const e = elem!;
    elem = null;
    const i = index++;
    if (e.skipping) {
      const head = e.head ? lossy.decode(e.head) : "";
      return {
        index: i,
        offset: e.offset,
        error: `${noun} #${i + 1} is ${(e.size / 1_048_576).toFixed(1)} MiB, over the ${(opts.maxElementBytes / 1_048_576).toFixed(0)} MiB limit`,
        idHint: idHintFrom(head),
      };
    }
    e.pieces.push(end.subarray(e.chunkStart, endAt));
    const bytes = e.pieces.length === 1 ? e.pieces[0]! : Buffer.concat(e.pieces);
    let text: string;
    let invalidUtf8 = false;
    try {
      text = fatal.decode(bytes);
    } catch {
      text = lossy.decode(bytes);
      invalidUtf8 = true;
    }
    try {
      return { index: i, offset: e.offset, value: JSON.parse(text), invalidUtf8 };
    } catch (err) {
      return { index: i, offset: e.offset, error: `${noun} #${i + 1} is not valid JSON (${(err as Error).message})`, idHint: idHintFrom(text.slice(0, HEAD_BYTES)) };
    }
  };

  const start = (chunk: Buffer, at: number, kind: Element["kind"]) => {
    elem = { offset: pos + at, kind, pieces: [], size: 0, chunkStart: at, skipping: false, head: null };
    void chunk;
  };

  for await (const raw of chunks) {
    const c = typeof raw === "string" ? Buffer.from(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    let nextQuote = -2;
    let nextBs = -2;
    const n = c.length;
    for (let i = 0; i < n; i++) {
      if (inStr) {
        if (esc) {
          esc = false;
          continue;
        }
        if (keyBytes) {
          const b = c[i]!;
          if (b === BACKSLASH) esc = true;
          else if (b === QUOTE) {
            inStr = false;
            lastKey = Buffer.from(keyBytes).toString("utf8");
            keyBytes = null;
          } else if (keyBytes.length < 256) keyBytes.push(b);
          continue;
        }
        // Jump to the next quote or backslash (cached per chunk): strings are most of the bytes.
        if (nextQuote < i && nextQuote !== -1) nextQuote = c.indexOf(QUOTE, i);
        if (nextBs < i && nextBs !== -1) nextBs = c.indexOf(BACKSLASH, i);
        const q = nextQuote === -1 ? n : nextQuote;
        const s = nextBs === -1 ? n : nextBs;
        const j = Math.min(q, s);
        if (j >= n) {
          i = n;
          break;
        }
        i = j;
        if (j === s) {
          esc = true;
          continue;
        }
        inStr = false;
        if (elem && (elem as Element).kind === "string" && depth === elemDepth) yield finish(c, i + 1);
        continue;
      }
      const b = c[i]!;
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
        if (elem && (elem as Element).kind === "primitive") yield finish(c, i);
        continue;
      }
      switch (phase) {
        case "start":
          if (pos + i < 3 && b === [0xef, 0xbb, 0xbf][pos + i] && (pos + i === 0 || sawBom)) {
            sawBom = true; // a UTF-8 byte-order mark, possibly split across chunks
            continue;
          }
          if (b === 0x5b /* [ */) {
            phase = "array";
            depth = 1;
            elemDepth = 1;
          } else if (b === 0x7b /* { */) {
            phase = "wrapper";
            depth = 1;
          } else {
            throw new ImportError(
              `${opts.file} is not a JSON array of ${noun}s: it starts with ${JSON.stringify(String.fromCharCode(b))} at byte ${pos + i}. Is this the right file or format?`,
              opts.file,
            );
          }
          continue;
        case "after":
          if (b === 0x7d /* } */ || b === 0x5d /* ] */) depth--;
          else if (b === 0x7b || b === 0x5b) depth++;
          else if (b === QUOTE) inStr = true;
          if (depth < 0) throw new ImportError(`${opts.file}: unbalanced JSON after the ${noun} list at byte ${pos + i}`, opts.file);
          continue;
        case "wrapper":
          if (b === QUOTE) {
            inStr = true;
            if (depth === 1) keyBytes = [];
          } else if (b === 0x7b) depth++;
          else if (b === 0x5b) {
            if (depth === 1 && lastKey === wrapperKey) {
              phase = "array";
              elemDepth = 2;
            }
            depth++;
          } else if (b === 0x7d || b === 0x5d) {
            depth--;
            if (depth === 0) {
              throw new ImportError(`${opts.file} is a JSON object without a "${wrapperKey}" array: not a ${noun} export. Is this the right file or format?`, opts.file);
            }
          }
          continue;
        case "array":
          break;
      }
      // phase === "array"
      if (b === 0x7b || b === 0x5b) {
        if (depth === elemDepth && !elem) start(c, i, "container");
        depth++;
      } else if (b === 0x7d || b === 0x5d) {
        if (elem && (elem as Element).kind === "primitive" && depth === elemDepth) yield finish(c, i);
        depth--;
        if (elem && (elem as Element).kind === "container" && depth === elemDepth) yield finish(c, i + 1);
        else if (depth === elemDepth - 1) {
          phase = "after";
        }
      } else if (b === QUOTE) {
        inStr = true;
        nextQuote = -2;
        nextBs = -2;
        if (depth === elemDepth && !elem) start(c, i, "string");
      } else if (b === 0x2c /* , */) {
        if (elem && (elem as Element).kind === "primitive") yield finish(c, i);
      } else if (depth === elemDepth && !elem) {
        start(c, i, "primitive");
      }
    }
    if (elem) {
      const e = elem as Element;
      const part = c.subarray(e.chunkStart);
      e.size += part.length;
      if (!e.head) e.head = Buffer.from(part.subarray(0, HEAD_BYTES));
      else if (e.head.length < HEAD_BYTES) e.head = Buffer.concat([e.head, part.subarray(0, HEAD_BYTES - e.head.length)]);
      if (!e.skipping && e.size > opts.maxElementBytes) {
        e.skipping = true;
        e.pieces = [];
      }
      if (!e.skipping) e.pieces.push(part);
      e.chunkStart = 0;
    }
    pos += n;
  }

  if (phase === "start") throw new ImportError(`${opts.file} is empty: expected a JSON array of ${noun}s.`, opts.file);
  if (phase === "wrapper") throw new ImportError(`${opts.file} is a JSON object without a "${wrapperKey}" array (or it is truncated): not a ${noun} export.`, opts.file);
  if (phase === "array" || depth > 0 || inStr) {
    let where = "";
    if (elem) {
      const e = elem as Element;
      const head = lossy.decode(e.head ?? Buffer.alloc(0));
      const id = idHintFrom(head);
      where = ` inside ${noun} #${index + 1}${id ? ` ("${id}")` : ""}, which starts at byte ${e.offset}`;
    }
    throw new ImportError(
      `${opts.file} is truncated: the JSON ends at byte ${pos}${where}. ${index} complete ${noun}(s) came before it. Download or unzip the export again.`,
      opts.file,
      elem ? idHintFrom(lossy.decode((elem as Element).head ?? Buffer.alloc(0))) : undefined,
    );
  }
}
