/**
 * ChatGPT data export (`conversations.json`, or the export `.zip`). See ../../../shared/formats/chatgpt-export.md.
 *
 * One item per conversation: the visible thread (from `current_node` up through `parent` to the root,
 * reversed) rendered as a readable transcript. Abandoned branches (regenerations, edited prompts) are
 * counted in metadata, never mixed in. Hidden, system and tool-orchestration messages are skipped;
 * Custom Instructions and memory are kept, labelled as context.
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
  type ImportEvent,
  type ImporterOptions,
  type ImportWarning,
} from "./types";
import type { SourceItem } from "../core/source-item";

type Obj = Record<string, unknown>;

/** Private-use citation markers such as "\ue200cite\ue202turn0search3\ue201", and stray private-use characters. */
export function stripCitationMarkers(text: string): string {
  return text.replace(/\uE200[^\uE201]{0,400}\uE201/g, "").replace(/[\uE000-\uF8FF]/g, "");
}

const NOISE_CONTENT = new Set(["thoughts", "reasoning_recap", "tether_browsing_display", "sonic_webpage", "system_error"]);
const NOISE_TOOLS = /^(web|web\.run|web\.search|browser|bio|search|file_search|myfiles_browser)$/;

interface Turn {
  label: string;
  text: string;
  kind: "dialogue" | "context" | "tool";
}

function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`{3,}/g), (m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text.replace(/\s+$/, "")}\n${ticks}`;
}

