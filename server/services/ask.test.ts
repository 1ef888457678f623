/**
 * Ask on a real (PGlite) database over a real run of the chat-memory template: the offline
 * extractive packet, abstention on weak evidence, and — against the mock OpenAI-compatible server
 * over real HTTP — a generated answer checked by the critic (APPROVE, REVISE then retry, REJECT).
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { startMockOpenAIServer, type MockBehaviour, type MockOpenAIServer, type MockRequest } from "../llm/testing/mock-openai-server";
import { createTestDb } from "../store/test-db";
import { ask, confidence, parseCriticReply } from "./ask";
import { importFile } from "./imports";
import { templateSpec } from "../pipeline/templates";
import { createPipeline } from "./pipelines";
import { upsertProvider } from "./providers";
import { runPipeline } from "./runs";
import { signUp } from "./users";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-ask";
const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");
const QUESTION = "Where is the spare key for the lighthouse cabin?";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
let mock: MockOpenAIServer;
/** What the critic says next (the answer model always cites [1]). */
let criticReplies: string[] = [];

function behave(request: MockRequest): MockBehaviour {
  if (request.text.includes("You check an answer")) return { kind: "ok", content: criticReplies.shift() ?? '{"verdict":"APPROVE","reason":"supported"}' };
  if (request.text.includes("A reviewer rejected your previous answer")) return { kind: "ok", content: "Under the blue ceramic frog by the porch steps [1]." };
  return { kind: "ok", content: "Under the frog [1]." };
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "ask@example.com", password: "ask-password-1" }));
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") }));
  await importFile(db, { workspaceId, pipelineId, source: "chats", path: fixture });
  expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
  mock = await startMockOpenAIServer({ behave, apiKey: "sk-ask" });
  await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-ask", timeoutMs: 5000 });
}, 180_000);
afterAll(async () => {
  await mock?.close();
  await close?.();
});

const base = () => ({ workspaceId, pipelineId, branch: "main" });

describe("ask", () => {
  it("offline: quotes the best evidence sentence, labelled, cited, with provenance down to the source conversation", async () => {
    const packet = await ask(db, { ...base(), question: QUESTION });
    expect(packet.abstained).toBe(false);
    expect(packet.kind).toBe("extractive");
    expect(packet.model).toBe("offline/extractive");
    expect(packet.label).toMatch(/not generated/);
    expect(packet.answer).toMatch(/blue ceramic frog/);
    expect(packet.answer).toMatch(/\[\d+\]$/);
    expect(packet.critic).toMatchObject({ verdict: "APPROVE", model: "offline/overlap" });
    expect(["low", "medium", "high"]).toContain(packet.confidence.level);
    expect(packet.citations).toHaveLength(1);
    const cited = packet.evidence.find((e) => e.ref === packet.citations[0]!.ref)!;
    expect(cited.id).toBe(packet.citations[0]!.recordId);
    expect(cited.content).toMatch(/frog/);
    // Provenance: the cited record's sources are the imported conversation records.
    expect(cited.sources.length).toBeGreaterThan(0);
    const source = await db.record.findUniqueOrThrow({ where: { id: cited.sources[0]!.id } });
    expect(source.step).toBe("chats");
    expect(source.content).toMatch(/lighthouse/i);
    expect(packet.usage.calls).toBe(0);
  });

  it("abstains when the evidence is weak, and still shows what it found", async () => {
    const nothing = await ask(db, { ...base(), question: "quarterly revenue of the zeppelin franchise" });
    expect(nothing).toMatchObject({ abstained: true, answer: null, citations: [] });
    expect(nothing.uncertaintyReason).toBeTruthy();
    // The same question as the first test abstains when the caller demands more confidence.
    const strict = await ask(db, { ...base(), question: QUESTION, minConfidence: 0.99 });
    expect(strict.abstained).toBe(true);
    expect(strict.uncertaintyReason).toMatch(/below 0.99/);
    expect(strict.evidence.length).toBeGreaterThan(0);
  });

  it("answers inside a scope only", async () => {
    const packet = await ask(db, { ...base(), question: QUESTION, scope: "somebody-else" });
    expect(packet.evidence).toEqual([]);
    expect(packet.abstained).toBe(true);
  });

  it("with a configured model: a generated answer the critic approves", async () => {
    criticReplies = ['{"verdict":"APPROVE","reason":"[1] says so"}'];
    const before = mock.count("chat/completions");
    const packet = await ask(db, { ...base(), question: QUESTION, model: "mock/gpt-test" });
    expect(mock.count("chat/completions") - before).toBe(2);
    expect(packet).toMatchObject({ abstained: false, kind: "generated", model: "mock/gpt-test", answer: "Under the frog [1].", critic: { verdict: "APPROVE", revised: false } });
    expect(packet.citations).toEqual([{ ref: 1, recordId: packet.evidence[0]!.id, step: packet.evidence[0]!.step }]);
    expect(packet.usage.calls).toBe(2);
    expect(packet.usage.tokensIn).toBeGreaterThan(0);
    // The answer prompt carried the numbered evidence and the question.
    const prompt = mock.requests.at(-2)!.text;
    expect(prompt).toContain("[1] (");
    expect(prompt).toContain(QUESTION);
  });

  it("REVISE: one retry with the critic's feedback; REJECT: abstains", async () => {
    criticReplies = ['{"verdict":"REVISE","reason":"say which frog"}', '{"verdict":"APPROVE","reason":"ok"}'];
    const revised = await ask(db, { ...base(), question: QUESTION, model: "mock/gpt-test" });
    expect(revised).toMatchObject({ abstained: false, answer: "Under the blue ceramic frog by the porch steps [1].", critic: { verdict: "APPROVE", revised: true } });
    expect(revised.usage.calls).toBe(4);
    expect(mock.requests.at(-2)!.text).toContain("say which frog");

    criticReplies = ['{"verdict":"REJECT","reason":"not in the excerpts"}'];
    const rejected = await ask(db, { ...base(), question: QUESTION, model: "mock/gpt-test" });
    expect(rejected).toMatchObject({ abstained: true, answer: null, critic: { verdict: "REJECT" } });
    expect(rejected.uncertaintyReason).toMatch(/not in the excerpts/);
  });

  it("says what is wrong: an empty question, a model that is not provider/model, an unknown provider", async () => {
    await expect(ask(db, { ...base(), question: "  " })).rejects.toThrow(/question/);
    await expect(ask(db, { ...base(), question: QUESTION, model: "gpt" })).rejects.toThrow(/provider\/model/);
    await expect(ask(db, { ...base(), question: QUESTION, model: "nobody/x" })).rejects.toThrow(/No model provider named "nobody"/);
  });

  it("scores confidence as Synapsis §4.3 and reads critic replies", () => {
    expect(confidence([])).toMatchObject({ score: 0, level: "none" });
    const now = new Date("2026-01-01T00:00:00Z");
    const strong = confidence([{ relevance: 1, time: "2026-01-01T00:00:00Z" }, { relevance: 0.9, time: null }, { relevance: 0.8, time: null }], now);
    expect(strong).toMatchObject({ score: 1, level: "high" });
    expect(parseCriticReply('```json\n{"verdict":"revise","reason":"x"}\n```')).toEqual({ verdict: "REVISE", reason: "x" });
    expect(parseCriticReply("APPROVE")).toMatchObject({ verdict: "APPROVE" });
    expect(parseCriticReply("maybe")).toBeNull();
  });
});
