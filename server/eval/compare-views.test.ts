/**
 * The compare page's data over a real database: runs of the tiny LoCoMo fixture (turn windows,
 * whole sessions, and a one-sentence gist per session that loses most turns; all BM25), charted
 * and compared question by question through tRPC.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPipeline } from "../services/pipelines";
import { signUp } from "../services/users";
import { QUESTION_OUTCOMES } from "./compare-kinds";
import { runEval } from "./service";
import { evalWorkspace, type EvalWorkspace } from "./testing/eval-workspace";
import { TWO_ALTITUDE_SPEC as SPEC } from "./testing/two-altitude-spec";

let ws: EvalWorkspace;
let windows: Awaited<ReturnType<typeof runEval>>;
let sessions: Awaited<ReturnType<typeof runEval>>;
let gist: Awaited<ReturnType<typeof runEval>>;


beforeAll(async () => {
  ws = await evalWorkspace("compare-views@example.com");
  windows = await runEval(ws.db, { workspaceId: ws.workspaceId, template: "bm25-windows", datasetId: ws.datasetId });
  sessions = await runEval(ws.db, { workspaceId: ws.workspaceId, template: "bm25-sessions", datasetId: ws.datasetId });
  await createPipeline(ws.db, ws.workspaceId, { name: "gist-memory", spec: SPEC });
  gist = await runEval(ws.db, { workspaceId: ws.workspaceId, pipeline: "gist-memory", datasetId: ws.datasetId, mode: "bm25", step: "gist" });
  expect([windows.status, sessions.status, gist.status]).toEqual(["completed", "completed", "completed"]);
}, 180_000);
afterAll(() => ws?.close());

describe("question by question", () => {
  it("puts every question of the pair in one outcome: the counts add up, and match the scores", async () => {
    const api = await ws.caller();
    const cases = await ws.db.evalCase.count({ where: { evalRunId: sessions.id } });
    expect(cases).toBe(9); // 8 scored in the headline, the adversarial one apart: still a question here
    const out = await api.evals.compareQuestions({ workspaceId: ws.workspaceId, baselineId: windows.id, otherId: gist.id, metric: "evidence_recall@2k" });
    expect(out.total).toBe(9);
    expect(QUESTION_OUTCOMES.reduce((n, k) => n + out.counts[k], 0)).toBe(9);
    expect(new Set(out.rows.map((r) => r.questionId)).size).toBe(9);
    for (const r of out.rows) {
      const right = (v: number | null) => (v ?? 0) >= 0.5;
      const expected = right(r.base) && !right(r.other) ? "regressed" : !right(r.base) && right(r.other) ? "improved" : right(r.base) ? "both_right" : "both_wrong";
      expect(r.outcome, r.question).toBe(expected);
    }
    // A one-sentence gist loses the gold turns turn windows find: regressions, and no improvement.
    expect(out.counts.regressed).toBeGreaterThan(0);
    expect(out.counts.improved).toBe(0);
    expect(out.rows[0]!.outcome).toBe("regressed");
    // The other way round, the same questions are improvements.
    const back = await api.evals.compareQuestions({ workspaceId: ws.workspaceId, baselineId: gist.id, otherId: windows.id, metric: "evidence_recall@2k" });
    expect(back.counts.improved).toBe(out.counts.regressed);
  }, 60_000);

  it("the two question counts agree: Question by question's scored + apart = all, scored = the leaderboard's count, with the reason (issue #48 item 4)", async () => {
    const api = await ws.caller();
    const out = await api.evals.compareQuestions({ workspaceId: ws.workspaceId, baselineId: windows.id, otherId: sessions.id, metric: "session_hit@5" });
    expect(out).toMatchObject({ total: 9, scored: 8, apart: 1, apartLabel: "adversarial" });
    expect(out.rows.filter((r) => r.apart).map((r) => r.category)).toEqual(["5"]);
    const board = await api.evals.leaderboard({ workspaceId: ws.workspaceId, runIds: [windows.id, sessions.id], baselineId: windows.id });
    expect(board.apartLabel).toBe("adversarial");
    for (const row of board.rows) expect(row).toMatchObject({ questions: out.scored, questionsApart: out.apart });
  }, 60_000);

  it("drills into one question: the gold evidence, each run's top hits, the evidence hits marked, on a record of the eval copy", async () => {
    const api = await ws.caller();
    const pepper = await ws.db.evalCase.findFirstOrThrow({ where: { evalRunId: windows.id, question: "What kind of dog is Pepper?" } });
    const q = await api.evals.question({ workspaceId: ws.workspaceId, runIds: [sessions.id, windows.id], questionId: pepper.questionId });
    expect(q.question).toBe("What kind of dog is Pepper?");
    expect(q.evidence.turns).toEqual(["D1:1"]);
    expect(q.runs.map((r) => r.runId)).toEqual([sessions.id, windows.id]);
    for (const run of q.runs) {
      expect(run.hits.length).toBeGreaterThan(0);
      expect(run.hits.length).toBeLessThanOrEqual(5);
      for (const h of run.hits) {
        expect(h.evidence).toBe(h.goldTurns.length > 0);
        // Each hit opens as a record of the run's eval copy (the record page's pipeline).
        const record = await ws.db.record.findFirst({ where: { id: h.id, workspaceId: ws.workspaceId } });
        expect(record?.pipelineId).toBe(run.recordPipelineId);
      }
    }
    const top = q.runs[1]!.hits[0]!;
    expect(top).toMatchObject({ evidence: true, goldTurns: ["D1:1"] });
    expect(top.preview).toContain("Pepper");
    await expect(api.evals.question({ workspaceId: ws.workspaceId, runIds: [windows.id], questionId: "no-such-question" })).rejects.toThrow(/not in these eval runs/);
  }, 60_000);

  it("refuses runs of another workspace as not found", async () => {
    const other = await signUp(ws.db, { email: "outsider@example.com", password: "correct-horse-battery" });
    const api = await ws.caller({ userId: other.user.id, email: "outsider@example.com" });
    const mine = { workspaceId: other.workspace.id };
    await expect(api.evals.compareQuestions({ ...mine, baselineId: sessions.id, otherId: windows.id })).rejects.toThrow(/not found/);
    await expect(api.evals.question({ ...mine, runIds: [sessions.id], questionId: "conv-b:q1" })).rejects.toThrow(/not found/);
    await expect(api.evals.compareCharts({ ...mine, baselineId: sessions.id, otherIds: [windows.id] })).rejects.toThrow(/not found/);
  }, 60_000);
});

describe("charts", () => {
  it("gives Pareto points, category deltas to the baseline, cost per step and history from the run rows", async () => {
    const api = await ws.caller();
    const charts = await api.evals.compareCharts({ workspaceId: ws.workspaceId, baselineId: sessions.id, otherIds: [windows.id], metric: "evidence_recall@2k", cost: "contextTokens" });
    expect(charts.runs.map((r) => r.label)).toEqual(["template: bm25-sessions", "template: bm25-windows"]);
    const points = new Map(charts.pareto.points.map((p) => [p.id, p]));
    expect(points.get(windows.id)!.cost).toBe((windows.metrics as Record<string, number>).context_tokens);
    expect(points.get(sessions.id)!.value).toBe((sessions.metrics as Record<string, number>)["evidence_recall@2k"]);
    expect(charts.pareto.frontier.length).toBeGreaterThan(0);
    // Whole sessions of the tiny fixture recall all evidence in fewer context tokens than windows: windows are dominated.
    expect(points.get(windows.id)!.cost).toBeGreaterThan(points.get(sessions.id)!.cost);
    expect(points.get(windows.id)!.value).toBeLessThanOrEqual(points.get(sessions.id)!.value);
    expect(points.get(windows.id)).toMatchObject({ dominated: true, dominatedBy: [sessions.id] });
    expect(charts.pareto.frontier).toEqual([sessions.id]);

    expect(charts.categories.categories.map((c) => c.key)).toEqual(["1", "2", "4", "5"]);
    expect(charts.categories.rows[0]!.cells.every((c) => c.delta === 0 || c.delta === null)).toBe(true);
    const perCategory = (r: typeof windows, k: string) => (r.perCategory as Record<string, Record<string, number>>)[k]!["evidence_recall@2k"]!;
    const cell = charts.categories.rows[1]!.cells.find((c) => c.category === "1")!;
    expect(cell.delta).toBeCloseTo(perCategory(windows, "1") - perCategory(sessions, "1"), 9);
    // Each cell of another run carries the leaderboard's kind of interval over that category's questions (issue #48 item 8).
    for (const c of charts.categories.rows[1]!.cells) {
      if (c.ci95) expect(c.withinNoise).toBe(c.ci95[0] <= 0 && c.ci95[1] >= 0);
      else expect(c.withinNoise).toBeNull();
    }
    expect(charts.categories.rows[1]!.cells.some((c) => c.ci95 !== null)).toBe(true);

    expect(charts.costPerStep.steps.sort()).toEqual(["chats", "windows"]);
    expect(charts.costPerStep.rows.find((r) => r.runId === windows.id)!.perStep.map((s) => s.step).sort()).toEqual(["chats", "windows"]);
    expect(charts.history.map((s) => s.label).sort()).toEqual(["template: bm25-sessions", "template: bm25-windows"]);

    // A second run of a template joins its history line, in time order.
    const again = await runEval(ws.db, { workspaceId: ws.workspaceId, template: "bm25-windows", datasetId: ws.datasetId });
    const later = await api.evals.compareCharts({ workspaceId: ws.workspaceId, baselineId: sessions.id, otherIds: [again.id], metric: "mrr", cost: "buildTokens" });
    const line = later.history.find((s) => s.label === "template: bm25-windows")!;
    expect(line.points.map((p) => p.runId)).toEqual([windows.id, again.id]);
  }, 120_000);

  it("refuses a run still in progress with a clear reason", async () => {
    await ws.db.evalRun.update({ where: { id: windows.id }, data: { status: "running" } });
    const api = await ws.caller();
    try {
      await expect(api.evals.compareCharts({ workspaceId: ws.workspaceId, baselineId: sessions.id, otherIds: [windows.id] })).rejects.toThrow(`Eval run ${windows.id} is running: only completed runs are charted.`);
      await expect(api.evals.compareQuestions({ workspaceId: ws.workspaceId, baselineId: sessions.id, otherId: windows.id })).rejects.toThrow(/is running/);
    } finally {
      await ws.db.evalRun.update({ where: { id: windows.id }, data: { status: "completed" } });
    }
  });
});
