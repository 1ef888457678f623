import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { startMockOpenAIServer, type MockBehaviour, type MockOpenAIServer, type MockRequest } from "../llm/testing/mock-openai-server";
import { upsertProvider } from "../services/providers";
import { ANSWER_PROMPT, JUDGE_PROMPT, parseVerdict, type JudgeRecord } from "./judge";
import { runEval } from "./service";
import { evalWorkspace } from "./testing/eval-workspace";

describe("parseVerdict", () => {
  it("reads the JSON label or a bare verdict word; anything else is garbage", () => {
    expect(parseVerdict('{"label": "CORRECT"}')).toBe(1);
    expect(parseVerdict('```json\n{"label":"wrong"}\n```')).toBe(0);
    expect(parseVerdict("CORRECT")).toBe(1);
    expect(parseVerdict("The answer is incorrect.")).toBe(0);
    expect(parseVerdict("WRONG")).toBe(0);
    expect(parseVerdict("I am not sure")).toBeNull();
    expect(parseVerdict("CORRECT or WRONG")).toBeNull();
    expect(parseVerdict('{"label": "maybe"}')).toBeNull();
    expect(parseVerdict("")).toBeNull();
  });
});

const SECRET = "sk-judge-test";
// Provider keys are stored encrypted with the server secret.
process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-evals";
let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let datasetId: string;
let mock: MockOpenAIServer;

/** Answers: a fixed phrase per question. Judge: CORRECT for the dog question, garbage for the puppy one, WRONG otherwise. */
function behave(request: MockRequest): MockBehaviour {
  if (request.text.includes("Gold answer:")) {
    if (request.text.includes("What kind of dog is Pepper?")) return { kind: "ok", content: '{"label": "CORRECT"}' };
    if (request.text.includes("name of Ann's puppy")) return { kind: "ok", content: "Hmm, hard to say." };
    return { kind: "ok", content: '{"label": "WRONG"}' };
  }
  if (request.text.includes("What kind of dog is Pepper?")) return { kind: "ok", content: "A grey whippet, I think" };
  return { kind: "ok", content: "not mentioned" };
}

beforeAll(async () => {
  ({ db, close, workspaceId, datasetId } = await evalWorkspace("judge@example.com"));
  mock = await startMockOpenAIServer({ behave, apiKey: SECRET });
  await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: SECRET, timeoutMs: 5000, maxConcurrency: 4 });
  await upsertProvider(db, workspaceId, { name: "badkey", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: `${SECRET}-wrong`, timeoutMs: 5000 });
}, 180_000);
afterAll(async () => {
  await mock?.close();
  await close?.();
});

