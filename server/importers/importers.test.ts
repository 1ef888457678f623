/* eslint-disable @typescript-eslint/no-explicit-any -- hand-built export JSON of loose shape */
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, writeFile, mkdir } from "node:fs/promises";
import { pipeline as pump } from "node:stream/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ZipFile } from "yazl";
import type { SourceItem } from "../core/source-item";
import { detectFormat, ImportError, readImport, type ImportFormat, type ImportWarning } from "./index";
import { streamJsonArray } from "./json-array";

const FIX = path.join(import.meta.dirname, "__fixtures__");

/** A zip archive of these entries (deflated unless `store`), written with yazl. */
async function writeZip(file: string, entries: Array<{ name: string; data: Buffer | string; store?: boolean }>) {
  const zip = new ZipFile();
  for (const e of entries) zip.addBuffer(Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data), e.name, { compress: !e.store });
  zip.end();
  await pump(zip.outputStream, createWriteStream(file));
}
const fx = (...p: string[]) => path.join(FIX, ...p);
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "synthex-importers-"));
});
afterAll(async () => rm(tmp, { recursive: true, force: true }));

async function collect(file: string, format: ImportFormat, opts: Parameters<typeof readImport>[2] = {}) {
  const items: SourceItem[] = [];
  const warnings: ImportWarning[] = [];
  for await (const ev of readImport(file, format, opts)) {
    if ("item" in ev) items.push(ev.item);
    else warnings.push(ev.warning);
  }
  return { items, warnings, byId: new Map(items.map((i) => [i.externalId, i])) };
}

async function collectError(file: string, format: ImportFormat) {
  const items: SourceItem[] = [];
  try {
    for await (const ev of readImport(file, format)) if ("item" in ev) items.push(ev.item);
  } catch (err) {
    return { items, error: err as Error };
  }
  return { items, error: null };
}

const meta = (item: SourceItem) => item.metadata as { time: { created_at?: string }; chat: Record<string, unknown>; source: Record<string, unknown>; custom: Record<string, any> };

