/**
 * Pairwise preference in replay (issue 37) against the mock OpenAI-compatible server (real HTTP):
 * on the hand-computed replay fixture, a judge that prefers the context holding the whole note
 * picks main in both orders for both queries (branch win rate 0, interval [−1, −1]); a judge that
 * always answers "A" (pure position bias) ends in ties because both orders are asked; identical
 * branches are ties without a call; unreadable replies are counted, not scored; offline (no judge
 * model) the report says "not measured" and makes no call. Through tRPC the report validates.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { Db } from "../core/db";
import { startMockOpenAIServer, type MockOpenAIServer, type MockRequest } from "../llm/testing/mock-openai-server";
import { upsertProvider } from "../services/providers";
import { replayQueries } from "./replay";
import { parsePreference, PREFERENCE_PROMPT } from "./replay-judge";
import { replayFixture, REPLAY_NOTES } from "./testing/replay-fixture";

const SECRET = "sk-replay-judge";
process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-replay";
let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let userId: string;
let pipelineId: string;
let mock: MockOpenAIServer;
let judgeReply: (request: MockRequest) => string = () => '{"better": "tie"}';

const contextOf = (text: string, label: "A" | "B") => {
  const start = text.indexOf(`Context ${label}:`);
  const end = label === "A" ? text.indexOf("Context B:") : text.indexOf("Reply with JSON only");
  return text.slice(start, end);
};
/** Prefers the context that holds a whole note (main's 1,200-character chunk), else a tie. */
const wholeNoteJudge = (request: MockRequest) => {
  const whole = (ctx: string) => Object.values(REPLAY_NOTES).some((n) => ctx.includes(n.trim()));
  const [a, b] = [whole(contextOf(request.text, "A")), whole(contextOf(request.text, "B"))];
  return a === b ? '{"better": "tie"}' : a ? '{"better": "A"}' : '{"better": "B"}';
};

beforeAll(async () => {
  ({ db, close, workspaceId, userId, pipelineId } = await replayFixture("replay-judge@example.com"));
  mock = await startMockOpenAIServer({ apiKey: SECRET, behave: (request) => ({ kind: "ok", content: judgeReply(request) }) });
  await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: SECRET, timeoutMs: 5000, maxConcurrency: 2 });
}, 180_000);
afterAll(async () => {
  await mock?.close();
  await close?.();
});

const chats = () => mock.requests.filter((r) => r.path.endsWith("/chat/completions"));

describe("parsePreference", () => {
  it("reads {better} JSON or the bare word; anything else is unreadable", () => {
    expect(parsePreference('{"better": "A"}')).toBe("A");
    expect(parsePreference('```json\n{"better":"b"}\n```')).toBe("B");
    expect(parsePreference("tie")).toBe("tie");
    expect(parsePreference("Context A.")).toBe("A");
    expect(parsePreference("A is better than B")).toBeNull();
    expect(parsePreference('{"better": "both"}')).toBeNull();
    expect(parsePreference("")).toBeNull();
  });
});