describe("answers and the LLM judge j with a configured model", () => {
  it("offline: answers are extractive and the run says j was not measured", async () => {
    const run = await runEval(db, { workspaceId, template: "bm25-sessions", datasetId });
    expect(run.status).toBe("completed");
    expect(run.model).toBe("offline/extractive");
    expect(run.judge).toMatchObject({ measured: false, reason: expect.stringMatching(/j was not measured/) });
    expect((run.metrics as Record<string, number>).j).toBeUndefined();
    expect((run.metrics as Record<string, number>).f1).toBeTypeOf("number");
  }, 120_000);

  it("answers from the retrieved context, judges against gold, stores the judge's model, prompt and categories, counts garbage", async () => {
    mock.reset();
    const run = await runEval(db, { workspaceId, template: "bm25-sessions", datasetId, answerModel: "mock/gpt-4o-mini", judgeModel: "mock/judge-1" });
    expect(run.status).toBe("completed");
    const cases = await db.evalCase.findMany({ where: { evalRunId: run.id }, orderBy: { position: "asc" } });
    expect(cases).toHaveLength(9);
    // One answer call and one judge call per question, with the right models and prompts.
    const chats = mock.requests.filter((r) => r.path.endsWith("/chat/completions"));
    expect(chats).toHaveLength(18);
    expect(chats.filter((r) => r.body.model === "judge-1")).toHaveLength(9);
    const pepperAnswer = chats.find((r) => r.body.model === "gpt-4o-mini" && r.text.includes("What kind of dog is Pepper?"))!;
    expect(pepperAnswer.text).toContain("Memory:");
    expect(pepperAnswer.text).toContain("Pepper"); // the retrieved context is in the prompt

    const pepper = cases.find((c) => c.question === "What kind of dog is Pepper?")!;
    expect(pepper.answer).toBe("A grey whippet, I think");
    expect((pepper.scores as Record<string, number>).j).toBe(1);
    expect((pepper.scores as Record<string, number>).f1).toBeCloseTo(2 / 3); // token F1 against "a grey whippet"
    const puppy = cases.find((c) => c.question.includes("name of Ann's puppy"))!;
    expect((puppy.scores as Record<string, number>).j).toBeUndefined(); // garbage: not judged

    const judge = run.judge as unknown as JudgeRecord;
    expect(judge).toMatchObject({
      measured: true,
      answerModel: "mock/gpt-4o-mini",
      judgeModel: "mock/judge-1",
      prompt: JUDGE_PROMPT,
      answerPrompt: ANSWER_PROMPT,
      categories: { "1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial" },
      calls: 18,
      judged: 8,
      garbage: 1,
      failed: 0,
      overBudget: 0,
    });
    expect(judge.samples).toEqual([{ question: puppy.questionId, reply: "Hmm, hard to say." }]);
    expect(judge.spentUsd).toBeGreaterThan(0); // gpt-4o-mini is priced
    // j over the judged, non-adversarial questions: one CORRECT among them.
    const judgedMain = cases.filter((c) => c.category !== "5" && (c.scores as Record<string, number>).j !== undefined);
    expect((run.metrics as Record<string, number>).j).toBeCloseTo(1 / judgedMain.length);
  }, 120_000);

  it("stops spending at the budget: the rest are not judged, counted, and the run still completes", async () => {
    mock.reset();
    const run = await runEval(db, { workspaceId, template: "bm25-windows", datasetId, answerModel: "mock/gpt-4o-mini", budgetUsd: 0.0000001 });
    expect(run.status).toBe("completed");
    const judge = run.judge as unknown as JudgeRecord;
    expect(judge.budgetUsd).toBe(0.0000001);
    expect(judge.calls).toBe(1); // the first answer already spent the budget
    expect(judge.overBudget).toBe(9);
    expect(judge.judged).toBe(0);
    expect(mock.count("chat/completions")).toBe(1);
    expect((run.metrics as Record<string, number>).j).toBeUndefined();
  }, 120_000);

  it("a provider that refuses every call fails the eval with the reason and stores no results", async () => {
    const run = await runEval(db, { workspaceId, template: "bm25-sessions", datasetId, answerModel: "badkey/gpt-4o-mini" });
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/authentication failed/);
    expect(run.error).not.toContain(SECRET);
    expect(await db.evalCase.count({ where: { evalRunId: run.id } })).toBe(0);
  }, 120_000);

  it("refuses a model that is not provider/model, a judge without an answer model, and a bad budget", async () => {
    await expect(runEval(db, { workspaceId, template: "bm25-sessions", datasetId, answerModel: "nonsense" })).rejects.toThrow(/not provider\/model/);
    await expect(runEval(db, { workspaceId, template: "bm25-sessions", datasetId, judgeModel: "mock/judge-1" })).rejects.toThrow(/needs an answer model/);
    await expect(runEval(db, { workspaceId, template: "bm25-sessions", datasetId, answerModel: "mock/a", budgetUsd: 0 })).rejects.toThrow(/budget/);
  });

  it("refuses, before queueing anything, an answer or judge model whose provider the workspace does not have", async () => {
    const before = await db.evalRun.count({ where: { workspaceId } });
    await expect(runEval(db, { workspaceId, template: "bm25-sessions", datasetId, answerModel: "nowhere/gpt-4o-mini" })).rejects.toThrow(
      /answer model "nowhere\/gpt-4o-mini" needs a provider named "nowhere".*Settings → Models \(configured: badkey, mock, offline\)/,
    );
    await expect(runEval(db, { workspaceId, template: "bm25-sessions", datasetId, answerModel: "mock/gpt-4o-mini", judgeModel: "elsewhere/judge" })).rejects.toThrow(
      /judge model "elsewhere\/judge" needs a provider named "elsewhere"/,
    );
    expect(await db.evalRun.count({ where: { workspaceId } })).toBe(before);
  });
});
