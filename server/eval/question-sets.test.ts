import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { OfflineModel } from "../llm/offline-model";
import { ragBaselineSpec } from "../pipeline/templates";
import { createBranch } from "../services/branches";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { addToQuestionSet, getQuestionSet } from "./question-sets";
import { compareEvalRuns } from "./compare";
import { createEvalRun, runEval } from "./service";
import { evalWorkspace, type EvalWorkspace } from "./testing/eval-workspace";

let ws: EvalWorkspace;
let db: Db;
let workspaceId: string;
let pipelineId: string;
/** The chunk holding the kayak conversation, and the source record it comes from. */
let kayakChunk: string;
let kayakSource: string;

const CHATS = [
  { externalId: "c1", content: "# Kayak trip\n\nUser: I bought a zebra-striped kayak and paddled across Lake Orta on Sunday." },
  { externalId: "c2", content: "# Bread\n\nUser: My sourdough starter is called Bubbles and lives in the fridge." },
  { externalId: "c3", content: "# Guitar\n\nUser: I practice fingerstyle guitar every evening, mostly Bach." },
];

beforeAll(async () => {
  ws = await evalWorkspace("question-sets@example.com");
  ({ db, workspaceId } = ws);
  const { pipeline } = await createPipeline(db, workspaceId, { name: "own-memory", spec: ragBaselineSpec("markdown", { chunkSize: 300 }) });
  pipelineId = pipeline.id;
  await appendSourceRecords(db, pipelineId, "chats", CHATS);
  const run = await runPipeline(db, { workspaceId, pipelineId }, { model: new OfflineModel() });
  expect(run.status).toBe("completed");
  const chunk = await db.record.findFirstOrThrow({ where: { pipelineId, step: "chunks", content: { contains: "kayak" } } });
  kayakChunk = chunk.id;
  kayakSource = (await db.recordEdge.findFirstOrThrow({ where: { childId: chunk.id } })).parentId;
}, 180_000);
afterAll(() => ws?.close());

