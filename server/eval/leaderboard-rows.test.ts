import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../generated/prisma/client";
import type { Db } from "../core/db";
import { createPipeline, saveVersion } from "../services/pipelines";
import { signUp } from "../services/users";
import { defaultChatMemorySpec } from "../pipeline/templates";
import { OfflineModel } from "../llm/offline-model";
import { parseAggregates } from "./aggregates";
import { forgetComputedIntervals } from "./leaderboard-rows";
import { leaderboardCsv, leaderboardMarkdown } from "./leaderboard-export";
import { createEvalRun, endEvalRun, runEval } from "./service";
import { evalWorkspace, type EvalWorkspace } from "./testing/eval-workspace";

let ws: EvalWorkspace;
let db: Db;
let sessions: Awaited<ReturnType<typeof runEval>>;
let windows: Awaited<ReturnType<typeof runEval>>;
let main: Awaited<ReturnType<typeof runEval>>;
let failedId: string;

beforeAll(async () => {
  ws = await evalWorkspace("board@example.com");
  db = ws.db;
  const { datasetId, workspaceId } = ws;
  sessions = await runEval(db, { workspaceId, template: "bm25-sessions", datasetId });
  windows = await runEval(db, { workspaceId, template: "bm25-windows", datasetId });
  await createPipeline(db, workspaceId, { name: "team", spec: defaultChatMemorySpec("chatgpt-export") });
  main = await runEval(db, { workspaceId, pipeline: "team", datasetId, mode: "fts", step: "transcripts" }, { model: new OfflineModel() });
  const doomed = await createEvalRun(db, { workspaceId, template: "rag-baseline", datasetId });
  failedId = (await endEvalRun(db, doomed.id, null, "failed", "Transaction API error: Unable to start a transaction in the given time.")).id;
}, 240_000);
afterAll(() => ws?.close());

