import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { ModelProvider, ModelRequest } from "../engine/model";
import { OfflineModel } from "../llm/offline-model";
import { Pipeline } from "../pipeline/sdk";
import { defaultChatMemorySpec } from "../pipeline/templates";
import type { Db } from "../core/db";
import { appendSourceRecords, createPipeline, listPipelines, saveVersion } from "../services/pipelines";
import { createBranch } from "../services/branches";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { compareEvalRuns } from "./compare";
import { importDataset } from "./dataset-store";
import { getEvalCase, listEvalRuns } from "./run-reads";
import { createEvalRun, executeEvalRun, runEval } from "./service";
import type { StoredHit } from "./stored";
import { evalWorkspace } from "./testing/eval-workspace";

/** The offline model, counting calls: proves what an incremental eval computes. */
class CountingModel implements ModelProvider {
  calls = 0;
  private readonly inner = new OfflineModel();
  complete(request: ModelRequest) {
    this.calls++;
    return this.inner.complete(request);
  }
}

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let userId: string;
let datasetId: string;
let text: string;

beforeAll(async () => {
  ({ db, close, workspaceId, userId, datasetId, text } = await evalWorkspace("evals@example.com"));
}, 180_000);
afterAll(() => close?.());

describe("eval runs", () => {
  it("imports a benchmark once (content-addressed) with its counted skips", async () => {
    const again = await importDataset(db, workspaceId, { benchmark: "locomo", text, name: "renamed.json" });
    expect(again.id).toBe(datasetId);
    expect(again.questions).toBe(9);
    expect((again.skips as Array<{ dropped: boolean }>).filter((s) => s.dropped)).toHaveLength(3);
  });

  it("scores a template through provenance; a second eval of the unchanged spec makes 0 model calls", async () => {
    const model = new CountingModel();
    const first = await runEval(db, { workspaceId, template: "chat-memory", datasetId }, { model });
    expect(first.status).toBe("completed");
    expect(model.calls).toBeGreaterThan(0);
    expect(first.questions).toBe(8); // 9 loaded, the adversarial one apart
    const metrics = first.metrics as Record<string, number>;
    for (const name of ["session_hit@1", "session_hit@3", "session_hit@5", "session_recall@5", "evidence_recall@10", "evidence_recall@2k", "context_tokens", "precision@5", "mrr", "provenance_completeness"]) {
      expect(metrics[name], name).toBeTypeOf("number");
    }
    expect(metrics.provenance_completeness).toBe(1);
    expect(Object.keys(first.perCategory as object).sort()).toEqual(["1", "2", "4", "5"]);
    const records = await db.record.count({ where: { pipelineId: first.evalPipelineId } });

    const before = model.calls;
    const second = await runEval(db, { workspaceId, template: "chat-memory", datasetId }, { model });
    expect(second.status).toBe("completed");
    expect(model.calls - before).toBe(0);
    expect((second.cost as { thisRun: { modelCalls: number } }).thisRun.modelCalls).toBe(0);
    expect(await db.record.count({ where: { pipelineId: second.evalPipelineId } })).toBe(records);
    expect(second.evalPipelineId).toBe(first.evalPipelineId);
    expect(second.metrics).toEqual(first.metrics);
    // The build cost is what the memory cost to build, whoever built it.
    expect((second.cost as { buildTokens: number }).buildTokens).toBe((first.cost as { buildTokens: number }).buildTokens);
    expect((first.cost as { buildTokens: number }).buildTokens).toBeGreaterThan(0);
  }, 120_000);

  it("searches each question within its own sample and traces hits to sessions and turns", async () => {
    const run = await runEval(db, { workspaceId, template: "bm25-windows", datasetId });
    expect(run.status).toBe("completed");
    const cases = await db.evalCase.findMany({ where: { evalRunId: run.id }, orderBy: { position: "asc" } });
    const pepper = cases.find((c) => c.question === "What kind of dog is Pepper?")!;
    const retrieved = pepper.retrieved as unknown as StoredHit[];
    expect(retrieved.length).toBeGreaterThan(0);
    expect(retrieved.every((h) => !h.preview.includes("Biscuit"))).toBe(true); // conv-a is another scope
    expect(retrieved[0]!.preview).toContain("Pepper");
    expect(retrieved[0]!.goldTurns).toEqual(["D1:1"]);
    expect(retrieved[0]!.reachesSource).toBe(true);
    const puppy = cases.find((c) => c.question === "What is the name of Ann's puppy?")!;
    expect((puppy.scores as Record<string, number>)["session_hit@1"]).toBe(1);
    expect(puppy.answer).toContain("Biscuit");
    const detail = await getEvalCase(db, workspaceId, puppy.id);
    expect(detail.evalPipelineId).toBe(run.evalPipelineId);
    // The record can be opened and traced like any other record of the workspace.
    const lineage = await createCaller(await createContext({ db, session: { userId, email: "evals@example.com" } })).record.lineage({ workspaceId, id: detail.retrieved[0]!.id });
    expect(lineage.nodes.map((n) => n.step).sort()).toEqual(["chats", "windows"]);
  }, 60_000);

  it("traces a fact that rewrites its turn (first person resolved) to that turn, not its whole session", async () => {
    const run = await runEval(db, { workspaceId, template: "mem0", datasetId });
    expect(run.status).toBe("completed");
    const cases = await db.evalCase.findMany({ where: { evalRunId: run.id }, orderBy: { position: "asc" } });
    const pepper = cases.find((c) => c.question === "What kind of dog is Pepper?")!;
    const top = (pepper.retrieved as unknown as StoredHit[])[0]!;
    expect(top.preview).toContain("Cleo's dog Pepper, a grey whippet");
    expect(top.goldTurns).toEqual(["D1:1"]);
    expect(top.turns).toBe(1);
  }, 60_000);

  it("scores a team pipeline's branches on an isolated copy, and compares them regressions first", async () => {
    const spec = defaultChatMemorySpec("chatgpt-export");
    const { pipeline } = await createPipeline(db, workspaceId, { name: "team-memory", spec });
    await appendSourceRecords(db, pipeline.id, "chats", [{ externalId: "own-1", content: "# Own chat\n\nUser: my own memory" }]);
    await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model: new OfflineModel() });
    const ownRecords = await db.record.count({ where: { pipelineId: pipeline.id } });

    // A branch that searches whole sessions only (a worse architecture for turn evidence).
    await createBranch(db, pipeline.id, { name: "raw-only", from: "main" });
    const rawOnly = Pipeline.fromSpec(spec).remove("search").output("search", { from: "chats", surface: "search" }).toSpec();
    await saveVersion(db, pipeline.id, { spec: rawOnly, branch: "raw-only" });

    const main = await runEval(db, { workspaceId, pipeline: "team-memory", datasetId, mode: "fts", step: "transcripts" });
    const raw = await runEval(db, { workspaceId, pipeline: "team-memory", branch: "raw-only", datasetId, mode: "bm25", step: "chats" });
    expect([main.status, raw.status]).toEqual(["completed", "completed"]);
    expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(ownRecords);
    expect((await listPipelines(db, workspaceId)).map((p) => p.name)).toEqual(["team-memory"]);
    expect(main.evalPipelineId).toBe(raw.evalPipelineId); // one copy, two branches

    const cmp = await compareEvalRuns(db, workspaceId, raw.id, [main.id]);
    expect(cmp.runs.map((r) => r.label)).toEqual(["team-memory@raw-only", "team-memory@main"]);
    const statuses = cmp.questions.map((q) => q.status);
    expect([...statuses].sort((a, b) => ["regressed", "improved", "same"].indexOf(a) - ["regressed", "improved", "same"].indexOf(b))).toEqual(statuses);
    for (const q of cmp.questions.filter((x) => x.status === "regressed")) {
      expect(q.runs[raw.id]!.scores["session_hit@5"]).toBeGreaterThan(q.runs[main.id]!.scores["session_hit@5"] ?? 0);
    }
    // Runs of more cases than one page (200) are compared whole, in position order, with the first hits of each.
    const many = async (from: typeof main) => {
      const row = await db.evalRun.findUniqueOrThrow({ where: { id: from.id }, omit: { id: true, createdAt: true, aggregates: true } });
      const copy = await db.evalRun.create({ data: { ...row, judge: row.judge ?? {}, progress: row.progress ?? {}, metrics: row.metrics ?? {}, perCategory: row.perCategory ?? {}, cost: row.cost ?? {}, latency: row.latency ?? {}, skips: row.skips ?? [] } });
      const cases = await db.evalCase.findMany({ where: { evalRunId: from.id }, orderBy: { position: "asc" }, omit: { id: true, evalRunId: true } });
      const data = Array.from({ length: 450 }, (_, p) => {
        const c = cases[p % cases.length]!;
        return { ...c, evidence: c.evidence ?? [], scores: c.scores ?? {}, retrieved: c.retrieved ?? [], evalRunId: copy.id, position: p, questionId: `q${p}` };
      });
      await db.evalCase.createMany({ data });
      return copy.id;
    };
    const [bigA, bigB] = [await many(raw), await many(main)];
    const big = await compareEvalRuns(db, workspaceId, bigA, [bigB]);
    expect(big.questions).toHaveLength(450);
    expect(big.questions.filter((q) => q.status === "same").map((q) => q.questionId)).toEqual(
      Array.from({ length: 450 }, (_, p) => `q${p}`).filter((id) => big.questions.find((q) => q.questionId === id)!.status === "same"),
    );
    expect(big.questions.every((q) => q.runs[bigA] && q.runs[bigB] && q.runs[bigA]!.retrieved.length <= 10)).toBe(true);
    await db.evalRun.deleteMany({ where: { id: { in: [bigA, bigB] } } });
    expect(cmp.runs[1]!.deltas["session_hit@5"]).toBeCloseTo((main.metrics as Record<string, number>)["session_hit@5"]! - (raw.metrics as Record<string, number>)["session_hit@5"]!);
    expect((await listEvalRuns(db, workspaceId, { pipelineId: pipeline.id })).map((r) => r.id).sort()).toEqual([main.id, raw.id].sort());
    // The Evals tab's one polled list: the pipeline's runs and the template runs on its datasets.
    const templateRuns = await db.evalRun.findMany({ where: { workspaceId, template: { not: null }, datasetId }, select: { id: true } });
    expect(templateRuns.length).toBeGreaterThan(0);
    const tab = await listEvalRuns(db, workspaceId, { pipelineId: pipeline.id, withTemplates: true });
    expect(tab.map((r) => r.id).sort()).toEqual([main.id, raw.id, ...templateRuns.map((r) => r.id)].sort());
  }, 120_000);

  it("scores SynthexBench: freshness and temporal accuracy, per kind of question", async () => {
    const ds = await importDataset(db, workspaceId, { benchmark: "synthexbench", seed: 2, size: "tiny" });
    const run = await runEval(db, { workspaceId, template: "bm25-windows", datasetId: ds.id });
    expect(run.status).toBe("completed");
    expect(Object.keys(run.perCategory as object).sort()).toEqual(["emergent", "freshness", "planted", "temporal"]);
    const metrics = run.metrics as Record<string, number>;
    expect(metrics.freshness).toBeGreaterThanOrEqual(0);
    expect(metrics.temporal_accuracy).toBeGreaterThanOrEqual(0);
    // Planted facts are verbatim in one turn: BM25 over windows finds the session.
    expect((run.perCategory as Record<string, Record<string, number>>).planted!["session_hit@5"]).toBe(1);
    // A template run on a dataset the team pipeline was never scored on is not a row of its tab.
    const team = await db.pipeline.findFirstOrThrow({ where: { workspaceId, name: "team-memory" } });
    expect((await listEvalRuns(db, workspaceId, { pipelineId: team.id, withTemplates: true })).map((r) => r.id)).not.toContain(run.id);
  }, 60_000);

  it("a cancelled eval stores nothing and is never shown as finished", async () => {
    const run = await createEvalRun(db, { workspaceId, template: "bm25-sessions", datasetId });
    await db.evalRun.update({ where: { id: run.id }, data: { cancelRequested: true } });
    const ended = await executeEvalRun(db, run.id);
    expect(ended.status).toBe("cancelled");
    expect(ended.error).toMatch(/no results were stored/);
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(0);
    expect(ended.metrics).toEqual({});
  }, 60_000);

  it("an eval whose every search fails is stored as failed with the reason, not completed (issue #48 item 3)", async () => {
    const run = await createEvalRun(db, { workspaceId, template: "bm25-sessions", datasetId });
    // A bm25 eval without a step to rank: every question's search throws.
    await db.evalRun.update({ where: { id: run.id }, data: { mode: "bm25", step: null } });
    const ended = await executeEvalRun(db, run.id);
    expect(ended.status).toBe("failed");
    expect(ended.error).toBe("Every search failed (9 of 9 questions): nothing was scored. First error (question conv-a:q1): Mode bm25 ranks one step: this eval run has none.");
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(0);
  }, 60_000);

  it("refuses bad requests with what is wrong", async () => {
    await expect(createEvalRun(db, { workspaceId, datasetId })).rejects.toThrow(/either a pipeline or a template/);
    await expect(createEvalRun(db, { workspaceId, template: "nope", datasetId })).rejects.toThrow(/Unknown template "nope"/);
    await expect(createEvalRun(db, { workspaceId, template: "chat-memory", datasetId, step: "weekly" })).rejects.toThrow(/Unknown step "weekly"/);
    await expect(createEvalRun(db, { workspaceId, template: "chat-memory", datasetId, mode: "bm25" })).rejects.toThrow(/bm25 ranks one step/);
    await expect(createEvalRun(db, { workspaceId, template: "chat-memory", datasetId, k: 0 })).rejects.toThrow(/k must be between 1 and 100/);
    await expect(importDataset(db, workspaceId, { benchmark: "locomo", text: text.slice(0, 100), name: "cut.json" })).rejects.toThrow(/cut\.json: not valid JSON/);
  });

  it("checks permissions: a viewer reads evals but cannot start one; other workspaces see nothing", async () => {
    const viewer = await signUp(db, { email: "viewer@example.com", password: "correct-horse-battery" });
    await db.membership.create({ data: { workspaceId, userId: viewer.user.id, role: "viewer" } });
    const api = createCaller(await createContext({ db, session: { userId: viewer.user.id, email: "viewer@example.com" } }));
    expect((await api.evals.list({ workspaceId })).length).toBeGreaterThan(0);
    await expect(api.evals.start({ workspaceId, template: "bm25-sessions", datasetId, branch: "main" })).rejects.toThrow(/does not allow evals:write/);
    await expect(api.evals.list({ workspaceId: viewer.workspace.id })).resolves.toEqual([]);
    await expect(api.evals.get({ workspaceId: viewer.workspace.id, id: (await db.evalRun.findFirstOrThrow()).id })).rejects.toThrow(/not found/);
  });
});
