/**
 * The branching commands of docs/concepts.md, run as a person would, on the embedded database:
 * branch create/list/switch/diff/promote/delete, gc, apply (TOML and an SDK module), and
 * run/plan/search/get/stats/export honouring the selected branch and --branch.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-branch-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = path.resolve("e2e/fixtures/chatgpt-export.json");

/** The CLI in this process on a private data directory. */
const synthex = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

const json = async <T,>(...args: string[]): Promise<T> => {
  const r = await synthex(...args, "--json");
  expect(r.err).toBe("");
  return JSON.parse(r.out) as T;
};

type RunJson = { status: string; stats: { steps: Array<{ step: string; output: number; skipped: number; modelCalls: number }> } };

describe("synthex branch, apply and gc", () => {
  it("create, apply a prompt change, plan, switch, run, diff, promote, delete and gc", { timeout: 900_000 }, async () => {
    expect((await synthex("init", "memory", "--from", FIXTURE)).code).toBe(0);
    expect((await json<RunJson>("run")).status).toBe("completed");

    // Create: a pointer copy.
    const created = await synthex("branch", "create", "decisions", "-d", "summaries that list decisions");
    expect(created.err).toBe("");
    expect(created.out).toMatch(/^Created branch "decisions" from main: 0 records computed, [\d,]+ records shared with main\./);
    const list = await json<{ branches: Array<{ name: string; pointers: number }>; protectedMain: boolean }>("branch", "list");
    expect(list.branches.map((b) => b.name)).toEqual(["main", "decisions"]);
    expect(list.branches[1]!.pointers).toBe(list.branches[0]!.pointers);
    expect(list.protectedMain).toBe(true);
    expect((await synthex("branch", "list")).out).toMatch(/^\*\s+main/m);

    // Apply a TOML edit on the branch: the diff with reasons comes first, then the save.
    const tomlFile = path.join(dir, "pipeline.toml");
    const toml = (await synthex("export", "--toml")).out;
    expect(toml).toMatch(/name = "summaries"/);
    writeFileSync(tomlFile, toml.replace(/(name = "summaries"[\s\S]*?prompt = '''\n)/, "$1List the decisions first.\n"));
    const applied = await synthex("apply", tomlFile, "--branch", "decisions", "-m", "decisions first");
    expect(applied.err).toBe("");
    const lines = applied.out.split("\n");
    expect(lines[0]).toBe("CHANGED  summaries (template changed)");
    expect(applied.out).toMatch(/CHANGED  monthly \(upstream summaries changed\)/);
    expect(applied.out).toMatch(/Re-run: summaries, monthly, world-model/);
    expect(lines.at(-1)).toMatch(/^Saved version [0-9a-f]{8} on branch decisions\./);
    expect((await synthex("apply", tomlFile, "--branch", "decisions")).out).toBe("No changes: branch decisions already has this spec.");
    // Main is untouched.
    expect((await synthex("export", "--toml")).out).toBe(toml);
    expect((await synthex("export", "--toml", "--branch", "decisions")).out).toMatch(/List the decisions first\./);

    // Plan on the branch: summaries and downstream are pending, transcripts are reused; the cost vs main.
    const plan = await json<{ steps: Array<{ step: string; pending: number }>; costRatioVsMain: number | null }>("plan", "--branch", "decisions");
    const pending = Object.fromEntries(plan.steps.map((s) => [s.step, s.pending]));
    expect(pending.transcripts).toBe(0);
    expect(pending.summaries).toBe(5);
    expect(plan.costRatioVsMain).toBe(1); // offline model on both: same (zero) cost
    expect((await synthex("plan", "--branch", "decisions")).out).toMatch(/Full run vs main: 1\.00x\./);

    // Switch: run, stats, search and get follow the selected branch.
    expect((await synthex("branch", "switch", "decisions")).out).toMatch(/^Switched to branch decisions/);
    const run = await json<RunJson>("run");
    const steps = new Map(run.stats.steps.map((s) => [s.step, s]));
    expect(steps.get("transcripts")).toMatchObject({ output: 0, skipped: 5, modelCalls: 0 });
    expect(steps.get("summaries")).toMatchObject({ output: 5, modelCalls: 5 });
    const stats = await json<Array<{ name: string; records: number; stale: number }>>("stats");
    expect(stats.every((s) => s.stale === 0)).toBe(true);
    const hits = (await json<{ hits: Array<{ id: string; step: string }> }>("search", "lighthouse", "--step", "summaries", "--mode", "fts")).hits;
    expect(hits.length).toBeGreaterThan(0);
    const onBranch = hits[0]!.id;
    expect((await synthex("get", onBranch)).out).toMatch(new RegExp(`^summaries · ${onBranch}`));
    const mainHits = (await json<{ hits: Array<{ id: string }> }>("search", "lighthouse", "--step", "summaries", "--mode", "fts", "--branch", "main")).hits;
    expect(mainHits[0]!.id).not.toBe(onBranch);
    const wrongBranch = await synthex("get", mainHits[0]!.id);
    expect(wrongBranch.code).toBe(1);
    expect(wrongBranch.err).toMatch(/is not on branch "decisions"/);

    // Diff: reasons and counts per step, and a record pair side by side.
    const diff = await json<{ steps: Array<{ name: string; status: string; reasons: Array<{ kind: string }>; onlyA: number; onlyB: number; shared: number }> }>(
      "branch",
      "diff",
      "decisions",
    );
    const summaries = diff.steps.find((s) => s.name === "summaries")!;
    expect(summaries).toMatchObject({ status: "changed", reasons: [{ kind: "template" }], onlyA: 5, onlyB: 5, shared: 0 });
    expect(diff.steps.find((s) => s.name === "transcripts")).toMatchObject({ status: "unchanged", onlyA: 0, onlyB: 0, shared: 5 });
    const human = await synthex("branch", "diff", "decisions", "--step", "summaries", "--limit", "1");
    expect(human.out).toMatch(/^decisions \([0-9a-f]{8}\) against main/);
    expect(human.out).toMatch(/summaries\s+changed\s+template changed\s+5\s+5\s+0/);
    expect(human.out).toMatch(/--- main \(/);
    expect(human.out).toMatch(/\+\+\+ decisions \(/);

    // Bad input: clear errors, nothing changed.
    const dup = await synthex("branch", "create", "decisions");
    expect(dup.code).toBe(1);
    expect(dup.err).toMatch(/Branch "decisions" already exists/);
    const delMain = await synthex("branch", "delete", "main");
    expect(delMain.err).toMatch(/Main cannot be deleted/);
    const promoteMain = await synthex("branch", "promote", "main");
    expect(promoteMain.err).toMatch(/Cannot promote main into itself/);

    // Promote (the local user owns the workspace): main takes the branch's records.
    const promoted = await synthex("branch", "promote", "decisions", "-m", "decisions win");
    expect(promoted.err).toBe("");
    expect(promoted.out).toMatch(/Promoted "decisions" into main: summaries, monthly, world-model now show the branch's records/);
    const mainAfter = (await json<{ hits: Array<{ id: string }> }>("search", "lighthouse", "--step", "summaries", "--mode", "fts", "--branch", "main")).hits;
    expect(mainAfter[0]!.id).toBe(onBranch);
    expect((await synthex("export", "--toml", "--branch", "main")).out).toMatch(/List the decisions first\./);

    // An SDK module applied on a new branch.
    expect((await synthex("branch", "create", "sdk", "--from", "main")).code).toBe(0);
    const moduleFile = path.join(dir, "pipeline.ts");
    const exported = await json<{ steps: Array<{ name: string; prompt?: string }> }>("export", "--branch", "main");
    writeFileSync(
      moduleFile,
      [
        `import { Pipeline } from ${JSON.stringify(path.resolve("server/pipeline/sdk.ts"))};`,
        `const spec = ${JSON.stringify(exported)};`,
        `export default Pipeline.fromSpec(spec).update("summaries", { prompt: "Three bullet points:\\n{{ record.content }}" });`,
      ].join("\n"),
    );
    const sdk = await synthex("apply", moduleFile, "--branch", "sdk");
    expect(sdk.err).toBe("");
    expect(sdk.out.split("\n")[0]).toBe("CHANGED  summaries (template changed)");
    expect(readFileSync(moduleFile, "utf8")).toContain("Pipeline.fromSpec");

    // Delete, then gc: the dry run reports exactly what gc deletes.
    const deleted = await synthex("branch", "delete", "decisions");
    expect(deleted.out).toMatch(/^Deleted branch "decisions": [\d,]+ pointer\(s\) removed, no record deleted/);
    expect((await json<{ branches: Array<{ name: string }> }>("branch", "list")).branches.map((b) => b.name)).toEqual(["main", "sdk"]);
    const dry = await json<{ records: number; byStep: Record<string, number> }>("gc", "--dry-run");
    expect(dry.records).toBeGreaterThan(0); // main's pre-promotion summaries and what they made
    expect(dry.byStep.summaries).toBe(5);
    expect((await synthex("gc", "--dry-run")).out).toMatch(/^Dry run: [\d,]+ record\(s\) no branch uses/);
    const real = await json<{ deleted: number; records: number }>("gc");
    expect(real.deleted).toBe(dry.records);
    expect((await json<{ records: number }>("gc", "--dry-run")).records).toBe(0);

    // Main's protection is a setting of the pipeline (on for new ones).
    expect((await synthex("branch", "protect", "off")).out).toBe("main is not protected.");
    expect((await json<{ protectedMain: boolean }>("branch", "list")).protectedMain).toBe(false);
    expect((await synthex("branch", "protect", "on")).out).toBe("main is protected.");
  });
});