describe("eval leaderboard", () => {
  it("stores each run's per-question vectors when it completes", async () => {
    expect([sessions.status, windows.status, main.status]).toEqual(["completed", "completed", "completed"]);
    const agg = parseAggregates((await db.evalRun.findUniqueOrThrow({ where: { id: windows.id } })).aggregates)!;
    expect(agg.questionIds).toHaveLength(9);
    expect(agg.apart.filter(Boolean)).toHaveLength(1); // LoCoMo 5 scored apart
    const hit5 = agg.metrics["session_hit@5"]!.filter((_, i) => !agg.apart[i]) as number[];
    expect(hit5.reduce((a, b) => a + b, 0) / hit5.length).toBeCloseTo((windows.metrics as Record<string, number>)["session_hit@5"]!, 6);
  });

  it("pins the pipeline's main on top, gives each metric its delta and 95% interval, and keeps the failed run as a row with its reason", async () => {
    const api = await ws.caller();
    const board = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [sessions.id, windows.id, failedId, main.id] });
    expect(board.baselineId).toBe(main.id);
    expect(board.baselineRule.kind).toBe("main");
    expect(board.rows.map((r) => r.id)).toEqual([main.id, sessions.id, windows.id, failedId]);
    expect(board.rows[0]!.isBaseline).toBe(true);
    const base = main.metrics as Record<string, number>;
    for (const row of board.rows.slice(1, 3)) {
      const run = (row.id === sessions.id ? sessions : windows).metrics as Record<string, number>;
      for (const m of board.metrics) {
        const cell = row.metrics[m]!;
        expect(cell.value).toBe(run[m]);
        expect(cell.delta).toBeCloseTo(run[m]! - base[m]!, 10);
        expect(cell.ci95![0]).toBeLessThanOrEqual(cell.delta! + 1e-9);
        expect(cell.ci95![1]).toBeGreaterThanOrEqual(cell.delta! - 1e-9);
        expect(cell.withinNoise).toBe(cell.ci95![0] <= 0 && cell.ci95![1] >= 0);
      }
    }
    const failed = board.rows[3]!;
    expect(failed).toMatchObject({ status: "failed", error: expect.stringContaining("Unable to start a transaction"), buildCostUsd: null });
    expect(leaderboardMarkdown(board)).toContain("failed: Transaction API error");
    const csv = leaderboardCsv(board).trim().split("\n");
    expect(csv).toHaveLength(5);
    expect(csv[0]).toContain("session_hit@5_ci95_low");

    // A chosen baseline: the same run against itself has no delta; another workspace's id is not found.
    const chosen = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [main.id, windows.id], baselineId: sessions.id });
    expect(chosen.rows[0]!.id).toBe(sessions.id);
    expect(chosen.baselineRule.kind).toBe("chosen");
    // Templates only (no pipeline's main): the strongest by session_hit@5, not the newest.
    const templates = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [windows.id, sessions.id] });
    const hit5 = (r: typeof sessions) => (r.metrics as Record<string, number>)["session_hit@5"]!;
    expect(templates.baselineRule.kind).toBe("strongest");
    expect(templates.baselineId).toBe(hit5(sessions) > hit5(windows) ? sessions.id : windows.id);
    expect(chosen.rows[0]!.metrics["mrr"]!.delta).toBeNull();
    await expect(api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [sessions.id], baselineId: failedId })).rejects.toThrow(/is failed: pick a completed run/);
    // Someone else in the same database, asking their own workspace for this workspace's runs.
    const other = await signUp(db, { email: "other-board@example.com", password: "correct-horse-battery" });
    const stranger = await ws.caller({ userId: other.user.id, email: "other-board@example.com" });
    await expect(stranger.evals.leaderboard({ workspaceId: other.workspace.id, runIds: [sessions.id] })).rejects.toThrow(/not found in this workspace/);
    await expect(stranger.evals.leaderboard({ workspaceId: other.workspace.id, runIds: [main.id, windows.id], baselineId: sessions.id })).rejects.toThrow(/not found in this workspace/);
    await expect(stranger.evals.retry({ workspaceId: other.workspace.id, id: failedId })).rejects.toThrow(/not found/);
  });

  it("finds ended runs to add to a comparison by the words of their template, pipeline, branch or dataset, in this workspace only", async () => {
    const api = await ws.caller();
    const ids = async (query?: string) => (await api.evals.searchRuns({ workspaceId: ws.workspaceId, query })).map((r) => r.id);
    const queued = await createEvalRun(db, { workspaceId: ws.workspaceId, template: "bm25-windows", datasetId: ws.datasetId });
    try {
      // Newest first; the failed run is offered (it joins as a row with its reason), the queued one is not.
      expect(await ids()).toEqual([failedId, main.id, windows.id, sessions.id]);
      expect(await ids("bm25")).toEqual([windows.id, sessions.id]);
      expect(await ids("BM25 windows")).toEqual([windows.id]);
      expect(await ids("team main")).toEqual([main.id]);
      expect(await ids("tiny-locomo")).toEqual([failedId, main.id, windows.id, sessions.id]);
      expect(await ids("rag")).toEqual([failedId]);
      expect(await ids("nothing-like-this")).toEqual([]);
      const [row] = await api.evals.searchRuns({ workspaceId: ws.workspaceId, query: "team" });
      expect(row).toMatchObject({ id: main.id, label: "team@main", version: "v1", status: "completed", datasetName: "tiny-locomo.json" });
      const [failed] = await api.evals.searchRuns({ workspaceId: ws.workspaceId, query: "rag" });
      expect(failed!.error).toContain("Unable to start a transaction");
    } finally {
      await endEvalRun(db, queued.id, null, "cancelled", "test over");
    }
    // Another workspace finds none of these, whatever it searches.
    const other = await signUp(db, { email: "search-board@example.com", password: "correct-horse-battery" });
    const stranger = await ws.caller({ userId: other.user.id, email: "search-board@example.com" });
    for (const query of [undefined, "bm25", "team", sessions.id]) expect(await stranger.evals.searchRuns({ workspaceId: other.workspace.id, query })).toEqual([]);
  });

  it("labels a pipeline's run with the number of the version it scored (v1, v2 in the pipeline's history), not a spec hash", async () => {
    const team = await db.pipeline.findFirstOrThrow({ where: { workspaceId: ws.workspaceId, name: "team" } });
    await saveVersion(db, team.id, { spec: defaultChatMemorySpec("chatgpt-export"), message: "Second version" });
    const again = await runEval(db, { workspaceId: ws.workspaceId, pipeline: "team", datasetId: ws.datasetId, mode: "fts", step: "transcripts" }, { model: new OfflineModel() });
    expect(again.status, again.error ?? "").toBe("completed");
    const api = await ws.caller();
    const board = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [main.id, again.id, sessions.id], baselineId: main.id });
    const byId = new Map(board.rows.map((r) => [r.id, r]));
    expect([byId.get(main.id)!.version, byId.get(again.id)!.version, byId.get(sessions.id)!.version]).toEqual(["v1", "v2", null]);
    expect(byId.get(again.id)!.label).toBe("team@main");
    const md = leaderboardMarkdown(board);
    expect(md).toContain("| team@main v1 (baseline) |");
    expect(md).toContain("| team@main v2 |");
    expect(md).not.toContain(again.specHash.slice(0, 7));
    // The runs list and the compare view carry the same number.
    const listed = await api.evals.list({ workspaceId: ws.workspaceId });
    expect(listed.find((r) => r.id === again.id)!.version).toBe("v2");
    const cmp = await api.evals.compare({ workspaceId: ws.workspaceId, baselineId: main.id, otherIds: [again.id], questions: false });
    expect(cmp.runs.map((r) => r.version)).toEqual(["v1", "v2"]);
  });

  it("backfills the vectors of a run completed before they were stored, and reads the same leaderboard", async () => {
    const api = await ws.caller();
    const before = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [sessions.id, windows.id] });
    await db.evalRun.updateMany({ where: { id: { in: [sessions.id, windows.id] } }, data: { aggregates: Prisma.DbNull } });
    // Intervals already computed are served from memory without the vectors: a restarted server has none.
    const cached = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [sessions.id, windows.id] });
    expect(cached.rows.map((r) => r.metrics)).toEqual(before.rows.map((r) => r.metrics));
    forgetComputedIntervals();
    const after = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [sessions.id, windows.id] });
    expect(after.rows.map((r) => r.metrics)).toEqual(before.rows.map((r) => r.metrics));
    const stored = await db.evalRun.findMany({ where: { id: { in: [sessions.id, windows.id] } }, select: { aggregates: true } });
    expect(stored.every((r) => parseAggregates(r.aggregates)?.questionIds.length === 9)).toBe(true);
  });

  it("retries a failed run with its settings", async () => {
    const api = await ws.caller();
    const again = await api.evals.retry({ workspaceId: ws.workspaceId, id: failedId });
    expect(again).toMatchObject({ template: "rag-baseline", datasetId: ws.datasetId });
    expect(again.id).not.toBe(failedId);
    await expect(api.evals.retry({ workspaceId: ws.workspaceId, id: sessions.id })).rejects.toThrow(/only a failed or cancelled eval can be retried/);
    for (let i = 0; i < 240; i++) {
      const r = await api.evals.get({ workspaceId: ws.workspaceId, id: again.id });
      if (!["queued", "running"].includes(r.status)) break;
      await new Promise((res) => setTimeout(res, 250));
    }
  });
});
