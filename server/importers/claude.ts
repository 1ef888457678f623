/**
 * Claude.ai data export (`conversations.json`, or the export `.zip`). See ../../../shared/formats/claude-export.md.
 *
 * One item per conversation. The thread: with `parent_message_uuid` (newer exports), the path from the
 * latest leaf back to the root; otherwise `created_at` order with edited prompts dropped. Message text is
 * built from `content[]` blocks (the flat `text` only for legacy exports), thinking is left out, tool
 * blocks are summarised, artifacts rendered as documents, attachments' extracted text kept inline.
 */
import { streamJsonArray } from "./json-array";
import { openConversations } from "./input";
import {
  capMessage,
  DEFAULT_MAX_CONVERSATION_BYTES,
  DEFAULT_MAX_MESSAGE_CHARS,
  isObject,
  str,
  toIso,
  capTitle,
  jsonPreview,
  type ImportEvent,
  type ImporterOptions,
  type ImportWarning,
} from "./types";
import type { SourceItem } from "../core/source-item";

type Obj = Record<string, unknown>;

const PLACEHOLDER = /```\s*\n?This block is not supported on your current device yet\.?\s*\n?```/g;
const TOOL_OUTPUT_CHARS = 2000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} …[${text.length - max} more characters]`;
}

function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`{3,}/g), (m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text.replace(/\s+$/, "")}\n${ticks}`;
}

function renderToolUse(block: Obj): string {
  const name = str(block.name) ?? "tool";
  const input = isObject(block.input) ? block.input : {};
  if (name === "artifacts") {
    const title = str(input.title) ?? str(input.id) ?? "artifact";
    const command = str(input.command) ?? "create";
    if (command === "update" && (typeof input.old_str === "string" || typeof input.new_str === "string")) {
      return `[artifact "${title}" updated: replaced ${JSON.stringify(clip(str(input.old_str) ?? "", 300))} with ${JSON.stringify(clip(str(input.new_str) ?? "", 300))}]`;
    }
    const type = str(input.type);
    const lang = str(input.language) ?? (type === "text/markdown" ? "markdown" : type === "text/html" ? "html" : "");
    const body = str(input.content) ?? "";
    return `[artifact "${title}"${type ? ` (${type})` : ""}${command !== "create" ? `, ${command}` : ""}]\n${fence(body, lang)}`;
  }
  if (name === "web_search" && typeof input.query === "string") return `[web search: ${input.query}]`;
  if (name === "web_fetch" && typeof input.url === "string") return `[web fetch: ${input.url}]`;
  if ((name === "repl" || name === "analysis" || name === "bash_tool") && (typeof input.code === "string" || typeof input.command === "string")) {
    return `[tool call: ${name}]\n${fence(String(input.code ?? input.command), name === "bash_tool" ? "bash" : "javascript")}`;
  }
  const args = Object.keys(input).length ? ` ${jsonPreview(input, 500)}` : "";
  return `[tool call: ${name}${args}]`;
}

function renderToolResult(block: Obj): string | null {
  const name = str(block.name) ?? "tool";
  const items = Array.isArray(block.content) ? block.content.filter(isObject) : [];
  if (name === "artifacts" && block.is_error !== true) return null; // "OK"
  const lines: string[] = [];
  for (const it of items) {
    const title = str(it.title);
    const url = str(it.url);
    const text = str(it.text);
    if (title || url) lines.push(`- ${title ?? url}${title && url ? ` <${url}>` : ""}`);
    else if (text) lines.push(text);
  }
  if (!lines.length && typeof block.content === "string") lines.push(block.content);
  const body = clip(lines.join("\n"), TOOL_OUTPUT_CHARS);
  return `[tool ${block.is_error === true ? "error" : "result"}: ${name}]${body ? `\n${body}` : ""}`;
}

/** Legacy `text`: strip the tool placeholders, render <antArtifact> tags as documents, drop <antThinking>. */
export function renderLegacyText(text: string): string {
  return text
    .replace(PLACEHOLDER, "")
    .replace(/<antThinking>[\s\S]*?<\/antThinking>/g, "")
    .replace(/<antArtifact\b([^>]*)>([\s\S]*?)<\/antArtifact>/g, (_m, attrs: string, body: string) => {
      const attr = (k: string) => new RegExp(`${k}="([^"]*)"`).exec(attrs)?.[1];
      const title = attr("title") ?? attr("identifier") ?? "artifact";
      const type = attr("type");
      return `[artifact "${title}"${type ? ` (${type})` : ""}]\n${fence(body.trim(), attr("language") ?? "")}`;
    })
    .trim();
}