describe("a team's own question set", () => {
  it("'add to question set' creates the set, traces the picked record to its source, and merges a repeated question", async () => {
    const api = await ws.caller();
    const added = await api.evals.addToQuestionSet({ workspaceId, set: "team-qs", question: "Where did I paddle my kayak?", answer: "Lake Orta", recordIds: [kayakChunk] });
    expect(added.set).toMatchObject({ name: "team-qs", questions: 1 });
    expect(added.question).toMatchObject({ pipelineId, recordIds: [kayakChunk], sources: [kayakSource], answer: "Lake Orta" });
    const again = await api.evals.addToQuestionSet({ workspaceId, set: "team-qs", question: "where did I paddle my kayak?", recordIds: [kayakSource] });
    expect(again.merged).toBe(true);
    expect(again.set.questions).toBe(1);
    expect(again.question.recordIds).toEqual([kayakChunk, kayakSource]);
    const bread = await db.record.findFirstOrThrow({ where: { pipelineId, step: "chats", content: { contains: "sourdough" } } });
    await api.evals.addToQuestionSet({ workspaceId, set: "team-qs", question: "What is my sourdough starter called?", answer: "Bubbles", recordIds: [bread.id] });
    expect((await api.evals.questionSets({ workspaceId })).map((s) => [s.name, s.questions])).toEqual([["team-qs", 2]]);
  });

  it("scores the set on the pipeline's own memory (nothing built, nothing copied), with token F1 against the expected answers", async () => {
    const records = await db.record.count({ where: { workspaceId } });
    const run = await runEval(db, { workspaceId, pipeline: "own-memory", questionSet: "team-qs", mode: "fts" });
    expect(run.status).toBe("completed");
    expect(run).toMatchObject({ benchmark: "question-set", evalPipelineId: pipelineId, questions: 2 });
    expect(await db.record.count({ where: { workspaceId } })).toBe(records);
    const m = run.metrics as Record<string, number>;
    expect(m["session_hit@1"]).toBe(1);
    expect(m["evidence_recall@10"]).toBe(1);
    expect(m.provenance_completeness).toBe(1);
    expect(m.f1).toBeGreaterThan(0);
    expect(Object.keys(run.perCategory as object)).toEqual(["team"]);
    const cases = await db.evalCase.findMany({ where: { evalRunId: run.id }, orderBy: { position: "asc" } });
    expect(cases.map((c) => c.question)).toEqual(["Where did I paddle my kayak?", "What is my sourdough starter called?"]);
    expect((cases[0]!.retrieved as Array<{ id: string }>)[0]!.id).toBe(kayakChunk);
  }, 120_000);

  it("compares branches on the same set", async () => {
    await createBranch(db, pipelineId, { name: "sources-only", from: "main" });
    const main = await runEval(db, { workspaceId, pipeline: pipelineId, questionSet: "team-qs", mode: "bm25", step: "chunks" });
    const other = await runEval(db, { workspaceId, pipeline: pipelineId, branch: "sources-only", questionSet: "team-qs", mode: "bm25", step: "chats" });
    expect([main.status, other.status]).toEqual(["completed", "completed"]);
    const cmp = await compareEvalRuns(db, workspaceId, main.id, [other.id]);
    expect(cmp.questions).toHaveLength(2);
    // Whole conversations reach the picked source record but not the picked chunk.
    const kayak = cmp.questions.find((q) => q.question.includes("kayak"))!;
    expect(kayak.runs[main.id]!.scores["evidence_recall@10"]).toBe(1);
    expect(kayak.runs[other.id]!.scores["evidence_recall@10"]).toBe(0.5);
  }, 120_000);

  it("says what is wrong: unknown records, another workspace's records, a template, an unknown or empty set; viewers cannot add", async () => {
    const api = await ws.caller();
    await expect(api.evals.addToQuestionSet({ workspaceId, set: "team-qs", question: "x?", recordIds: ["nope"] })).rejects.toThrow(/Record nope not found/);
    await expect(api.evals.addToQuestionSet({ workspaceId, set: "bad name!", question: "x?", recordIds: [kayakChunk] })).rejects.toThrow(/letters, digits/);
    await expect(api.evals.addToQuestionSet({ workspaceId, set: "team-qs", question: "  ", recordIds: [kayakChunk] })).rejects.toThrow(/question is empty/);
    await expect(runEval(db, { workspaceId, template: "bm25-sessions", questionSet: "team-qs" })).rejects.toThrow(/name a pipeline, not a template/);
    await expect(runEval(db, { workspaceId, pipeline: pipelineId, questionSet: "nope" })).rejects.toThrow(/No question set "nope"/);
    await expect(runEval(db, { workspaceId, pipeline: pipelineId, questionSet: "team-qs", datasetId: ws.datasetId })).rejects.toThrow(/either a benchmark dataset or a question set/);

    const other = await signUp(db, { email: "other-qs@example.com", password: "correct-horse-battery" });
    await expect(addToQuestionSet(db, other.workspace.id, { set: "mine", question: "x?", recordIds: [kayakChunk] })).rejects.toThrow(/not found in this workspace/);
    await expect(getQuestionSet(db, other.workspace.id, "team-qs")).rejects.toThrow(/No question set/);

    const viewer = await signUp(db, { email: "viewer-qs@example.com", password: "correct-horse-battery" });
    await db.membership.create({ data: { workspaceId, userId: viewer.user.id, role: "viewer" } });
    const asViewer = await ws.caller({ userId: viewer.user.id, email: "viewer-qs@example.com" });
    expect((await asViewer.evals.questionSet({ workspaceId, id: "team-qs" })).questions).toHaveLength(2);
    await expect(asViewer.evals.addToQuestionSet({ workspaceId, set: "team-qs", question: "y?", recordIds: [kayakChunk] })).rejects.toThrow(/does not allow evals:write/);
  }, 60_000);

  it("manages sets over tRPC: rename (runs stay with the set), delete a question, delete a set (not while an eval of it runs); viewers cannot", async () => {
    const api = await ws.caller();
    const set = await api.evals.questionSet({ workspaceId, id: "team-qs" });
    const runsBefore = await db.evalRun.count({ where: { workspaceId, datasetId: set.id } });
    expect(runsBefore).toBeGreaterThan(0);

    await api.evals.addToQuestionSet({ workspaceId, set: "spare-qs", question: "What do I play every evening?", recordIds: [kayakChunk] });
    await expect(api.evals.renameQuestionSet({ workspaceId, setId: set.id, name: "spare-qs" })).rejects.toThrow(/A question set named "spare-qs" already exists/);
    await expect(api.evals.renameQuestionSet({ workspaceId, setId: set.id, name: "bad name!" })).rejects.toThrow(/letters, digits/);
    expect(await api.evals.renameQuestionSet({ workspaceId, setId: set.id, name: "hobbies-qs" })).toEqual({ id: set.id, name: "hobbies-qs", questions: 2 });
    await expect(api.evals.questionSet({ workspaceId, id: "team-qs" })).rejects.toThrow(/No question set "team-qs"/);
    expect((await api.evals.questionSet({ workspaceId, id: "hobbies-qs" })).id).toBe(set.id);
    // Its eval runs still point at it, and it is scored under its new name.
    expect(await db.evalRun.count({ where: { workspaceId, datasetId: set.id } })).toBe(runsBefore);
    const rescored = await runEval(db, { workspaceId, pipeline: pipelineId, questionSet: "hobbies-qs", mode: "fts" });
    expect(rescored.status).toBe("completed");

    const bread = set.questions.find((q) => q.question.includes("sourdough"))!;
    expect(await api.evals.removeFromQuestionSet({ workspaceId, setId: set.id, questionId: bread.id })).toEqual({ id: set.id, name: "hobbies-qs", questions: 1 });
    await expect(api.evals.removeFromQuestionSet({ workspaceId, setId: set.id, questionId: bread.id })).rejects.toThrow(/is not in "hobbies-qs"/);

    const viewer = await db.user.findUniqueOrThrow({ where: { email: "viewer-qs@example.com" } });
    const asViewer = await ws.caller({ userId: viewer.id, email: "viewer-qs@example.com" });
    await expect(asViewer.evals.renameQuestionSet({ workspaceId, setId: set.id, name: "mine" })).rejects.toThrow(/does not allow evals:write/);
    await expect(asViewer.evals.deleteQuestionSet({ workspaceId, setId: set.id })).rejects.toThrow(/does not allow evals:write/);

    // Not while an eval of the set is in progress.
    const queued = await createEvalRun(db, { workspaceId, pipeline: pipelineId, questionSet: "hobbies-qs", mode: "fts" });
    await expect(api.evals.deleteQuestionSet({ workspaceId, setId: set.id })).rejects.toThrow(/An eval of "hobbies-qs" is in progress/);
    await api.evals.cancel({ workspaceId, id: queued.id });
    expect(await api.evals.deleteQuestionSet({ workspaceId, setId: set.id })).toEqual({ id: set.id, name: "hobbies-qs", questions: 1 });
    expect((await api.evals.questionSets({ workspaceId })).map((s) => s.name)).toEqual(["spare-qs"]);
    // The set's finished runs keep their results.
    expect(await db.evalRun.count({ where: { workspaceId, datasetId: set.id, status: "completed" } })).toBe(runsBefore + 1);
    await expect(api.evals.deleteQuestionSet({ workspaceId, setId: set.id })).rejects.toThrow(/No question set/);
  }, 120_000);
});
