/**
 * `synthex shadow on|report|off` (issue 37), run as a person would on the embedded database: a
 * branch identical to main shadows it, two searches on main are answered by the branch too, the
 * report says so (overlap 1), and after `off` a search is no longer copied. A bad `--until` is
 * refused naming the option.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-shadow-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = path.resolve("e2e/fixtures/chatgpt-export.json");
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

describe("synthex shadow", () => {
  it("on, searches on main, report, off", { timeout: 600_000 }, async () => {
    const { settleShadow } = await import("../services/shadow");
    expect((await synthex("init", "memory", "--from", FIXTURE)).code).toBe(0);
    expect((await synthex("run")).code).toBe(0);
    expect((await synthex("branch", "create", "same")).code).toBe(0);
    const bad = await synthex("shadow", "on", "--branch", "same", "--until", "next tuesday");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--until: not a date-time ("next tuesday")');

    expect((await synthex("shadow", "on", "--branch", "same", "--minutes", "30")).out).toMatch(/^Shadow traffic on same: running, .* UTC\. Report: synthex shadow report --branch same$/);
    for (const q of ["lighthouse key", "spare key"]) expect((await synthex("search", q, "--mode", "fts")).code).toBe(0);
    await settleShadow();
    const report = await synthex("shadow", "report", "--branch", "same");
    expect(report.out).toContain("Shadow of main on same: running");
    expect(report.out).toContain("2 answered, 0 failed, 0 dropped (queue full).");
    expect(report.out).toContain("Compared 2: overlap@k 1.000, RBO 1.000, 0 gained, 0 lost.");

    expect((await synthex("shadow", "off", "--branch", "same")).out).toBe("Shadow traffic on same stopped: 2 answered, 0 dropped.");
    expect((await synthex("search", "lighthouse key", "--mode", "fts")).code).toBe(0);
    await settleShadow();
    const json = JSON.parse((await synthex("shadow", "report", "--branch", "same", "--json")).out) as { shadow: { state: string; answered: number }; summary: { replayed: number } };
    expect(json).toMatchObject({ shadow: { state: "stopped", answered: 2 }, summary: { replayed: 2 } });
  });
});