/** One chat message → its text: blocks preferred, flat `text` as fallback; attachments and files appended. */
export function renderClaudeMessage(msg: Obj): { text: string; hidden: number } {
  const parts: string[] = [];
  let hidden = 0;
  const blocks = Array.isArray(msg.content) ? msg.content.filter(isObject) : [];
  if (blocks.length) {
    for (const b of blocks) {
      const type = str(b.type);
      if (type === "text") {
        const t = str(b.text);
        if (t?.trim()) parts.push(t.replace(PLACEHOLDER, "").trim());
      } else if (type === "thinking" || type === "redacted_thinking") hidden++;
      else if (type === "tool_use") parts.push(renderToolUse(b));
      else if (type === "tool_result") {
        const r = renderToolResult(b);
        if (r) parts.push(r);
      } else {
        const t = str(b.text) ?? str(b.transcript);
        if (t?.trim()) parts.push(t.trim());
      }
    }
  } else {
    const t = str(msg.text);
    if (t) parts.push(renderLegacyText(t));
  }
  for (const a of Array.isArray(msg.attachments) ? msg.attachments.filter(isObject) : []) {
    const name = str(a.file_name) ?? "attachment";
    const type = str(a.file_type);
    const extracted = str(a.extracted_content);
    parts.push(
      extracted?.trim()
        ? `[attachment: ${name}${type ? ` (${type})` : ""}]\n${fence(extracted)}`
        : `[attachment: ${name}${type ? ` (${type})` : ""}, no text extracted]`,
    );
  }
  for (const f of Array.isArray(msg.files) ? msg.files.filter(isObject) : []) {
    const name = str(f.file_name);
    if (name) parts.push(`[file: ${name} (not included in the export)]`);
  }
  return { text: parts.filter((p) => p.trim()).join("\n\n"), hidden };
}

const time = (m: Obj) => {
  const iso = toIso(m.created_at);
  return iso ? Date.parse(iso) : -Infinity;
};

/** Picks the thread: the latest leaf's ancestry (tree exports), or created_at order minus edited prompts (legacy). */
export function claudeThread(messages: Obj[]): { thread: Obj[]; alternatives: number; problem?: string; note?: string } {
  const hasTree = messages.some((m) => typeof m.parent_message_uuid === "string");
  if (hasTree) {
    const byId = new Map<string, Obj>();
    for (const m of messages) if (typeof m.uuid === "string") byId.set(m.uuid, m);
    const hasChild = new Set<string>();
    for (const m of messages) if (typeof m.parent_message_uuid === "string" && byId.has(m.parent_message_uuid)) hasChild.add(m.parent_message_uuid);
    const leaves = messages.filter((m) => typeof m.uuid === "string" && !hasChild.has(m.uuid));
    let best: Obj | null = null;
    for (const m of leaves) if (!best || time(m) >= time(best)) best = m;
    if (!best) return { thread: [], alternatives: 0, problem: "the message tree has no leaf (every message is a parent: a cycle)" };
    const thread: Obj[] = [];
    const seen = new Set<string>();
    let cur: Obj | undefined = best;
    while (cur) {
      const id = cur.uuid as string;
      if (seen.has(id)) return { thread: [], alternatives: 0, problem: `the message tree has a cycle at message "${id}"` };
      seen.add(id);
      thread.push(cur);
      const parent: unknown = cur.parent_message_uuid;
      cur = typeof parent === "string" ? byId.get(parent) : undefined;
    }
    return { thread: thread.reverse(), alternatives: leaves.length - 1 };
  }
  const sorted = messages.map((m, i) => ({ m, i })).sort((a, b) => time(a.m) - time(b.m) || a.i - b.i).map((x) => x.m);
  const thread: Obj[] = [];
  let dropped = 0;
  for (let i = 0; i < sorted.length; i++) {
    const m = sorted[i]!;
    const next = sorted[i + 1];
    if (next && str(m.sender) === "human" && str(next.sender) === "human") {
      dropped++;
      continue;
    }
    thread.push(m);
  }
  return { thread, alternatives: dropped };
}

