/**
 * "Try another architecture" on the command line (issue 50), as a team lead would type it, on the
 * embedded database: a mem0 pipeline with imported chats and logged searches → `branch create
 * --template synapsis` (binding and plan printed) → run it → a question set labelled from the log,
 * scored on both → `branch report` (human and --json) → `branch promote --keep-main` → search
 * answers from synapsis' records → `branch restore`. And the refusal of a bad --bind.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-migration-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = path.resolve("e2e/fixtures/chatgpt-export.json");
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);
const json = async <T,>(...args: string[]): Promise<T> => {
  const r = await synthex(...args, "--json");
  expect(r.err).toBe("");
  return JSON.parse(r.out) as T;
};
const steps = async (...args: string[]) => new Set((await json<{ hits: Array<{ step: string }> }>("search", "lighthouse key", "--mode", "fts", ...args)).hits.map((h) => h.step));

describe("synthex branch create --template, report, promote --keep-main, restore", () => {
  it("mem0 → synapsis on the team's own data and logged queries", { timeout: 300_000 }, async () => {
    expect((await synthex("init", "agent", "--template", "mem0", "--from", FIXTURE)).code).toBe(0);
    expect((await synthex("run")).code).toBe(0);
    expect((await synthex("log", "on")).code).toBe(0);
    for (const q of ["lighthouse key", "spare key", "winter readiness"]) expect((await synthex("search", q, "--mode", "fts")).code).toBe(0);
    const { settleQueryLog } = await import("../services/query-log");
    await settleQueryLog();

    const created = await synthex("branch", "create", "try-synapsis", "--template", "synapsis");
    expect(created.err).toBe("");
    const lines = created.out.split("\n");
    expect(lines[0]).toMatch(/^Created branch "try-synapsis" on template synapsis: sessions reads chats \(chatgpt-export\); [\d,]+ record\(s\) shared, nothing imported again\.$/);
    expect(lines).toContain("  sessions ← chats (chatgpt-export, matched by format)");
    expect(lines).toContain("Plan (model offline/extractive):");
    expect(created.out).toMatch(/^A run computes turns \(\d+\), windows/m);
    expect(lines.at(-1)).toBe("Next: synthex run --branch try-synapsis   ·   synthex branch report try-synapsis");
    expect((await json<{ status: string }>("run", "--branch", "try-synapsis")).status).toBe("completed");

    // A question set labelled from the log (on main's memory), scored on main and the candidate.
    const [entry] = await json<Array<{ id: string; query: string; hits: Array<{ id: string }> }>>("log", "list");
    expect((await synthex("log", "label", entry!.id, entry!.hits[0]!.id, "--set", "team")).code).toBe(0);
    expect((await synthex("eval", "team", "--compare", "try-synapsis")).code).toBe(0);

    const report = await json<{ metrics: Array<{ from: string; metric: string; ci95: unknown }>; replay: { replayed: number }; questionSet: { set: { name: string } } }>("branch", "report", "try-synapsis");
    expect(report.replay.replayed).toBe(3);
    expect(report.questionSet.set.name).toBe("team");
    expect(new Set(report.metrics.map((m) => m.from))).toEqual(new Set(["question-set", "replay"]));
    const human = (await synthex("branch", "report", "try-synapsis")).out;
    expect(human).toMatch(/^Migration report: try-synapsis against main\n/);
    expect(human).toMatch(/^from\s+metric\s+main\s+try-synapsis\s+delta\s+95% interval\s+n$/m);
    expect(human).toMatch(/^replay\s+latency_ms\s/m);
    expect(human).toMatch(/^Replay: 3 logged queries; latency p50\/p95 /m);
    expect(human).toMatch(/^Shadow traffic: not measured/m);

    const promoted = await synthex("branch", "promote", "try-synapsis", "--keep-main");
    expect(promoted.err).toBe("");
    expect(promoted.out).toMatch(/The previous main is kept as "previous\/try-synapsis": restore it in one action\.$/);
    expect([...(await steps())].every((s) => ["windows", "relations", "entities"].includes(s))).toBe(true);
    expect((await synthex("branch", "restore", "previous/try-synapsis")).out).toMatch(/^Restored main from "previous\/try-synapsis" \(version [0-9a-f]{8}\): [\d,]+ pointer\(s\) moved, nothing recomputed\.$/);
    expect((await steps()).has("memories")).toBe(true);

    const bad = await synthex("branch", "create", "try-memex", "--template", "memex", "--bind", "chats");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--bind "chats": use templateSource=pipelineSource, e\.g\. --bind sessions=chats\./);
  });
});
