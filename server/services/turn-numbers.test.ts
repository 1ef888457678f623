/**
 * Turn numbers are message numbers: a 9-message ChatGPT conversation, imported, made a transcript by
 * the offline model (which heads it with a "Date: …" line) and split into 3-turn windows as the
 * chat-memory template does, has windows that say 9 turns, and the last one holds messages 7–9.
 */
import { describe, expect, it } from "vitest";
import { applySplitOperator, type SplitPart } from "../engine/operators";
import { conversationTurns } from "../engine/turns";
import { chatgptConversationToItem } from "../importers";
import { cleanTranscript } from "../llm/offline-model";

function nineMessageChat() {
  const t = Date.parse("2024-03-05T09:00:00Z") / 1000;
  const ids = Array.from({ length: 9 }, (_, i) => `m${i + 1}`);
  const mapping: Record<string, unknown> = {
    root: { id: "root", parent: null, children: ["m1"], message: null },
  };
  ids.forEach((id, i) => {
    const role = i % 2 === 0 ? "user" : "assistant";
    mapping[id] = {
      id,
      parent: i === 0 ? "root" : ids[i - 1],
      children: i < 8 ? [ids[i + 1]] : [],
      message: { id, author: { role }, create_time: t + i * 60, content: { content_type: "text", parts: [`message ${i + 1} of the tide chat`] }, metadata: {}, recipient: "all" },
    };
  });
  return { id: "tides", title: "Tide tables", create_time: t, update_time: t + 600, current_node: "m9", mapping };
}

describe("turns counted as messages", () => {
  const { item } = chatgptConversationToItem(nineMessageChat(), { index: 0, path: "conversations.json" });
  const transcript = cleanTranscript([{ id: "c", content: item!.content, metadata: item!.metadata as Record<string, unknown> }]);

  it("the transcript's Date line is metadata, not turn 1", () => {
    expect(transcript).toMatch(/^Date: /m);
    const { header, turns, meta } = conversationTurns(transcript);
    expect(meta).toEqual([expect.stringMatching(/^Date: /)]);
    expect(header).toContain("Tide tables");
    expect(turns).toHaveLength(9);
    expect(turns[0]).toMatch(/^user: message 1 of/i);
    expect(turns[8]).toMatch(/message 9 of/);
  });

  it("a 9-message chat's 3-turn windows say 9 turns, and the last holds messages 7–9", () => {
    const windows = applySplitOperator({ kind: "turns", size: 3, stride: 1 }, transcript) as SplitPart[];
    expect(windows.map((w) => w.metadata?.turn_count)).toEqual(windows.map(() => 9));
    expect(windows.map((w) => w.metadata?.turns)).toEqual([
      [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6], [5, 6, 7], [6, 7, 8], [7, 8, 9],
    ]);
    const last = windows.at(-1)!.content;
    for (const n of [7, 8, 9]) expect(last).toContain(`message ${n} of`);
    expect(last).not.toContain("message 6 of");
    // Each window keeps the conversation's header (title and date) to be findable on its own.
    expect(last).toContain("Tide tables\n2024-03-05");
  });

  it("a speaker who opens the chat is still turn 1 (only metadata lines are header)", () => {
    const { turns } = conversationTurns("# Notes\n\nDate: 5 March 2024\n\nDana: hello\n\nEli: hi");
    expect(turns).toEqual(["Dana: hello", "Eli: hi"]);
  });
});
