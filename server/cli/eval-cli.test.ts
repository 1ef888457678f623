import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { locomoFixture } from "../eval/testing/locomo-fixture";
import type { PipelineSpec } from "../pipeline/spec";
import { addToQuestionSet } from "../eval/question-sets";
import { EVAL_TEMPLATES } from "../eval/templates";
import { startMockOpenAIServer } from "../llm/testing/mock-openai-server";
import { OfflineModel } from "../llm/offline-model";
import { createBranch } from "../services/branches";
import { appendSourceRecords, getBranch, saveVersion } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { closeDb } from "../store/db";
import { openMigratedDb } from "../store/runtime-env";

const dir = mkdtempSync(path.join(tmpdir(), "synthex-eval-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function synthex(...args: string[]) {
  const result = spawnSync(process.execPath, [path.resolve("bin/synthex.mjs"), ...args], {
    cwd: process.cwd(),
    env: { ...process.env, SYNTHEX_DATA_DIR: path.join(dir, "data"), DATABASE_URL: "" },
    encoding: "utf8",
    timeout: 180_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe("synthex eval", () => {
  const file = path.join(dir, "tiny-locomo.json");
  writeFileSync(file, JSON.stringify(locomoFixture()));

  it("scores every template on a LoCoMo file: progress, metrics side by side with deltas, per category", () => {
    const human = synthex("eval", "locomo", "--data", file, "--template", "all");
    expect(human.err).toMatch(/Dataset tiny-locomo\.json: 2 samples, 9 questions \(3 skipped, 2 repaired while loading\)/);
    expect(human.err).toMatch(/bm25-sessions\s+completed · 8 questions/);
    expect(human.code).toBe(0);
    // Every template of the registry that can be scored, in gallery order.
    expect(human.out).toMatch(new RegExp(`metric\\s+${EVAL_TEMPLATES.join("\\s+")}\\s*\\n`));
    expect(human.out).toMatch(/session_hit@5\s+\d\.\d{3}\s+\d\.\d{3} \([+-]\d\.\d{3}\)/);
    // Model steps (offline) count tokens; the no-model baselines build for free.
    const tokens = human.out.match(/build tokens\s+(.+)/)![1]!.trim().split(/\s+/);
    expect(tokens).toHaveLength(EVAL_TEMPLATES.length);
    const builtBy = Object.fromEntries(EVAL_TEMPLATES.map((t, i) => [t, Number(tokens[i])]));
    expect(builtBy).toMatchObject({ "rag-baseline": 0, "bm25-sessions": 0, "bm25-windows": 0 });
    for (const t of ["chat-memory", "memex", "mem0"]) expect(builtBy[t], t).toBeGreaterThan(0);
    expect(human.out).toMatch(/1 multi-hop/);
    expect(human.out).toMatch(/5 adversarial \(apart\)/);
    expect(human.out).toMatch(/j not measured/);
  }, 300_000);

  it("scores the selected pipeline's branch (--json shape) and reports the latest runs", () => {
    expect(synthex("init", "team-memory", "--template", "rag-baseline").code).toBe(0);
    const json = synthex("eval", "locomo", "--data", file, "--json");
    expect(json.code).toBe(0);
    const result = JSON.parse(json.out);
    expect(result).toMatchObject({ benchmark: "locomo", pipeline: "team-memory", branch: "main", questions: 8, mode: "hybrid" });
    expect(Object.keys(result.metrics)).toEqual(expect.arrayContaining(["session_hit@1", "session_hit@3", "session_hit@5", "session_recall@5", "evidence_recall@10", "evidence_recall@2k", "context_tokens", "precision@5", "mrr", "provenance_completeness"]));
    expect(Object.keys(result.perCategory).sort()).toEqual(["1", "2", "4", "5"]);
    expect(result.cost.thisRun.modelCalls).toBe(0);
    expect(result.latency.p95).toBeGreaterThanOrEqual(result.latency.p50);

    const report = synthex("eval", "report", "--format", "md");
    expect(report.code).toBe(0);
    expect(report.out).toMatch(/\| eval \| benchmark \| mode \| session_hit@1/);
    expect(report.out).toMatch(/\| team-memory@main \| locomo \| hybrid \|/);
  }, 300_000);

  it("--compare scores a second branch beside the first: both columns with deltas, an array in --json", async () => {
    // A branch of team-memory (made above) with smaller chunks, saved through the pipeline service in
    // this process: the spawned commands have exited, so this process may own the embedded database.
    const saved = { dir: process.env.SYNTHEX_DATA_DIR, url: process.env.DATABASE_URL };
    process.env.SYNTHEX_DATA_DIR = path.join(dir, "data");
    process.env.DATABASE_URL = "";
    try {
      const db = await openMigratedDb();
      const pipeline = await db.pipeline.findFirstOrThrow({ where: { name: "team-memory", evalOfId: null } });
      await createBranch(db, pipeline.id, { name: "small-chunks", from: "main" });
      const spec = structuredClone((await getBranch(db, pipeline.id, "main")).spec) as PipelineSpec;
      const chunks = spec.steps.find((s) => s.name === "chunks")! as { operator?: { kind: string; size?: number } };
      chunks.operator = { kind: "chunk", size: 200 };
      await saveVersion(db, pipeline.id, { spec, branch: "small-chunks", message: "smaller chunks" });
      // The team's own memory and a question set about it (for `synthex eval <question-set>` below).
      await appendSourceRecords(db, pipeline.id, spec.sources[0]!.name, [
        { externalId: "own-1", content: "# Kayak\n\nUser: I paddled my zebra-striped kayak across Lake Orta." },
        { externalId: "own-2", content: "# Bread\n\nUser: My sourdough starter is called Bubbles." },
      ]);
      expect((await runPipeline(db, { workspaceId: pipeline.workspaceId, pipelineId: pipeline.id }, { model: new OfflineModel() })).status).toBe("completed");
      const kayak = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "chunks", content: { contains: "kayak" } } });
      await addToQuestionSet(db, pipeline.workspaceId, { set: "team-qs", question: "Where did I paddle my kayak?", answer: "Lake Orta", recordIds: [kayak.id] });
    } finally {
      await closeDb();
      process.env.SYNTHEX_DATA_DIR = saved.dir;
      process.env.DATABASE_URL = saved.url;
      if (saved.dir === undefined) delete process.env.SYNTHEX_DATA_DIR;
      if (saved.url === undefined) delete process.env.DATABASE_URL;
    }

    const human = synthex("eval", "locomo", "--data", file, "--mode", "fts", "--compare", "small-chunks");
    expect(human.code).toBe(0);
    expect(human.err).toMatch(/team-memory@small-chunks\s+completed · 8 questions/);
    expect(human.out).toMatch(/metric\s+team-memory@main\s+team-memory@small-chunks/);
    expect(human.out).toMatch(/context_tokens\s+\d+\s+\d+ \([+-]\d+\)/);
    expect(human.out).toMatch(/Per category · team-memory@small-chunks/);

    const json = synthex("eval", "locomo", "--data", file, "--mode", "fts", "--compare", "small-chunks", "--json");
    expect(json.code).toBe(0);
    const results = JSON.parse(json.out) as Array<{ pipeline: string; branch: string; questions: number; metrics: Record<string, number>; cost: { perStep: Array<{ step: string; records: number }> } }>;
    expect(results.map((r) => [r.pipeline, r.branch, r.questions])).toEqual([
      ["team-memory", "main", 8],
      ["team-memory", "small-chunks", 8],
    ]);
    // Each column is its own branch's memory: 200-character chunks make more chunk records than 1,200.
    const chunkRecords = results.map((r) => r.cost.perStep.find((s) => s.step === "chunks")!.records);
    expect(chunkRecords[1]).toBeGreaterThan(chunkRecords[0]!);

    // The same two runs as the leaderboard, with the interval of each delta.
    const ids = (JSON.parse(json.out) as Array<{ id: string }>).map((r) => r.id);
    const board = synthex("eval", "compare", ids[1]!, "--baseline", ids[0]!, "--json");
    expect(board.code).toBe(0);
    const parsed = JSON.parse(board.out) as { baselineId: string; runs: Array<{ id: string; baseline: boolean; metrics: Record<string, { value: number; delta: number | null; ci95: [number, number] | null }> }> };
    expect(parsed.baselineId).toBe(ids[0]);
    expect(parsed.runs.map((r) => [r.id, r.baseline])).toEqual([[ids[0], true], [ids[1], false]]);
    const hit5 = parsed.runs[1]!.metrics["session_hit@5"]!;
    expect(hit5.delta).toBeCloseTo(results[1]!.metrics["session_hit@5"]! - results[0]!.metrics["session_hit@5"]!, 10);
    expect(hit5.ci95![0]).toBeLessThanOrEqual(hit5.delta! + 1e-9);
    expect(hit5.ci95![1]).toBeGreaterThanOrEqual(hit5.delta! - 1e-9);
    const text = synthex("eval", "compare", ids[0]!, ids[1]!);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/team-memory@main \(baseline\)/);
    expect(text.out).toMatch(/team-memory@small-chunks\s+\S+\s+completed\s+8\s+\d\.\d{3}/);
  }, 600_000);

  it("scores a team's question set on the selected pipeline's own memory", () => {
    const json = synthex("eval", "team-qs", "--mode", "fts", "--json");
    expect(json.code).toBe(0);
    const result = JSON.parse(json.out);
    expect(result).toMatchObject({ benchmark: "question-set", pipeline: "team-memory", branch: "main", questions: 1, mode: "fts" });
    expect(result.metrics["session_hit@1"]).toBe(1);
    expect(result.metrics["evidence_recall@10"]).toBe(1);
    const human = synthex("eval", "team-qs", "--mode", "fts");
    expect(human.err).toMatch(/Question set team-qs: 1 questions, asked of the pipeline's own memory/);
    expect(human.out).toMatch(/metric\s+team-memory@main/);
    expect(synthex("eval", "team-qs", "--template", "all").err).toMatch(/score a pipeline \(--pipeline\), not templates/);
  }, 300_000);

  /** Without blocking this process: the mock model server it runs must answer the CLI. */
  function synthexAsync(env: Record<string, string>, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.resolve("bin/synthex.mjs"), ...args], {
        cwd: process.cwd(),
        env: { ...process.env, SYNTHEX_DATA_DIR: path.join(dir, "data"), DATABASE_URL: "", ...env },
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, out, err }));
    });
  }

  it("--answer-model: answers and the judge j through an OpenAI-compatible endpoint, within --budget", async () => {
    const mock = await startMockOpenAIServer({
      behave: (r) => ({ kind: "ok", content: r.text.includes("Gold answer:") ? (r.text.includes("Pepper") ? '{"label": "CORRECT"}' : "no idea") : "a grey whippet" }),
    });
    try {
      const env = { OPENAI_BASE_URL: mock.baseUrl, OPENAI_API_KEY: "sk-cli-test" };
      const human = await synthexAsync(env, "eval", "locomo", "--data", file, "--template", "bm25-sessions", "--answer-model", "openai/gpt-4o-mini", "--budget", "0.5");
      expect(human.code).toBe(0);
      expect(human.out).toMatch(/^j\s+\d\.\d{3}/m);
      expect(human.out).toMatch(/bm25-sessions: j measured on 1 questions by openai\/gpt-4o-mini \(answers by openai\/gpt-4o-mini\); 18 calls, \d+ tokens, \$0\.\d{4} of \$0\.5; not judged: 8 garbage judge replies\./);
      expect(mock.count("chat/completions")).toBe(18);
    } finally {
      await mock.close();
    }
  }, 300_000);

  it("says what is wrong with bad input", () => {
    const missing = synthex("eval", "locomo");
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/locomo needs its data file: pass --data <file>/);
    const cut = path.join(dir, "cut.json");
    writeFileSync(cut, JSON.stringify(locomoFixture()).slice(0, 200));
    const truncated = synthex("eval", "locomo", "--data", cut, "--template", "bm25-sessions");
    expect(truncated.code).toBe(1);
    expect(truncated.err).toMatch(/cut\.json: not valid JSON .*truncated/);
    const unknown = synthex("eval", "mmlu");
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/No question set "mmlu" in this workspace \(benchmarks: locomo, longmemeval, synthexbench\)/);
  }, 300_000);
});