export function claudeConversationToItem(conv: unknown, ctx: { index: number; path: string; maxMessageChars?: number }): { item: SourceItem | null; warnings: ImportWarning[] } {
  const where = `conversation #${ctx.index + 1}`;
  if (!isObject(conv)) return { item: null, warnings: [{ conversation: where, reason: "not a JSON object; skipped" }] };
  const id = str(conv.uuid) ?? str(conv.id);
  if (!id) return { item: null, warnings: [{ conversation: where, reason: "has no uuid; skipped" }] };
  if (!Array.isArray(conv.chat_messages)) {
    const looksChatgpt = isObject(conv.mapping);
    return {
      item: null,
      warnings: [{ conversation: id, reason: looksChatgpt ? "has mapping, not chat_messages: this looks like a ChatGPT export (use --format chatgpt-export); skipped" : "has no chat_messages (null or missing); skipped" }],
    };
  }
  const warnings: ImportWarning[] = [];
  const messages = conv.chat_messages.filter(isObject);
  if (messages.length < conv.chat_messages.length) warnings.push({ conversation: id, reason: `${conv.chat_messages.length - messages.length} message(s) are not objects; ignored` });
  const { thread, alternatives, problem } = claudeThread(messages);
  if (problem) return { item: null, warnings: [...warnings, { conversation: id, reason: `${problem}; skipped` }] };
  const max = ctx.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
  const turns: string[] = [];
  const roles = new Set<string>();
  let hidden = 0;
  let attachments = 0;
  for (const m of thread) {
    // A sender becomes a turn label: capped like a title, so a huge one cannot grow a record.
    const sender = capTitle(str(m.sender));
    const role = sender === "human" || sender === "user" ? "user" : sender === "assistant" ? "assistant" : (sender ?? "unknown");
    const r = renderClaudeMessage(m);
    hidden += r.hidden;
    attachments += Array.isArray(m.attachments) ? m.attachments.length : 0;
    if (!r.text.trim()) continue;
    const capped = capMessage(r.text, max);
    if (capped.truncated) warnings.push({ conversation: id, reason: `message "${str(m.uuid) ?? "?"}": ${capped.truncated}` });
    roles.add(role);
    turns.push(`${role}: ${capped.text}`);
  }
  if (!turns.length) return { item: null, warnings: [...warnings, { conversation: id, reason: "has no messages with text; skipped" }] };
  const name = capTitle(str(conv.name)?.trim() || null);
  const createdAt = toIso(conv.created_at) ?? (thread[0] ? toIso(thread[0].created_at) : null);
  const updatedAt = toIso(conv.updated_at);
  // No title: no placeholder in the text (it would be searchable); the UI says "Untitled".
  const header = [name ? `# ${name}` : "", createdAt?.slice(0, 10) ?? ""].filter(Boolean).join("\n");
  const summary = str(conv.summary)?.trim();
  const custom: Record<string, unknown> = { branches: { alternatives }, hidden_blocks: hidden, attachments };
  if (summary) custom.summary = summary;
  if (isObject(conv.account) && typeof conv.account.uuid === "string") custom.account = conv.account.uuid;
  return {
    item: {
      externalId: id,
      content: [header, ...turns].filter(Boolean).join("\n\n"),
      metadata: {
        time: { ...(createdAt ? { created_at: createdAt } : {}), ...(updatedAt ? { updated_at: updatedAt } : {}) },
        chat: { conversation_id: id, title: name, author: [...roles].join(", "), roles: [...roles], message_count: turns.length },
        source: { type: "claude-export", path: ctx.path },
        custom,
      },
    },
    warnings,
  };
}

export async function* importClaude(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const input = await openConversations(file);
  const display = opts.displayPath ?? file;
  try {
    for await (const ev of streamJsonArray(input.stream, { file: input.label, maxElementBytes: opts.maxConversationBytes ?? DEFAULT_MAX_CONVERSATION_BYTES })) {
      if ("error" in ev) {
        yield { warning: { conversation: ev.idHint ?? `conversation #${ev.index + 1}`, reason: `${ev.error}, at byte ${ev.offset}; skipped` } };
        continue;
      }
      if (ev.invalidUtf8) {
        const id = isObject(ev.value) ? str(ev.value.uuid) : null;
        yield { warning: { conversation: id ?? `conversation #${ev.index + 1}`, reason: `contains invalid UTF-8 (starting at byte ${ev.offset}); skipped` } };
        continue;
      }
      const res = claudeConversationToItem(ev.value, { index: ev.index, path: display, maxMessageChars: opts.maxMessageChars });
      for (const w of res.warnings) yield { warning: w };
      if (res.item) yield { item: res.item };
    }
  } finally {
    input.close();
  }
}
