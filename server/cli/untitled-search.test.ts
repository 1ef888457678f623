/**
 * Placeholders are not content: a conversation exported without a title has no "Untitled
 * conversation" text to be found by, so the README's `search "that rust conversation"` ranks only
 * conversations about Rust, not an untitled one about pandas.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { chatgptExport, runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-untitled-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("search \"that rust conversation\" does not rank an untitled conversation without rust", async () => {
  const data = path.join(dir, "data");
  const conversations = chatgptExport();
  const untitled = structuredClone(conversations[2]!);
  untitled.id = "conv-untitled";
  untitled.title = null as unknown as string;
  for (const node of Object.values(untitled.mapping)) {
    if (node.message) node.message.content.parts = [node.message.author.role === "user" ? "How do I group a pandas DataFrame by month?" : "Use df.groupby(pd.Grouper(key='date', freq='M'))."];
  }
  const file = path.join(dir, "conversations.json");
  writeFileSync(file, JSON.stringify([...conversations, untitled]));

  expect((await runCliInProcess(data, "init", "personal-memory", "--from", file)).out).toMatch(/4 new/);
  expect((await runCliInProcess(data, "run")).code).toBe(0);
  const search = await runCliInProcess(data, "search", "that rust conversation", "--json");
  expect(search.code).toBe(0);
  const hits = JSON.parse(search.out).hits as Array<{ step: string; content: string }>;
  expect(hits.length).toBeGreaterThan(0);
  expect(hits[0]!.content).toMatch(/rust/i);
  const withoutRust = hits.filter((h) => !/rust/i.test(h.content));
  expect(withoutRust.map((h) => `${h.step}: ${h.content.slice(0, 80)}`)).toEqual([]);
}, 600_000);
