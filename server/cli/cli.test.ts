import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pipelineFromToml } from "../pipeline/toml";
import { chatgptExport, runCliInProcess } from "./cli-fixtures";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function synthex(...args: string[]) {
  const result = spawnSync(process.execPath, [path.resolve("bin/synthex.mjs"), ...args], {
    cwd: process.cwd(),
    env: { ...process.env, SYNTHEX_DATA_DIR: path.join(dir, "data"), DATABASE_URL: "" },
    encoding: "utf8",
    // Each process starts tsx and opens the embedded database: minutes on a loaded machine.
    timeout: 300_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** The same program in this process, on the data directory the spawned commands used (they have exited). */
const synthexHere = (...args: string[]) => runCliInProcess(path.join(dir, "data"), ...args);

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
  }, 1_800_000); // six CLI processes, each starting tsx and the embedded database

  it("status, plan, runs, get, lineage, stats, pipelines and export --toml on what the hello world made", async () => {
    const status = await synthexHere("status");
    expect(status.err).toBe("");
    expect(status.out).toMatch(/Pipeline personal-memory · branch main · last run: completed/);
    const statusJson = JSON.parse((await synthexHere("status", "--json")).out) as { steps: Array<{ name: string; records: number; stale: number }> };
    const counts = Object.fromEntries(statusJson.steps.map((s) => [s.name, s.records]));
    expect(counts.chats).toBe(3);
    expect(counts.summaries).toBe(3);
    expect(statusJson.steps.every((s) => s.stale === 0)).toBe(true);

    // Nothing pending after the run; a full rebuild plans every item, with tokens, at the offline price.
    const plan = await synthexHere("plan");
    expect(plan.code).toBe(0);
    expect(plan.err).toBe("");
    expect(plan.out).toMatch(/summaries\s+transform\s+0 of 3/);
    expect(plan.out).toMatch(/Estimated: 0 item\(s\), 0 tokens, \$0\.0000\./);
    const full = JSON.parse((await synthexHere("plan", "--full", "--json")).out) as {
      steps: Array<{ step: string; pending: number; usesModel: boolean; estimatedTokensIn: number; estimatedCostUsd: number }>;
      totals: { pending: number; estimatedCostUsd: number };
    };
    const summaries = full.steps.find((s) => s.step === "summaries")!;
    expect(summaries).toMatchObject({ usesModel: true, estimatedCostUsd: 0 });
    // A full plan counts the step's own items plus what its rebuilt upstream may add (an upper bound).
    expect(summaries.pending).toBeGreaterThanOrEqual(3);
    expect(summaries.estimatedTokensIn).toBeGreaterThan(0);
    expect(full.totals.pending).toBeGreaterThanOrEqual(3);
    expect((await synthexHere("plan", "--full")).out).toMatch(/summaries\s+transform\s+≤?[\d,]+ of [\d,]+\s+[\d,]+\s+[1-9][\d,]*\s/);

    // Runs: the list, then one run's per-step numbers.
    const runs = JSON.parse((await synthexHere("runs", "--json")).out) as Array<{ id: string; status: string }>;
    expect(runs.map((r) => r.status)).toEqual(["completed", "completed"]);
    const firstRun = runs.at(-1)!;
    const detail = await synthexHere("runs", firstRun.id);
    expect(detail.out).toMatch(new RegExp(`Run ${firstRun.id} on main: completed`));
    expect(detail.out).toMatch(/summaries\s+3\s+3\s+0\s+0/);

    // A summary's record and its lineage down to the chat it came from.
    const hits = JSON.parse((await synthexHere("search", "zebra-striped kayak", "--step", "summaries", "--mode", "fts", "--json")).out).hits as Array<{ id: string }>;
    const id = hits[0]!.id;
    const record = await synthexHere("get", id);
    expect(record.out.split("\n")[0]).toMatch(new RegExp(`^summaries · ${id}`));
    expect(record.out).toContain("zebra-striped kayak");
    const lineage = await synthexHere("lineage", id);
    const lines = lineage.out.split("\n");
    expect(lines[0]).toMatch(new RegExp(`^summaries ${id}`));
    expect(lines.some((l) => /^ {2}└ transcripts /.test(l))).toBe(true);
    expect(lines.some((l) => /^ {4}└ chats .*zebra-striped kayak/.test(l))).toBe(true);

    const stats = await synthexHere("stats");
    expect(stats.out).toMatch(/summaries\s+3/);
    expect((await synthexHere("pipelines")).out).toMatch(/\*\s+personal-memory/);

    // export --toml round-trips to the same spec the server holds.
    const toml = await synthexHere("export", "--toml");
    expect(toml.out).toMatch(/^# Synthex pipeline spec/);
    const specJson = JSON.parse((await synthexHere("export", "--spec-json")).out);
    expect(pipelineFromToml(toml.out).spec).toEqual(specJson);
    expect(pipelineFromToml(toml.out).meta.name).toBe("personal-memory");
  }, 600_000);

  it("explains what to do when no pipeline is selected or a file is missing", { timeout: 600_000 }, () => {
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
