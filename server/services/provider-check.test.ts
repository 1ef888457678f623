/**
 * Issue 14, item 3: a model with no provider is caught before running — by the canvas rule, the
 * plan and the run-start procedure — and a run's identical failures are grouped.
 */
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import { startMockOpenAIServer, type MockOpenAIServer } from "../llm/testing/mock-openai-server";
import { workspaceModel } from "../llm/workspace-model";
import { Pipeline } from "../pipeline/sdk";
import { providerProblems } from "../pipeline/provider-problems";
import { createTestDb } from "../store/test-db";
import { planWithCost } from "./cost";
import type { Db } from "../core/db";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { availableProviders } from "./provider-check";
import { upsertProvider } from "./providers";
import { failureGroups } from "./run-failures";
import { runPipeline } from "./runs";
import { signUp } from "./users";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-provider-check";
// The env fallback would make openai available: this test is about a workspace without one.
delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_BASE_URL;
delete process.env.ANTHROPIC_API_KEY;

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let userId: string;
let mock: MockOpenAIServer;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "provider-check@example.com", password: "provider-check-1" });
  workspaceId = workspace.id;
  userId = user.id;
  mock = await startMockOpenAIServer({
    apiKey: "sk-test",
    behave: (req) => (req.text.includes("[always-500]") ? { kind: "500" } : req.text.includes("[bad-json]") ? { kind: "malformed" } : { kind: "ok" }),
  });
});
afterAll(async () => {
  await mock?.close();
  await close();
});

const chatSpec = (model: string, factsModel = "offline/extractive") =>
  new Pipeline("chat", { agent: "test" })
    .source("chats", { format: "jsonl" })
    .transform("facts", { from: "chats", prompt: "Facts:\n{{ record.content }}", model: factsModel })
    .transform("summaries", { from: "chats", prompt: "Summarize:\n{{ record.content }}", model })
    .output("search", { from: ["summaries"], surface: "search" })
    .toSpec();

const items = (n: number, marker = "") =>
  Array.from({ length: n }, (_, i) => ({ externalId: `c-${marker}-${i}`, content: `${marker ? `[${marker}] ` : ""}conversation ${i} about tomatoes`, metadata: {} }));

describe("no provider for a model", () => {
  it("the canvas rule names the step and the fix; offline and configured providers pass", () => {
    const spec = chatSpec("openai/gpt-4o-mini");
    expect(providerProblems(spec, [])).toEqual([
      { path: ["steps", 1, "model"], node: "summaries", message: 'no provider for openai — add one in Settings → Models (model "openai/gpt-4o-mini")' },
    ]);
    expect(providerProblems(spec, ["openai"])).toEqual([]);
    expect(providerProblems(chatSpec("anthropic/claude-3-5-haiku-latest"), ["openai"])[0]!.message).toMatch(/^no provider for anthropic/);
    // A half-edited spec (the canvas) is tolerated: a step without a model uses the offline default.
    expect(providerProblems({ steps: [{ type: "transform", prompt: "x" }, null, { type: "merge" }] }, [])).toEqual([]);
  });

  it("the plan says so, and the run-start procedure refuses without creating a run", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "no-provider", spec: chatSpec("openai/gpt-4o-mini") });
    await appendSourceRecords(db, pipeline.id, "chats", items(3));
    expect(await availableProviders(db, workspaceId, {})).toEqual(["offline"]);

    const plan = await planWithCost(db, pipeline.id, "main");
    expect(plan.providerProblems).toEqual([{ step: "summaries", message: 'no provider for openai — add one in Settings → Models (model "openai/gpt-4o-mini")' }]);

    const caller = createCaller(await createContext({ db, session: { userId, email: "provider-check@example.com" } }));
    const err = await caller.run.start({ workspaceId, pipelineId: pipeline.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCError);
    expect((err as TRPCError).code).toBe("BAD_REQUEST");
    expect((err as TRPCError).message).toBe('Cannot start the run: step "summaries": no provider for openai — add one in Settings → Models (model "openai/gpt-4o-mini").');
    expect(await db.run.count({ where: { pipelineId: pipeline.id } })).toBe(0);

    // Adding the provider clears it everywhere.
    await upsertProvider(db, workspaceId, { name: "openai", kind: "openai", apiKey: "sk-whatever" });
    expect((await planWithCost(db, pipeline.id, "main")).providerProblems).toEqual([]);
    expect(await caller.provider.available({ workspaceId })).toEqual(["offline", "openai"]);
    await db.providerCredential.deleteMany({ where: { workspaceId, name: "openai" } });
  });

  it("env-configured providers count as available (the CLI path)", async () => {
    expect(await availableProviders(db, workspaceId, { OPENAI_API_KEY: "sk-env" })).toEqual(["offline", "openai"]);
  });
});

describe("failure groups", () => {
  it("a run's identical failures come back as one group with a count and one example", async () => {
    await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-test", timeoutMs: 1000, maxConcurrency: 8 });
    const { pipeline } = await createPipeline(db, workspaceId, { name: "failing", spec: chatSpec("mock/gpt-4o-mini", "mock/gpt-4o") });
    await appendSourceRecords(db, pipeline.id, "chats", [...items(25, "always-500"), ...items(2)]);
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model: workspaceModel(db, workspaceId, { retryBaseMs: 1, maxRetries: 1 }), runOptions: { retryBaseMs: 1 }, afterRun: false });
    expect(run.status).toBe("completed_with_errors");
    expect(await db.runFailure.count({ where: { runId: run.id } })).toBe(50);

    const { total, groups } = await failureGroups(db, workspaceId, run.id);
    expect(total).toBe(50);
    // One group per step and identical error, not 50 rows.
    expect(groups.map((g) => [g.step, g.count])).toEqual([
      ["facts", 25],
      ["summaries", 25],
    ]);
    for (const g of groups) {
      expect(g.example.inputKey).toBeTruthy();
      expect(g.attempts).toBeGreaterThanOrEqual(25);
    }

    const caller = createCaller(await createContext({ db, session: { userId, email: "provider-check@example.com" } }));
    expect((await caller.run.failureGroups({ workspaceId, runId: run.id })).total).toBe(50);
    await expect(failureGroups(db, "another-workspace", run.id)).rejects.toThrow(/not found/);
  });
});