function assetName(pointer: unknown): string {
  const p = str(pointer) ?? "";
  return p.replace(/^[a-z-]+:\/\//, "") || "unknown";
}

/** A multimodal part (a string, or an object with its own content_type) as text or a named placeholder. */
export function renderPart(part: unknown, attachmentNames: Map<string, string>): string {
  if (typeof part === "string") return part;
  if (!isObject(part)) return "";
  const type = str(part.content_type) ?? "unknown";
  switch (type) {
    case "image_asset_pointer": {
      const id = assetName(part.asset_pointer);
      const name = attachmentNames.get(id) ?? attachmentNames.get(id.replace(/^file[-_]/, "file-")) ?? id;
      const dims = typeof part.width === "number" && typeof part.height === "number" ? ` ${part.width}×${part.height}` : "";
      const meta = isObject(part.metadata) ? part.metadata : {};
      const dalle = isObject(meta.dalle) ? str(meta.dalle.prompt) : null;
      return `[image: ${name}${dims}${dalle ? `; generated from prompt: ${dalle}` : ""}]`;
    }
    case "audio_transcription":
      return str(part.text) ?? "";
    case "audio_asset_pointer": {
      const meta = isObject(part.metadata) ? part.metadata : {};
      const dur = typeof meta.start === "number" && typeof meta.end === "number" ? `, ${(meta.end - meta.start).toFixed(1)} s` : "";
      return `[audio: ${assetName(part.asset_pointer)}${part.format ? ` (${String(part.format)}${dur})` : dur ? ` (${dur.slice(2)})` : ""}]`;
    }
    case "real_time_user_audio_video_asset_pointer": {
      const bits: string[] = [];
      if (isObject(part.audio_asset_pointer)) bits.push(`audio ${assetName(part.audio_asset_pointer.asset_pointer)}`);
      if (isObject(part.video_container_asset_pointer)) bits.push(`video ${assetName(part.video_container_asset_pointer.asset_pointer)}`);
      if (Array.isArray(part.frames_asset_pointers) && part.frames_asset_pointers.length) bits.push(`${part.frames_asset_pointers.length} frames`);
      return `[audio/video: ${bits.join(", ") || "recording"}]`;
    }
    default: {
      const text = str(part.text);
      return text ?? `[${type}]`;
    }
  }
}

/** The payload text of a message content object, per the format notes' parsing tip. */
export function contentText(content: Obj, attachmentNames: Map<string, string>): string {
  const type = str(content.content_type) ?? "unknown";
  switch (type) {
    case "text":
    case "multimodal_text":
      return Array.isArray(content.parts) ? content.parts.map((p) => renderPart(p, attachmentNames)).filter((s) => s !== "").join("\n") : "";
    case "code":
      return fence(str(content.text) ?? "", str(content.language) && content.language !== "unknown" ? String(content.language) : "");
    case "execution_output":
      return fence(str(content.text) ?? "");
    case "tether_quote": {
      const title = str(content.title) ?? str(content.domain) ?? "source";
      const url = str(content.url);
      return `> ${(str(content.text) ?? "").replace(/\n/g, "\n> ")}\n— ${title}${url ? ` <${url}>` : ""}`;
    }
    case "sonic_webpage":
      return `${str(content.title) ?? ""} <${str(content.url) ?? ""}>\n${str(content.snippet) ?? str(content.text) ?? ""}`;
    case "tether_browsing_display":
      return str(content.summary) ?? str(content.result) ?? "";
    case "thoughts":
      return Array.isArray(content.thoughts) ? content.thoughts.map((t) => (isObject(t) ? (str(t.summary) ?? str(t.content) ?? "") : "")).join("\n") : "";
    case "reasoning_recap":
      return str(content.content) ?? "";
    case "user_editable_context": {
      const bits = [str(content.user_profile), str(content.user_instructions)];
      return [bits[0] ? `About me: ${bits[0]}` : "", bits[1] ? `How to respond: ${bits[1]}` : ""].filter(Boolean).join("\n");
    }
    case "model_editable_context":
      return [str(content.model_set_context), str(content.repo_summary)].filter((s) => s && s.trim()).join("\n");
    case "system_error":
      return `${str(content.name) ?? "error"}: ${str(content.text) ?? ""}`;
    case "app_pairing_content":
      return Array.isArray(content.context_parts) ? content.context_parts.map((p) => (isObject(p) ? (str(p.text) ?? "") : "")).join("\n") : "";
    default: {
      if (Array.isArray(content.parts)) return content.parts.map((p) => renderPart(p, attachmentNames)).join("\n");
      const t = str(content.text) ?? str(content.result) ?? str(content.content);
      if (t !== null) return t;
      return `[${type} content]`;
    }
  }
}

function attachmentsOf(meta: Obj): Array<{ id: string; name: string; mime?: string }> {
  if (!Array.isArray(meta.attachments)) return [];
  return meta.attachments.filter(isObject).map((a) => ({ id: str(a.id) ?? "", name: str(a.name) ?? str(a.id) ?? "file", mime: str(a.mime_type) ?? undefined }));
}

/** One message on the visible thread → a transcript turn, or null when the UI hides it / it is noise. */
export function renderMessage(message: Obj): Turn | null {
  const author = isObject(message.author) ? message.author : {};
  // Role, name and recipient become turn labels: capped like titles, so a huge one cannot grow a record.
  const role = capTitle(str(author.role) ?? "unknown");
  const name = capTitle(str(author.name));
  const meta = isObject(message.metadata) ? message.metadata : {};
  const content = isObject(message.content) ? message.content : { content_type: "text", parts: [] };
  const type = str(content.content_type) ?? "unknown";
  const recipient = capTitle(str(message.recipient) ?? "all");
  const attachments = attachmentsOf(meta);
  const names = new Map(attachments.map((a) => [a.id, a.name]));

  // Injected context: Custom Instructions and memory. Facts about the user, not dialogue.
  if (type === "user_editable_context" || (role === "system" && meta.is_user_system_message === true)) {
    let text = contentText(content, names);
    const ucd = isObject(meta.user_context_message_data) ? meta.user_context_message_data : null;
    if (!text.trim() && ucd) {
      text = [str(ucd.about_user_message) ? `About me: ${ucd.about_user_message}` : "", str(ucd.about_model_message) ? `How to respond: ${ucd.about_model_message}` : ""]
        .filter(Boolean)
        .join("\n");
    }
    return text.trim() ? { label: "context (custom instructions)", text, kind: "context" } : null;
  }
  if (type === "model_editable_context") {
    const text = contentText(content, names);
    return text.trim() ? { label: "context (memory)", text, kind: "context" } : null;
  }
  if (role === "assistant" && recipient === "bio") {
    const text = contentText(content, names);
    return text.trim() ? { label: "context (memory update)", text, kind: "context" } : null;
  }
  if (meta.is_visually_hidden_from_conversation === true) return null;
  if (role === "system") return null;
  if (NOISE_CONTENT.has(type)) return null;

  if (role === "assistant" && recipient !== "all") {
    if (NOISE_TOOLS.test(recipient)) return null;
    let text = contentText(content, names);
    // Canvas and image tools take JSON arguments: show what the user would see.
    const rawArgs = type === "code" ? str(content.text) : type === "text" ? text : null;
    if (rawArgs && /^\s*\{/.test(rawArgs)) {
      try {
        const args = JSON.parse(rawArgs) as unknown;
        if (isObject(args)) {
          if (typeof args.prompt === "string") text = `image request: ${args.prompt}`;
          else if (typeof args.content === "string") text = `${str(args.name) ?? str(args.title) ?? "document"}${args.type ? ` (${String(args.type)})` : ""}\n${args.content}`;
          else if (Array.isArray(args.updates)) text = args.updates.map((u) => (isObject(u) ? (str(u.replacement) ?? "") : "")).join("\n");
        }
      } catch {
        /* plain text arguments */
      }
    }
    return text.trim() ? { label: `assistant (to ${recipient})`, text, kind: "tool" } : null;
  }
  if (role === "tool") {
    const tool = name ?? "tool";
    const worthShowing = type === "execution_output" || type === "tether_quote" || type === "multimodal_text" || type === "code";
    if (!worthShowing && (NOISE_TOOLS.test(tool) || tool.startsWith("web.") || tool.startsWith("browser"))) return null;
    // Code output, quotes, generated images and other tool replies are kept, labelled with the tool.
    const text = contentText(content, names);
    return text.trim() ? { label: `tool (${tool})`, text, kind: "tool" } : null;
  }

  let text = contentText(content, names);
  const unlisted = attachments.filter((a) => !text.includes(`[image: ${a.name}`));
  if (unlisted.length) {
    const listed = unlisted.map((a) => `[attachment: ${a.name}${a.mime ? ` (${a.mime})` : ""}]`).join("\n");
    text = text.trim() ? `${text}\n${listed}` : listed;
  }
  text = stripCitationMarkers(text);
  if (!text.trim()) return null;
  const label = role === "user" || role === "assistant" ? role : role;
  return { label, text, kind: "dialogue" };
}

export interface ConvertResult {
  item: SourceItem | null;
  warnings: ImportWarning[];
}

/** One conversation object → one item (or none, with the reason). Never throws on bad data. */
export function chatgptConversationToItem(conv: unknown, ctx: { index: number; path: string; maxMessageChars?: number }): ConvertResult {
  const warnings: ImportWarning[] = [];
  const where = `conversation #${ctx.index + 1}`;
  if (!isObject(conv)) return { item: null, warnings: [{ conversation: where, reason: "not a JSON object; skipped" }] };
  const id = str(conv.conversation_id) ?? str(conv.id);
  const mapping = conv.mapping;
  const looksClaude = !isObject(mapping) && Array.isArray(conv.chat_messages);
  if (!id && !looksClaude) return { item: null, warnings: [{ conversation: where, reason: "has no id or conversation_id; skipped" }] };
  const label = id ?? str(conv.uuid) ?? where;
  if (!isObject(mapping) || !id) {
    return {
      item: null,
      warnings: [{ conversation: label, reason: looksClaude ? "has chat_messages, not mapping: this looks like a Claude export (use --format claude-export); skipped" : "has no message mapping (null or missing); skipped" }],
    };
  }
  const nodes = mapping as Record<string, unknown>;
  const nodeOf = (nid: string): Obj | null => (isObject(nodes[nid]) ? (nodes[nid] as Obj) : null);

  // The active leaf: current_node if it exists, else the latest leaf (a damaged export).
  let leaf = str(conv.current_node);
  if (!leaf || !nodeOf(leaf)) {
    const leaves = Object.keys(nodes).filter((k) => {
      const n = nodeOf(k);
      return n && (!Array.isArray(n.children) || n.children.length === 0);
    });
    const time = (k: string) => {
      const m = nodeOf(k)?.message;
      return isObject(m) && typeof m.create_time === "number" ? m.create_time : -Infinity;
    };
    leaves.sort((a, b) => time(b) - time(a));
    const fallback = leaves[0] ?? null;
    warnings.push({
      conversation: label,
      reason: `${leaf ? `current_node "${leaf}" is not in mapping` : "has no current_node"}; ${fallback ? `used the latest leaf "${fallback}"` : "no leaf found"}`,
    });
    leaf = fallback;
    if (!leaf) return { item: null, warnings: [...warnings.slice(0, -1), { conversation: label, reason: "has an empty message mapping; skipped" }] };
  }

  // Walk up to the root, guarding against cycles and missing parents.
  const path: string[] = [];
  const seen = new Set<string>();
  let cur: string | null = leaf;
  while (cur) {
    if (seen.has(cur)) {
      return { item: null, warnings: [...warnings, { conversation: label, reason: `the message tree has a cycle at node "${cur}"; skipped (the thread order cannot be trusted)` }] };
    }
    seen.add(cur);
    const node = nodeOf(cur);
    if (!node) {
      warnings.push({ conversation: label, reason: `node "${cur}" is referenced as a parent but missing from mapping; the thread starts after it` });
      break;
    }
    path.push(cur);
    cur = str(node.parent);
  }
  path.reverse();

  // Other branches: children of path nodes that are off the path.
  const onPath = new Set(path);
  const alternatives: Array<{ at: string; node: string; role: string | null }> = [];
  for (const nid of path) {
    const node = nodeOf(nid)!;
    const children = Array.isArray(node.children) ? node.children.filter((c): c is string => typeof c === "string") : [];
    for (const child of children) {
      if (onPath.has(child)) continue;
      const m = nodeOf(child)?.message;
      const author = isObject(m) && isObject(m.author) ? str(m.author.role) : null;
      alternatives.push({ at: nid, node: child, role: author });
    }
  }
  const leafCount = Object.values(nodes).filter((n) => isObject(n) && (!Array.isArray(n.children) || n.children.length === 0)).length;

  const turns: Turn[] = [];
  let hidden = 0;
  const models = new Set<string>();
  const max = ctx.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
  let firstTime: string | null = null;
  let lastTime: string | null = null;
  for (const nid of path) {
    const msg = nodeOf(nid)!.message;
    if (!isObject(msg)) continue;
    const t = toIso(msg.create_time);
    if (t) {
      firstTime ??= t;
      lastTime = t;
    }
    const turn = renderMessage(msg);
    if (!turn) {
      hidden++;
      continue;
    }
    const meta = isObject(msg.metadata) ? msg.metadata : {};
    if (typeof meta.model_slug === "string") models.add(meta.model_slug);
    const capped = capMessage(turn.text, max);
    if (capped.truncated) warnings.push({ conversation: label, reason: `message "${str(msg.id) ?? nid}": ${capped.truncated}` });
    turns.push({ ...turn, text: capped.text });
  }
  if (!turns.some((t) => t.kind === "dialogue" || t.kind === "tool")) {
    return { item: null, warnings: [...warnings, { conversation: label, reason: "has no visible messages on its current thread; skipped" }] };
  }

  const rawTitle = str(conv.title);
  const title = rawTitle && rawTitle.trim() ? capTitle(rawTitle.trim()) : null;
  const createdAt = toIso(conv.create_time) ?? firstTime;
  const updatedAt = toIso(conv.update_time) ?? lastTime;
  // No title: no placeholder in the text (it would be searchable); the UI says "Untitled".
  const header = [title ? `# ${title}` : "", createdAt?.slice(0, 10) ?? ""].filter(Boolean).join("\n");
  const content = [header, ...turns.map((t) => `${t.label}: ${t.text.trim()}`)].filter(Boolean).join("\n\n");
  const roles = [...new Set(turns.map((t) => t.label.split(" ")[0]!))];
  const custom: Record<string, unknown> = {
    branches: {
      alternatives: alternatives.length,
      leaves: leafCount,
      ids: alternatives.slice(0, 50),
    },
    hidden_messages: hidden,
  };
  if (typeof conv.default_model_slug === "string") custom.model = conv.default_model_slug;
  if (models.size) custom.models = [...models];
  if (conv.is_archived === true) custom.archived = true;
  if (typeof conv.gizmo_id === "string") custom.gizmo = { id: conv.gizmo_id, type: str(conv.gizmo_type) };
  return {
    item: {
      externalId: id,
      content,
      metadata: {
        time: { ...(createdAt ? { created_at: createdAt } : {}), ...(updatedAt ? { updated_at: updatedAt } : {}) },
        chat: { conversation_id: id, title, author: roles.join(", "), roles, message_count: turns.length },
        source: { type: "chatgpt-export", path: ctx.path },
        custom,
      },
    },
    warnings,
  };
}

export async function* importChatgpt(file: string, opts: ImporterOptions = {}): AsyncGenerator<ImportEvent> {
  const input = await openConversations(file);
  const display = opts.displayPath ?? file;
  try {
    for await (const ev of streamJsonArray(input.stream, { file: input.label, maxElementBytes: opts.maxConversationBytes ?? DEFAULT_MAX_CONVERSATION_BYTES })) {
      if ("error" in ev) {
        yield { warning: { conversation: ev.idHint ?? `conversation #${ev.index + 1}`, reason: `${ev.error}, at byte ${ev.offset}; skipped` } };
        continue;
      }
      const conv = ev.value;
      const id = isObject(conv) ? (str(conv.conversation_id) ?? str(conv.id)) : null;
      if (ev.invalidUtf8) {
        yield { warning: { conversation: id ?? `conversation #${ev.index + 1}`, reason: `contains invalid UTF-8 (starting at byte ${ev.offset}); skipped` } };
        continue;
      }
      const res = chatgptConversationToItem(conv, { index: ev.index, path: display, maxMessageChars: opts.maxMessageChars });
      for (const w of res.warnings) yield { warning: w };
      if (res.item) yield { item: res.item };
    }
  } finally {
    input.close();
  }
}
