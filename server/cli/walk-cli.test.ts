/**
 * `synthex init --template pyramid`, run, and `synthex walk` in this process on an embedded
 * database: top-down retrieval from the synthesis to the observation and its source.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chatgptExportOf, runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-walk-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

describe("synthex walk", () => {
  it("walks a pyramid from the synthesis down to the observation that answers, with its source", async () => {
    const file = path.join(dir, "conversations.json");
    writeFileSync(
      file,
      JSON.stringify(
        chatgptExportOf([
          ["2024-03-01", "Cabin", "The spare key to the lighthouse cabin hangs behind the tide chart.", "Good spot; salt air rusts keys, so check it."],
          ["2024-03-09", "Garden", "I planted three rows of purple carrots by the greenhouse.", "Carrots like loose soil; thin them in a month."],
          ["2024-03-20", "Choir", "Our choir rehearses Fauré's Requiem every Thursday evening.", "The Pie Jesu is lovely; mind the breathing."],
        ]),
      ),
    );
    const init = await synthex("init", "pyramid-cli", "--template", "pyramid", "--from", file);
    expect(init.err).toBe("");
    expect((await synthex("run")).code).toBe(0);

    const walked = await synthex("walk", "Where is the spare key to the lighthouse cabin?", "--from", "synthesis", "--limit", "2", "--json");
    expect(walked.err).toBe("");
    const result = JSON.parse(walked.out) as { path: string[]; hits: Array<{ step: string; content: string; sources: Array<{ step: string; content: string }> }> };
    expect(result.path[0]).toBe("synthesis");
    expect(result.path.at(-1)).toBe("observations");
    expect(result.hits[0]!.step).toBe("observations");
    expect(result.hits[0]!.content).toMatch(/spare key to the lighthouse cabin/);
    expect(result.hits[0]!.sources.map((s) => s.step)).toEqual(["chats"]);

    const text = await synthex("walk", "spare key lighthouse cabin", "--from", "synthesis");
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^Walked synthesis → .* → observations for "spare key lighthouse cabin":/);
    expect(text.out).toMatch(/source chats \S+: .*lighthouse cabin/);

    const wrong = await synthex("walk", "key", "--from", "chats");
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/"chats" is a source/);
  }, 300_000);
});
