/**
 * `synthex init --template synapsis --from <file>` and `synthex run`, offline, in this process on
 * an embedded database: the graph steps build entities (Mel merged into Melanie), beliefs (Boston
 * superseded by Seattle, both kept) and insights, searchable from the CLI; a second run makes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-synapsis-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

const line = (id: string, day: string, messages: Array<[string, string]>) =>
  JSON.stringify({ id, created_at: `${day}T10:00:00Z`, messages: messages.map(([role, content]) => ({ role, content })) });

describe("synthex init --template synapsis", () => {
  it("builds the entity graph offline end to end, incrementally", async () => {
    const file = path.join(dir, "sessions.jsonl");
    writeFileSync(
      file,
      [
        line("s1", "2023-05-08", [
          ["Caroline", "Hey Mel! How was the move?"],
          ["Melanie", "Great! I just moved to Boston with the kids."],
        ]),
        line("s2", "2023-08-14", [
          ["Melanie", "Big news: I moved to Seattle last week."],
          ["Caroline", "Wow Mel! I live in Denver. Actually I live in Austin."],
        ]),
      ].join("\n"),
    );
    const init = await synthex("init", "graph-cli", "--template", "synapsis", "--from", file);
    expect(init.err).toBe("");
    expect(init.out).toMatch(/Created pipeline "graph-cli" \(synapsis\)/);
    const run = await synthex("run", "--json");
    expect(run.code).toBe(0);
    const detail = JSON.parse(run.out) as { status: string; stats: { steps: Array<{ step: string; output: number; errors: number }> } };
    expect(detail.status).toBe("completed");
    for (const step of ["turns", "windows", "entities", "relations", "proactive"]) {
      expect(detail.stats.steps.find((s) => s.step === step)?.output, step).toBeGreaterThan(0);
    }

    const entity = await synthex("search", "Melanie", "--step", "entities", "--mode", "fts", "--json");
    const cards = (JSON.parse(entity.out) as { hits: Array<{ content: string }> }).hits.map((h) => h.content);
    expect(cards).toContain("Melanie (person). Also: Mel. Mentioned 4 times, 2023-05-08 – 2023-08-14.");

    const beliefs = await synthex("search", "lives in Boston Seattle", "--step", "relations", "--mode", "fts", "--json");
    const found = (JSON.parse(beliefs.out) as { hits: Array<{ content: string }> }).hits.map((h) => h.content);
    expect(found).toEqual(
      expect.arrayContaining([
        "Melanie — lives in — Boston (from 2023-05-08, superseded 2023-08-14): “I just moved to Boston with the kids.”",
        "Melanie — lives in — Seattle (from 2023-08-14): “Big news: I moved to Seattle last week.”",
      ]),
    );

    const again = await synthex("run", "--json");
    const second = JSON.parse(again.out) as { stats: { steps: Array<{ step: string; output: number }> } };
    expect(second.stats.steps.length).toBeGreaterThan(0);
    expect(second.stats.steps.map((s) => s.output)).toEqual(second.stats.steps.map(() => 0));
  }, 300_000);
});
