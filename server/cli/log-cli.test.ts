/**
 * `synthex log on|list|traffic|label` and `synthex replay --on <branch>` (issue 37), run as a
 * person would on the embedded database: the log is turned on, searches are logged, a replay on a
 * branch identical to main reports overlap 1 and a zero interval, a label starts a question set.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-log-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = path.resolve("e2e/fixtures/chatgpt-export.json");
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

describe("synthex log and replay", () => {
  it("on, search, list, traffic, replay on a branch, label", { timeout: 600_000 }, async () => {
    expect((await synthex("init", "memory", "--from", FIXTURE)).code).toBe(0);
    expect((await synthex("run")).code).toBe(0);
    expect((await synthex("log", "on", "--retention-days", "14")).out).toBe("Query log on: 14 days, at most 100,000 entries.");
    for (const q of ["lighthouse key", "spare key", "lighthouse key"]) expect((await synthex("search", q, "--mode", "fts")).code).toBe(0);
    const { settleQueryLog } = await import("../services/query-log");
    await settleQueryLog();

    const listed = JSON.parse((await synthex("log", "list", "--json")).out) as Array<{ id: string; kind: string; surface: string; query: string; hits: Array<{ id: string }> }>;
    expect(listed.map((e) => [e.kind, e.query])).toEqual([["search", "lighthouse key"], ["search", "spare key"], ["search", "lighthouse key"]]);
    const traffic = await synthex("log", "traffic");
    expect(traffic.out).toMatch(/^3 logged queries/);
    expect(traffic.out).toMatch(/lighthouse key\s+│?\s*2/);

    expect((await synthex("branch", "create", "same")).code).toBe(0);
    const replay = JSON.parse((await synthex("replay", "--on", "same", "--json")).out) as { summary: { replayed: number; meanOverlap: number; latencyDiff: unknown } };
    expect(replay.summary).toMatchObject({ replayed: 3, meanOverlap: 1 });
    const replayed = (await synthex("replay", "--on", "same")).out;
    expect(replayed).toMatch(/3 queries replayed on same vs main: overlap@k 1\.000, RBO 1\.000, 0 gained, 0 lost\./);
    // No judge model: the preference is said to be not measured, with no number.
    expect(replayed).toMatch(/^Preference: not measured: no judge model was given/m);

    const first = listed.find((e) => e.hits.length)!;
    const labelled = await synthex("log", "label", first.id, first.hits[0]!.id, "--set", "traffic-labels");
    expect(labelled.out).toBe('Added to question set "traffic-labels" (1 question): score it with synthex eval traffic-labels.');
  });
});