describe("replay with a judge model: pairwise preference", () => {
  it("offline (no judge model): the preference is not measured and no model is called", async () => {
    mock.reset();
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks" });
    expect(report.summary.preference).toEqual({ measured: false, reason: expect.stringMatching(/^not measured/) });
    expect(report.queries.every((q) => q.preference === undefined)).toBe(true);
    expect(chats()).toHaveLength(0);
  }, 60_000);

  it("a judge preferring the whole note picks main in both orders: win rate 0, interval [−1, −1]", async () => {
    mock.reset();
    judgeReply = wholeNoteJudge;
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks", judgeModel: "mock/judge-1" });
    for (const q of report.queries) expect(q.preference).toEqual({ winner: "main", identical: false, verdicts: ["main", "main"] });
    expect(report.summary.preference).toMatchObject({ measured: true, judgeModel: "mock/judge-1", prompt: PREFERENCE_PROMPT, orders: "both", calls: 4, branchWins: 0, mainWins: 2, ties: 0, unjudged: 0, winRate: 0, interval: { n: 2, mean: -1, low: -1, high: -1 } });
    // Both orders per query: once with main's whole note as A, once as B; the query is in each prompt.
    const sent = chats();
    expect(sent).toHaveLength(4);
    expect(sent.every((r) => r.body.model === "judge-1")).toBe(true);
    for (const query of ["zebra vault combination", "heron garden ferns"]) {
      const mine = sent.filter((r) => r.text.includes(`Question: ${query}`));
      const word = query.split(" ")[0] as keyof typeof REPLAY_NOTES;
      expect(mine.map((r) => (contextOf(r.text, "A").includes(REPLAY_NOTES[word].trim()) ? "A" : "B")).sort()).toEqual(["A", "B"]);
    }
  }, 60_000);

  it("a judge that always says A (position bias) gives ties, not a winner: win rate 0.5, zero interval", async () => {
    mock.reset();
    judgeReply = () => '{"better": "A"}';
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks", judgeModel: "mock/judge-1" });
    for (const q of report.queries) expect(q.preference).toEqual({ winner: "tie", identical: false, verdicts: ["main", "branch"] });
    expect(report.summary.preference).toMatchObject({ measured: true, calls: 4, branchWins: 0, mainWins: 0, ties: 2, winRate: 0.5, interval: { n: 2, mean: 0, low: 0, high: 0 } });
  }, 60_000);

  it("identical branches are ties without asking", async () => {
    mock.reset();
    judgeReply = wholeNoteJudge;
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "same", judgeModel: "mock/judge-1" });
    for (const q of report.queries) expect(q.preference).toMatchObject({ winner: "tie", identical: true });
    expect(report.summary.preference).toMatchObject({ calls: 0, ties: 2, winRate: 0.5, spentUsd: 0 });
    expect(chats()).toHaveLength(0);
  }, 60_000);

  it("unreadable replies are counted and sampled, never scored", async () => {
    mock.reset();
    judgeReply = () => "Both have merits, hard to say.";
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks", judgeModel: "mock/judge-1" });
    expect(report.summary.preference).toMatchObject({ measured: true, calls: 4, branchWins: 0, mainWins: 0, ties: 0, unjudged: 2, winRate: null, interval: { n: 0 } });
    expect(report.summary.preference.measured && report.summary.preference.samples[0]).toMatchObject({ reply: "Both have merits, hard to say." });
    for (const q of report.queries) expect(q.preference).toEqual({ winner: null, identical: false, verdicts: [null, null] });
  }, 60_000);

  it("refuses a judge it cannot call, before replaying, with what and where", async () => {
    mock.reset();
    await expect(replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks", judgeModel: "nope/judge" })).rejects.toThrow(/judgeModel: "nope\/judge" needs a provider named "nope"/);
    await expect(replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks", judgeModel: "judge-without-provider" })).rejects.toThrow(/judgeModel: .* is not provider\/model/);
    await expect(replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks", judgeModel: "offline/extractive" })).rejects.toThrow(/offline model cannot judge/);
    await expect(replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks", budgetUsd: 1 })).rejects.toThrow(/budgetUsd: a budget needs a judgeModel/);
    expect(chats()).toHaveLength(0);
  }, 60_000);

  it("over tRPC (what REST serves) the report with its preference validates", async () => {
    mock.reset();
    judgeReply = wholeNoteJudge;
    const caller = createCaller(await createContext({ db, session: { userId, email: "replay-judge@example.com" } }));
    const report = await caller.log.replay({ workspaceId, pipelineId, branch: "small-chunks", judgeModel: "mock/judge-1" });
    expect(report.summary.preference).toMatchObject({ measured: true, mainWins: 2, winRate: 0 });
    const offline = await caller.log.replay({ workspaceId, pipelineId, branch: "small-chunks" });
    expect(offline.summary.preference).toMatchObject({ measured: false });
  }, 60_000);
});