describe("streamJsonArray", () => {
  async function* bytes(text: string | Buffer, step = 1) {
    const b = Buffer.isBuffer(text) ? text : Buffer.from(text);
    for (let i = 0; i < b.length; i += step) yield b.subarray(i, i + step);
  }
  const values = async (text: string, step = 1) => {
    const out: unknown[] = [];
    for await (const ev of streamJsonArray(bytes(text, step), { file: "t.json", maxElementBytes: 1 << 20 })) out.push("value" in ev ? ev.value : { error: ev.error });
    return out;
  };

  it("splits elements at any chunk boundary, with escapes, brackets in strings, primitives and a BOM", async () => {
    const doc = '\uFEFF [ {"a": "x\\"]}[{", "b": [1, {"c": "\\\\"}]}, "str,]", 12.5, null, true , [] ,{"é": "ü"} ]\n';
    const expected = JSON.parse(doc.slice(1));
    for (const step of [1, 2, 3, 7, 1000]) expect(await values(doc, step)).toEqual(expected);
  });

  it("reads the conversations array of a {conversations: [...]} wrapper", async () => {
    expect(await values('{"meta": {"x": [1,2]}, "title": "conversations", "conversations": [{"id": 1}, {"id": 2}], "tail": []}', 3)).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it("says when the JSON is truncated, naming the conversation it stopped in", async () => {
    const out: unknown[] = [];
    await expect(async () => {
      for await (const ev of streamJsonArray(bytes('[{"id": "one"}, {"id": "two", "mapping": {"a": ', 5), { file: "conversations.json", maxElementBytes: 1 << 20 })) out.push(ev);
    }).rejects.toThrow(/conversations\.json is truncated.*conversation #2 \("two"\).*1 complete/);
    expect(out).toHaveLength(1);
  });

  it("refuses a file that is not a JSON array", async () => {
    await expect(values("# Title\nhello")).rejects.toThrow(/not a JSON array of conversations: it starts with "#"/);
    await expect(values('{"foo": [1]}')).rejects.toThrow(/without a "conversations" array/);
    await expect(values("   ")).rejects.toThrow(/is empty/);
  });

  it("skips an oversized element without buffering it, and goes on", async () => {
    const big = `{"id": "huge", "text": "${"x".repeat(5000)}"}`;
    const out: unknown[] = [];
    for await (const ev of streamJsonArray(bytes(`[${big}, {"id": "small"}]`, 512), { file: "t", maxElementBytes: 1000 })) out.push(ev);
    expect(out[0]).toMatchObject({ index: 0, idHint: "huge", error: expect.stringMatching(/over the .* limit/) });
    expect(out[1]).toMatchObject({ value: { id: "small" } });
  });
});

describe("chatgpt-export", () => {
  it("imports the visible thread of each conversation, with metadata", async () => {
    const { items, warnings, byId } = await collect(fx("chatgpt", "conversations.json"), "chatgpt-export");
    expect(warnings).toEqual([]);
    expect(items.map((i) => i.externalId)).toEqual([
      "c0ffee00-0000-4000-8000-000000000001",
      "c0ffee00-0000-4000-8000-000000000002",
      "c0ffee00-0000-4000-8000-000000000003",
      "c0ffee00-0000-4000-8000-000000000004",
    ]);
    const a = byId.get("c0ffee00-0000-4000-8000-000000000001")!;
    expect(a.content).toMatch(/^# Sourdough starter timing\n2024-06-10\n\n/);
    expect(a.content).toContain("user: How long before my starter is ready to bake with?\n\nassistant: Typically 5–10 days");
    // Regeneration: the abandoned draft is not in the transcript, but counted with its id.
    expect(a.content).not.toContain("ABANDONED-DRAFT");
    expect(meta(a).custom.branches).toEqual({ alternatives: 1, leaves: 2, ids: [{ at: "n-user-1", node: "n-asst-1", role: "assistant" }] });
    // Hidden system prompt skipped; custom instructions and memory kept as context.
    expect(a.content).not.toContain("HIDDEN-SYSTEM-PROMPT");
    expect(a.content).toContain("context (custom instructions): About me: I live in Lyon and bake on weekends.\nHow to respond: Answer briefly.");
    expect(a.content).toContain("context (memory): 1. [2024-06-01]. User keeps a sourdough starter named Gerald.");
    // Citation markers stripped.
    expect(a.content).not.toMatch(/[\uE000-\uF8FF]|turn0search/);
    expect(meta(a)).toMatchObject({
      time: { created_at: "2024-06-10T06:13:20.250Z" },
      chat: { conversation_id: "c0ffee00-0000-4000-8000-000000000001", title: "Sourdough starter timing", roles: ["context", "user", "assistant"], message_count: 4 },
      source: { type: "chatgpt-export", path: fx("chatgpt", "conversations.json") },
      custom: { model: "gpt-4o", hidden_messages: 1 },
    });
  });

  it("renders every content type, and leaves out hidden and tool noise", async () => {
    const { byId } = await collect(fx("chatgpt", "conversations.json"), "chatgpt-export");
    const b = byId.get("c0ffee00-0000-4000-8000-000000000002")!;
    // No title: no placeholder text (it would be found by searches for "conversation"); the date heads it.
    expect(b.content).not.toMatch(/untitled/i);
    expect(b.content).toMatch(/^\d{4}-\d{2}-\d{2}\n\n/);
    expect(meta(b).chat.title).toBeNull();
    for (const kept of [
      "user: [image: balcony-plant.jpg 800×600]\nWhat plant is this? ORIGINAL-PROMPT", // multimodal image + text
      "assistant (to python): ```python\nsum(range(10))\n```", // code
      "tool (python): ```\n45\n```", // execution_output
      "> Ferns like QUOTED-SHADE.\n— Fern care <https://example.org/page>", // tether_quote
      "Can you draw it for me? VOICE-WORDS", // audio_transcription
      "[audio: file_voice1 (wav, 2.5 s)]", // audio_asset_pointer
      "[audio/video: audio file_av_audio, video file_av_video, 2 frames]", // real_time_user_audio_video_asset_pointer
      "assistant (to dalle.text2im): image request: a watercolor Boston fern",
      "tool (dalle.text2im): [image: file-DALLE1 1024×1024; generated from prompt: a watercolor Boston fern]",
      "context (memory update): User's fern is called Frida.", // bio write
      "fern-care (document)\nWater weekly. CANVAS-DOC", // canvas
      "user: PAIRED-APP-TEXT from VS Code", // app_pairing_content
      "[computer_output content]", // unknown type: a named placeholder
      "assistant: Here is your watercolor fern.\nSecond part.", // parts joined
    ]) {
      expect(b.content).toContain(kept);
    }
    for (const noise of ["HIDDEN-THOUGHTS", "Thought for 7 seconds", "WEB-CALL-NOISE", "SONIC-NOISE", "BROWSING-NOISE", "SYSTEM-ERROR-NOISE", "BIO-ACK-NOISE", "OLD-ANSWER"]) {
      expect(b.content).not.toContain(noise);
    }
    // The image is named once, not again as an attachment line.
    expect(b.content).not.toContain("[attachment: balcony-plant.jpg");
  });

  it("follows an edited prompt's new subtree, and reads old-style custom instructions", async () => {
    const { byId } = await collect(fx("chatgpt", "conversations.json"), "chatgpt-export");
    const c = byId.get("c0ffee00-0000-4000-8000-000000000003")!;
    expect(c.content).toContain("user: Tell me about Rust the programming language.\n\nassistant: ```rust\nfn main()");
    expect(c.content).not.toContain("FIRST-EDIT");
    expect(meta(c).custom.branches.ids).toEqual([{ at: "client-created-root", node: "e-u1", role: "user" }]);
    const d = byId.get("c0ffee00-0000-4000-8000-000000000004")!;
    expect(d.content).toContain("context (custom instructions): About me: I am a gardener in Bern.\nHow to respond: Be concise.");
  });

  it("skips or repairs damaged conversations with a warning each, never crashing", async () => {
    const { items, warnings, byId } = await collect(fx("chatgpt", "damaged.json"), "chatgpt-export");
    expect(items.map((i) => i.externalId)).toEqual(["dmg-missing-parent", "dmg-no-current", "dmg-ok"]);
    expect(warnings.filter((w) => w.skipped).map((w) => w.conversation)).toEqual(["dmg-null-mapping", "dmg-cycle", "dmg-hidden-only", "conversation #6", "conversation #7"]);
    expect(warnings.find((w) => w.conversation === "dmg-cycle")!.reason).toMatch(/cycle at node "a"/);
    expect(warnings.find((w) => w.conversation === "dmg-null-mapping")!.reason).toMatch(/no message mapping/);
    expect(warnings.find((w) => w.conversation === "dmg-missing-parent")).toMatchObject({ reason: expect.stringMatching(/"gone" .* missing/) });
    expect(byId.get("dmg-missing-parent")!.content).toContain("user: SURVIVING-QUESTION\n\nassistant: SURVIVING-ANSWER");
    expect(byId.get("dmg-no-current")!.content).toContain("LATEST-ANSWER");
    expect(byId.get("dmg-no-current")!.content).not.toContain("EARLY-ANSWER");
  });

  it("reads conversations.json from the export zip, and refuses a zip without it", async () => {
    const zip = path.join(tmp, "chatgpt-export.zip");
    await writeZip(zip, [
      { name: "user.json", data: '{"id": "user-1"}' },
      { name: "conversations.json", data: await readFile(fx("chatgpt", "conversations.json")) },
      { name: "chat.html", data: "<html></html>" },
    ]);
    expect(await detectFormat(zip)).toBe("chatgpt-export");
    const { items } = await collect(zip, "chatgpt-export");
    expect(items).toHaveLength(4);
    expect(meta(items[0]!).source.path).toBe(zip);

    const empty = path.join(tmp, "photos.zip");
    await writeZip(empty, [{ name: "a.jpg", data: "x", store: true }]);
    await expect(detectFormat(empty)).rejects.toThrow(/photos\.zip has no conversations\.json/);
    const { error } = await collectError(empty, "chatgpt-export");
    expect(error).toBeInstanceOf(ImportError);
    expect(error!.message).toMatch(/photos\.zip has no conversations\.json.*It holds: a\.jpg/);

    const notZip = path.join(tmp, "broken.zip");
    await writeFile(notZip, "this is not a zip");
    await expect(collectError(notZip, "chatgpt-export")).resolves.toMatchObject({ error: expect.objectContaining({ message: expect.stringMatching(/broken\.zip is not a readable zip/) }) });
  });

  it("fails a truncated file with the file, the conversation and the reason, after the complete ones", async () => {
    const full = await readFile(fx("chatgpt", "conversations.json"));
    const cut = full.indexOf("c0ffee00-0000-4000-8000-000000000003") + 200;
    const file = path.join(tmp, "truncated.json");
    await writeFile(file, full.subarray(0, cut));
    const { items, error } = await collectError(file, "chatgpt-export");
    expect(items.map((i) => i.externalId)).toEqual(["c0ffee00-0000-4000-8000-000000000001", "c0ffee00-0000-4000-8000-000000000002"]);
    expect(error).toBeInstanceOf(ImportError);
    expect(error!.message).toMatch(/truncated\.json is truncated: .* conversation #3 \("c0ffee00-0000-4000-8000-000000000003"\)/);
  });

  it("refuses another format with a clear error, and spots a Claude export given as ChatGPT", async () => {
    const { error } = await collectError(fx("transcript.md"), "chatgpt-export");
    expect(error!.message).toMatch(/transcript\.md is not a JSON array of conversations/);
    const { items, warnings } = await collect(fx("claude", "conversations.json"), "chatgpt-export");
    expect(items).toEqual([]);
    expect(warnings[0]!.reason).toMatch(/looks like a Claude export/);
  });

  it("skips a conversation with invalid UTF-8, naming it, and imports the rest", async () => {
    const good = '{"id": "utf-ok", "current_node": "a", "mapping": {"a": {"id": "a", "parent": null, "children": [], "message": {"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["fine"]}}}}}';
    const bad = Buffer.concat([
      Buffer.from('{"id": "utf-bad", "current_node": "a", "mapping": {"a": {"id": "a", "parent": null, "children": [], "message": {"author": {"role": "user"}, "content": {"content_type": "text", "parts": ["bad '),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"]}}}}}'),
    ]);
    const file = path.join(tmp, "utf8.json");
    await writeFile(file, Buffer.concat([Buffer.from("["), bad, Buffer.from(","), Buffer.from(good), Buffer.from("]")]));
    const { items, warnings } = await collect(file, "chatgpt-export");
    expect(items.map((i) => i.externalId)).toEqual(["utf-ok"]);
    expect(warnings).toEqual([{ conversation: "utf-bad", reason: expect.stringMatching(/invalid UTF-8/), skipped: true }]);
  });

  it("truncates a 20 MB single message with a visible marker and a warning", async () => {
    const huge = "a".repeat(20 * 1024 * 1024);
    const conv = { id: "huge-1", title: "Huge paste", current_node: "u", mapping: { u: { id: "u", parent: null, children: [], message: { id: "u-msg", author: { role: "user" }, content: { content_type: "text", parts: [huge] } } } } };
    const file = path.join(tmp, "huge.json");
    await writeFile(file, JSON.stringify([conv, { ...conv, id: "huge-2" }]));
    const { items, warnings } = await collect(file, "chatgpt-export");
    expect(items.map((i) => i.externalId)).toEqual(["huge-1", "huge-2"]);
    expect(items[0]!.content.length).toBeLessThan(1_100_000);
    expect(items[0]!.content).toMatch(/\[… message truncated by the importer: 21\.0M characters, limit 1\.0M …\]$/);
    expect(warnings[0]).toMatchObject({ conversation: "huge-1", reason: expect.stringMatching(/message "u-msg": a message of 21\.0M characters/) });
    // A stricter per-conversation byte cap skips instead.
    const strict = await collect(file, "chatgpt-export", { maxConversationBytes: 1 << 20 });
    expect(strict.items).toEqual([]);
    expect(strict.warnings.map((w) => [w.conversation, w.skipped])).toEqual([["huge-1", true], ["huge-2", true]]);
  });
});

describe("claude-export", () => {
  it("prefers content blocks, keeps attachments' text, renders tools and artifacts", async () => {
    const { items, warnings, byId } = await collect(fx("claude", "conversations.json"), "claude-export");
    expect(items).toHaveLength(3);
    expect(warnings.map((w) => [w.conversation, w.skipped])).toEqual([
      ["7c7c7c7c-0000-4000-8000-00000000eeee", true],
      ["8d8d8d8d-0000-4000-8000-00000000ffff", true],
    ]);
    expect(warnings[0]!.reason).toMatch(/no chat_messages/);
    const a = byId.get("4f1d2c3b-0000-4000-8000-00000000aaaa")!;
    expect(a.content).toMatch(/^# Planning a balcony herb garden\n2025-03-02\n\nuser: My balcony faces north/);
    expect(a.content).toContain("[attachment: seeds.txt (text/plain)]\n```\nbasil, mint, parsley, chives, rosemary SEED-LIST\n```");
    expect(a.content).toContain("[file: balcony.jpg (not included in the export)]");
    expect(a.content).toContain('[artifact "Herb plan" (text/markdown)]\n```markdown\n# North balcony');
    expect(a.content).toContain('[artifact "herb-plan" updated: replaced "- chives" with "- chives\\n- lemon balm"]');
    expect(a.content).not.toContain("HIDDEN-THINKING");
    expect(a.content).not.toContain("not supported on your current device");
    expect(a.content).not.toMatch(/\n\nOK\b/);
    expect(meta(a)).toMatchObject({
      time: { created_at: "2025-03-02T18:04:11.120Z" },
      chat: { conversation_id: "4f1d2c3b-0000-4000-8000-00000000aaaa", title: "Planning a balcony herb garden", roles: ["user", "assistant"], message_count: 2 },
      source: { type: "claude-export" },
      custom: { hidden_blocks: 1, attachments: 1 },
    });
  });

  it("picks the latest leaf of a retried reply, and summarises tool calls and results", async () => {
    const { byId } = await collect(fx("claude", "conversations.json"), "claude-export");
    const t = byId.get("5a5a5a5a-0000-4000-8000-00000000cccc")!;
    expect(t.content).not.toContain("RETRIED-AWAY");
    expect(t.content).toContain("KEPT-RETRY");
    expect(t.content).toContain("[web search: Geneva Lyon first train]");
    expect(t.content).toContain("[tool result: web_search]\n- SBB timetable <https://sbb.example/tt>");
    expect(t.content).toContain("[tool call: repl]\n```javascript\nconsole.log(5*60+12)\n```");
    expect(t.content).toContain("[tool error: repl]\n312");
    expect(meta(t).custom).toMatchObject({ branches: { alternatives: 1 }, summary: "User asked about trains to Lyon." });
  });

  it("reads a legacy text-only export: artifacts tags, no thinking, edited prompts dropped, empty name untitled", async () => {
    const { byId } = await collect(fx("claude", "conversations.json"), "claude-export");
    const l = byId.get("6b6b6b6b-0000-4000-8000-00000000dddd")!;
    expect(l.content).not.toMatch(/untitled/i);
    expect(l.content).toMatch(/^\d{4}-\d{2}-\d{2}\n\n/);
    expect(meta(l).chat.title).toBeNull();
    expect(l.content).not.toContain("EDITED-AWAY");
    expect(l.content).not.toContain("ANT-THINKING-NOISE");
    expect(l.content).toContain('user: Write a haiku about lichen.\n\nassistant: Here you go.\n[artifact "Lichen haiku" (text/plain)]\n```\ngrey lace');
  });

  it("reads the export zip and tells it from a ChatGPT one", async () => {
    const zip = path.join(tmp, "data-2025-03-02-18-10-00-batch-0000.zip");
    await writeZip(zip, [
      { name: "users.json", data: await readFile(fx("claude", "users.json")) },
      { name: "conversations.json", data: await readFile(fx("claude", "conversations.json")) },
    ]);
    expect(await detectFormat(zip)).toBe("claude-export");
    expect((await collect(zip, "claude-export")).items).toHaveLength(3);
  });
});

describe("jsonl, markdown, text, folder", () => {
  it("imports OpenAI-style chat JSONL with stable ids, and warns per bad line", async () => {
    const first = await collect(fx("chats.jsonl"), "jsonl");
    const again = await collect(fx("chats.jsonl"), "jsonl");
    expect(first.items.map((i) => i.externalId)).toEqual(again.items.map((i) => i.externalId));
    expect(first.items).toHaveLength(3);
    expect(first.items[0]!.externalId).toMatch(/^chats\.jsonl#[0-9a-f]{16}$/);
    expect(first.items[0]!.content).toBe("system: You are helpful.\n\nuser: What is the capital of France?\n\nassistant: Paris.");
    const tools = first.byId.get("conv-tools")!;
    expect(tools.content).toContain('assistant: [tool call: get_weather({"city": "Oslo"})]\n\ntool: -3C, snow');
    expect(tools.content).toContain("user: Weather in Oslo?\n[image]");
    expect(first.items[2]!.content).toBe("user: ShareGPT hello\n\nassistant: ShareGPT hi");
    expect(first.warnings.map((w) => w.conversation)).toEqual(["chats.jsonl:4", "chats.jsonl:6"]);
    const { error } = await collectError(fx("transcript.md"), "jsonl");
    expect(error!.message).toMatch(/transcript\.md is not JSONL/);
  });

  it("takes a line's own scope (top level or metadata), and skips a line whose scope is not a usable string", async () => {
    const file = path.join(tmp, "scoped.jsonl");
    const line = (id: string, extra: Record<string, unknown>) => JSON.stringify({ id, messages: [{ role: "user", content: `hello from ${id}` }], ...extra });
    await writeFile(
      file,
      [
        line("a", { scope: " acme:user-1 " }),
        line("b", { metadata: { scope: "acme:user-2" } }),
        line("c", {}),
        line("d", { scope: "" }),
        line("e", { scope: 42 }),
        line("f", { scope: "x".repeat(257) }),
      ].join("\n"),
    );
    const { items, warnings } = await collect(file, "jsonl");
    expect(items.map((i) => [i.externalId, i.scope])).toEqual([
      ["a", "acme:user-1"],
      ["b", "acme:user-2"],
      ["c", undefined],
      ["d", undefined],
    ]);
    expect(warnings).toEqual([
      { conversation: "scoped.jsonl:5", reason: 'its "scope" is number, not a string; skipped', skipped: true },
      { conversation: "scoped.jsonl:6", reason: 'its "scope" is 257 characters, over the 256 limit; skipped', skipped: true },
    ]);
  });

  it("splits a Markdown transcript at speaker labels, never inside a code fence", async () => {
    const { items } = await collect(fx("transcript.md"), "markdown");
    expect(items).toHaveLength(1);
    const t = items[0]!;
    expect(t.externalId).toBe("transcript.md");
    expect(t.content).toContain("# Rust borrow checker chat\n\nuser: Why does this not compile?\n\n```rust");
    expect(t.content).toContain("User: this line is inside a fence and must not split\n    let t = s;");
    expect(t.content).toContain("assistant: `s` was moved into `t`.");
    expect(t.content).toContain("user: Thanks!\n\nassistant: You're welcome.");
    expect(meta(t)).toMatchObject({ time: { created_at: "2024-09-14T00:00:00.000Z" }, chat: { title: "Rust borrow checker chat", message_count: 4 }, source: { type: "markdown" } });
    const plain = (await collect(fx("plain.txt"), "text")).items[0]!;
    expect(plain.content).toBe("# plain\n\nuser: hello there\n\nassistant: hi, how can I help?\n\nuser: nothing, bye");
  });

  it("imports a folder of notes, one item per file, keyed by relative path", async () => {
    const { items } = await collect(fx("notes"), "folder");
    expect(items.map((i) => i.externalId)).toEqual(["groceries.md", "journal/2024-10-01.txt", "journal/chat.md"]);
    expect(items[0]!.content).toBe("# Groceries\n- oat milk\n- sourdough flour");
    expect(meta(items[0]!).custom.kind).toBe("document");
    expect(meta(items[1]!).time.created_at).toBe("2024-10-01T00:00:00.000Z");
    expect(items[2]!.content).toBe("# chat\n\nuser: Plan my week\n\nassistant: Monday: gym. Tuesday: plumber.");
    const empty = path.join(tmp, "empty-folder");
    await mkdir(empty, { recursive: true });
    expect((await collectError(empty, "folder")).error!.message).toMatch(/has no \.md or \.txt files/);
  });

  it("detects formats from zip contents, JSON shape and extension", async () => {
    expect(await detectFormat(fx("chatgpt", "conversations.json"))).toBe("chatgpt-export");
    expect(await detectFormat(fx("chatgpt", "damaged.json"))).toBe("chatgpt-export");
    expect(await detectFormat(fx("claude", "conversations.json"))).toBe("claude-export");
    expect(await detectFormat(fx("chats.jsonl"))).toBe("jsonl");
    expect(await detectFormat(fx("transcript.md"))).toBe("markdown");
    expect(await detectFormat(fx("plain.txt"))).toBe("text");
    expect(await detectFormat(fx("notes"))).toBe("folder");
    const noExt = path.join(tmp, "export-no-ext");
    await writeFile(noExt, await readFile(fx("claude", "conversations.json")));
    expect(await detectFormat(noExt)).toBe("claude-export");
    const users = path.join(tmp, "users.json");
    await writeFile(users, '[{"uuid": "u"}]');
    await expect(detectFormat(users)).rejects.toThrow(/users\.json is JSON but neither a ChatGPT export/);
    await expect(detectFormat(path.join(tmp, "missing.json"))).rejects.toThrow(/missing\.json does not exist/);
  });
});
