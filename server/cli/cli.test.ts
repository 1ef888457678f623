import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function node(id: string, parent: string | null, children: string[], role: string | null, text: string | null, time: number) {
  return {
    id,
    parent,
    children,
    message: role
      ? { id, author: { role }, create_time: time, content: { content_type: "text", parts: [text] }, metadata: {}, recipient: "all" }
      : null,
  };
}

/** A small ChatGPT export: one conversation per (month, topic), one of them with a planted phrase. */
function chatgptExport() {
  const topics = [
    ["2024-01-10", "Rust lifetimes", "How do lifetimes work in Rust?", "Lifetimes tell the borrow checker how long references live."],
    ["2024-01-20", "Kayak trip", "I bought a zebra-striped kayak for the lake.", "A zebra-striped kayak sounds fun; remember a life vest."],
    ["2024-02-05", "Sourdough", "My sourdough starter smells like acetone.", "Feed the starter more often to fix the acetone smell."],
  ];
  return topics.map(([day, title, question, answer], i) => {
    const t = Date.parse(`${day}T12:00:00Z`) / 1000;
    return {
      id: `conv-${i}`,
      title,
      create_time: t,
      update_time: t + 60,
      current_node: `a${i}`,
      mapping: {
        [`root${i}`]: node(`root${i}`, null, [`q${i}`], null, null, t),
        [`q${i}`]: node(`q${i}`, `root${i}`, [`a${i}`], "user", question!, t),
        [`a${i}`]: node(`a${i}`, `q${i}`, [], "assistant", answer!, t + 30),
      },
    };
  });
}

function synthex(...args: string[]) {
  const result = spawnSync(process.execPath, [path.resolve("bin/synthex.mjs"), ...args], {
    cwd: process.cwd(),
    env: { ...process.env, SYNTHEX_DATA_DIR: path.join(dir, "data"), DATABASE_URL: "" },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe("the hello world, end to end through the CLI", () => {
  it("init --from an export, run, search at summaries and --exact in the transcript", () => {
    const file = path.join(dir, "conversations.json");
    writeFileSync(file, JSON.stringify(chatgptExport()));

    const init = synthex("init", "personal-memory", "--from", file);
    expect(init.err).toBe("");
    expect(init.code).toBe(0);
    expect(init.out).toMatch(/Created pipeline "personal-memory"/);
    expect(init.out).toMatch(/3 new/);

    const run = synthex("run");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/: completed\. /);
    // Post-run indexing finished before the CLI closed the database.
    expect(run.err).not.toMatch(/Cannot use a pool|afterRun/);

    // So semantic search, which needs the embeddings that indexing wrote, answers right away.
    const semantic = synthex("search", "zebra striped kayak on the lake", "--mode", "semantic", "--json");
    expect(semantic.code).toBe(0);
    const semHits = JSON.parse(semantic.out).hits as Array<{ content: string; score: { semantic: number | null } }>;
    expect(semHits.length).toBeGreaterThan(0);
    expect(semHits[0]!.content).toContain("kayak");
    expect(semHits[0]!.score.semantic).toBeGreaterThan(0);

    const atSummaries = synthex("search", "zebra-striped kayak", "--step", "summaries", "--mode", "fts", "--json");
    expect(atSummaries.code).toBe(0);
    const hits = JSON.parse(atSummaries.out).hits as Array<{ step: string; content: string }>;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]!.step).toBe("summaries");
    expect(hits[0]!.content).toContain("zebra-striped kayak");
    expect(hits.some((h) => h.content.includes("sourdough"))).toBe(false);

    const exact = synthex("search", "zebra-striped kayak", "--exact", "--json");
    const exactHits = JSON.parse(exact.out).hits as Array<{ step: string; content: string }>;
    expect(exactHits.map((h) => h.step)).toEqual(["chats"]);
    expect(exactHits[0]!.content).toContain("I bought a zebra-striped kayak for the lake.");

    // Idempotent import, and the run after it has nothing to do.
    const again = synthex("import", file);
    expect(again.out).toMatch(/0 new/);
    const noop = synthex("run", "--json");
    const steps = JSON.parse(noop.out).stats.steps as Array<{ output: number }>;
    expect(steps.every((s) => s.output === 0)).toBe(true);
  }, 300_000);

  it("explains what to do when no pipeline is selected or a file is missing", () => {
    const other = mkdtempSync(path.join(tmpdir(), "synthex-cli-empty-"));
    const result = spawnSync(process.execPath, [path.resolve("bin/synthex.mjs"), "status"], {
      env: { ...process.env, SYNTHEX_DATA_DIR: other, DATABASE_URL: "" },
      encoding: "utf8",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/synthex init/);
    const missing = synthex("import", path.join(dir, "nope.json"));
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/File not found/);
    rmSync(other, { recursive: true, force: true });
  });
});
