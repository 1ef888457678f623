/**
 * Real HTTP end to end: pipelines run through the workspace model resolver and the real AI SDK
 * client against the mock OpenAI-compatible server.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import { Pipeline } from "../pipeline/sdk";
import type { PipelineSpec } from "../pipeline/spec";
import type { Db } from "../core/db";
import { planWithCost } from "../services/cost";
import { appendSourceRecords, createPipeline, getBranch, saveVersion } from "../services/pipelines";
import { createBranch } from "../services/branches";
import type { SourceItem } from "../core/source-item";
import { createApiKey } from "../services/api-keys";
import { upsertProvider } from "../services/providers";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { startMockOpenAIServer, type MockOpenAIServer, type MockBehaviour } from "./testing/mock-openai-server";
import { workspaceModel } from "./workspace-model";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-providers";

const SECRET = "sk-live-SUPERSECRET-0123456789abcdef";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let userId: string;
let mock: MockOpenAIServer;
let n = 0;
/** Per-marker count of requests seen, so "fail the first time" is per record. */
const seen = new Map<string, number>();

function behave(request: { text: string }): MockBehaviour {
  const marker = /\[(\w+(?:-\w+)*)\]/.exec(request.text)?.[1];
  if (!marker) return { kind: "ok" };
  const count = (seen.get(marker) ?? 0) + 1;
  seen.set(marker, count);
  if (marker === "flaky-429" && count === 1) return { kind: "429", retryAfterSeconds: 0.05 };
  if (marker === "flaky-500" && count === 1) return { kind: "500" };
  if (marker === "flaky-hang" && count === 1) return { kind: "hang" };
  if (marker === "always-500") return { kind: "500" };
  if (marker === "bad-json") return { kind: "malformed" };
  return { kind: "ok" };
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "models@example.com", password: "models-password" });
  workspaceId = workspace.id;
  userId = user.id;
  mock = await startMockOpenAIServer({ behave, apiKey: SECRET });
  // 5 s: long enough that a loaded machine does not time out a normal answer (which adds a retry), short enough for the hang case.
  await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: SECRET, timeoutMs: 5000, maxConcurrency: 4 });
});
afterAll(async () => {
  await mock.close();
  await close();
});

const model = () => workspaceModel(db, workspaceId, { retryBaseMs: 5 });
const FAST = { retryBaseMs: 1 };

function spec(opts: { model?: string; output?: Record<string, unknown> } = {}): PipelineSpec {
  return new Pipeline("chat", { agent: "test" })
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", prompt: "Summarize this conversation for the agent's memory:\n{{ record.content }}", model: opts.model ?? "mock/gpt-4o-mini", ...(opts.output ? { output: opts.output } : {}) })
    .toSpec();
}

function item(i: number, marker = ""): SourceItem {
  return {
    externalId: `c-${i}`,
    content: `${marker ? `[${marker}] ` : ""}Conversation ${i}: the user talked about their garden, tomatoes number ${i}, the watering schedule on Tuesdays, a trip to Lisbon in May and their sister's birthday party. They asked for a reminder about repotting the basil.`,
    metadata: { time: { created_at: `2024-03-${String((i % 27) + 1).padStart(2, "0")}T10:00:00Z` } },
  };
}

async function newPipeline(s: PipelineSpec) {
  n += 1;
  const created = await createPipeline(db, workspaceId, { name: `models-${n}`, spec: s });
  return created.pipeline.id;
}

async function pointed(pipelineId: string, step: string, branch = "main") {
  const { branch: b } = await getBranch(db, pipelineId, branch);
  const pointers = await db.branchPointer.findMany({ where: { branchId: b.id, step } });
  return db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, orderBy: { materializationKey: "asc" } });
}

type Stats = { steps: Array<{ step: string; input: number; output: number; errors: number; retries: number; modelCalls: number; tokensIn: number; tokensOut: number; costUsd: number }> };
const statsOf = (run: { stats: unknown }, step: string) => (run.stats as Stats).steps.find((s) => s.step === step)!;

describe("a pipeline against the mock OpenAI-compatible server (real SDK, real HTTP)", () => {
  let pipelineId: string;

  it("completes with retries counted, failures carrying raw responses, nothing duplicated", async () => {
    pipelineId = await newPipeline(spec());
    const items = [
      ...Array.from({ length: 6 }, (_, i) => item(i)),
      item(6, "flaky-429"),
      item(7, "flaky-500"),
      item(8, "flaky-hang"),
      item(9, "always-500"),
    ];
    await appendSourceRecords(db, pipelineId, "chats", items);
    mock.reset();
    const run = await runPipeline(db, { workspaceId, pipelineId }, { model: model(), runOptions: FAST });
    expect(run.status).toBe("completed_with_errors");
    const s = statsOf(run, "summaries");
    expect(s.input).toBe(10);
    expect(s.output).toBe(9);
    expect(s.errors).toBe(1);
    // 3 flaky records needed one retry each; always-500 used 4 attempts and failed.
    expect(s.retries).toBeGreaterThanOrEqual(3);
    expect(mock.count("chat/completions")).toBe(6 + 2 * 3 + 4);
    expect(s.tokensIn).toBeGreaterThan(0);
    expect(s.costUsd).toBeGreaterThan(0);

    const failures = await db.runFailure.findMany({ where: { runId: run.id } });
    expect(failures).toHaveLength(1);
    expect(failures[0]!.rawResponse).toContain("Internal server error");
    expect(failures[0]!.error).toMatch(/HTTP 500/);

    const records = await pointed(pipelineId, "summaries");
    expect(records).toHaveLength(9);
    expect(new Set(records.map((r) => r.materializationKey)).size).toBe(9);
    for (const r of records) {
      const audit = r.audit as Record<string, unknown>;
      expect(r.content).toMatch(/^Summary: /);
      for (const key of ["promptTemplateHash", "renderedPromptHash", "model", "temperature", "rawResponse", "tokensIn", "tokensOut", "costUsd", "latencyMs"]) {
        expect(audit).toHaveProperty(key);
      }
      expect(audit.model).toBe("mock/gpt-4o-mini");
    }
    const all = await db.record.count({ where: { pipelineId, step: "summaries" } });
    expect(all).toBe(9);
  });

  it("re-running retries only the failed item and duplicates nothing", async () => {
    mock.reset();
    const run = await runPipeline(db, { workspaceId, pipelineId }, { model: model(), runOptions: FAST });
    expect(statsOf(run, "summaries").input).toBe(1);
    expect(mock.count("chat/completions")).toBe(4); // always-500 again
    expect(await db.record.count({ where: { pipelineId, step: "summaries" } })).toBe(9);
  });

  it("replay makes zero HTTP calls and reproduces the records", async () => {
    const before = await pointed(pipelineId, "summaries");
    mock.reset();
    const run = await runPipeline(db, { workspaceId, pipelineId, options: { full: true, replay: true } }, { model: model(), runOptions: FAST });
    // The one prompt never answered has nothing to replay: it is the only HTTP traffic.
    expect(mock.requests.filter((r) => !r.text.includes("[always-500]"))).toHaveLength(0);
    expect(statsOf(run, "summaries").costUsd).toBe(0);
    const after = await pointed(pipelineId, "summaries");
    expect(after.map((r) => r.content).sort()).toEqual(before.map((r) => r.content).sort());
  });

  it("a malformed JSON answer for a schema step is a failed work item with its raw response", async () => {
    const id = await newPipeline(spec({ output: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] } }));
    await appendSourceRecords(db, id, "chats", [item(0), item(1, "bad-json"), item(2)]);
    mock.reset();
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { model: model(), runOptions: FAST });
    expect(run.status).toBe("completed_with_errors");
    const records = await pointed(id, "summaries");
    expect(records).toHaveLength(2);
    for (const r of records) expect(JSON.parse(r.content)).toHaveProperty("summary");
    const [failure] = await db.runFailure.findMany({ where: { runId: run.id } });
    expect(failure!.rawResponse).toBe('{"summary": "unterminated');
    expect(mock.count("chat/completions")).toBe(3);
  });

  it("the default model of a run is the workspace resolver (credential from Settings → Models)", async () => {
    const id = await newPipeline(spec());
    await appendSourceRecords(db, id, "chats", [item(0), item(1)]);
    mock.reset();
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    expect(run.status).toBe("completed");
    expect(mock.count("chat/completions")).toBe(2);
  });

  it("an unknown provider fails the work items with a clear message", async () => {
    const id = await newPipeline(spec({ model: "nowhere/some-model" }));
    await appendSourceRecords(db, id, "chats", [item(0)]);
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { model: model(), runOptions: FAST });
    const [failure] = await db.runFailure.findMany({ where: { runId: run.id } });
    expect(failure!.error).toMatch(/No model provider named "nowhere"/);
  });
});

describe("plan with cost", () => {
  it("estimates tokens within 25% of the actual usage the mock reports, then calibrates", async () => {
    const id = await newPipeline(spec());
    await appendSourceRecords(db, id, "chats", Array.from({ length: 12 }, (_, i) => item(100 + i)));
    const plan = await planWithCost(db, id, "main");
    const step = plan.steps.find((s) => s.step === "summaries")!;
    expect(step.basis).toBe("tokenizer");
    expect(step.pending).toBe(12);
    mock.reset();
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { model: model(), runOptions: FAST });
    const actual = statsOf(run, "summaries");
    const within = (est: number, act: number) => Math.abs(est - act) / act;
    expect(within(step.estimatedTokensIn, actual.tokensIn)).toBeLessThan(0.25);
    expect(within(step.estimatedTokensIn + step.estimatedTokensOut, actual.tokensIn + actual.tokensOut)).toBeLessThan(0.25);
    expect(within(step.estimatedCostUsd, actual.costUsd)).toBeLessThan(0.25);

    // New records: the next plan is calibrated from that run.
    await appendSourceRecords(db, id, "chats", Array.from({ length: 4 }, (_, i) => item(200 + i)));
    const next = (await planWithCost(db, id, "main")).steps.find((s) => s.step === "summaries")!;
    expect(next.basis).toBe("calibrated");
    expect(next.pending).toBe(4);
    expect(within(next.tokensInPerItem, actual.tokensIn / actual.input)).toBeLessThan(0.01);
  });

  it("a branch with a pricier model shows its cost ratio vs main", async () => {
    const id = await newPipeline(spec({ model: "mock/gpt-4o-mini" }));
    await appendSourceRecords(db, id, "chats", Array.from({ length: 5 }, (_, i) => item(300 + i)));
    await runPipeline(db, { workspaceId, pipelineId: id }, { model: model(), runOptions: FAST });
    await createBranch(db, id, { name: "pricey" });
    await saveVersion(db, id, { spec: spec({ model: "mock/gpt-4o" }), branch: "pricey", message: "try gpt-4o" });
    const plan = await planWithCost(db, id, "pricey");
    const step = plan.steps.find((s) => s.step === "summaries")!;
    expect(step.pending).toBe(5);
    expect(step.basis).toBe("calibrated-prompt");
    // gpt-4o costs 2.5/10 vs gpt-4o-mini's 0.15/0.6 per million: 16.7×.
    expect(plan.costRatioVsMain).toBeCloseTo(16.67, 1);
    expect(plan.warning).toMatch(/16\.67× as much as main/);
    const mainPlan = await planWithCost(db, id, "main");
    expect(mainPlan.costRatioVsMain).toBeUndefined();
    expect(mainPlan.totals.pending).toBe(0);
    expect(mainPlan.totals.estimatedCostUsd).toBe(0);
  });

  it("plans every step type; the offline model costs nothing, and a paid branch of a free main warns", async () => {
    const offlineSpec = (summaryModel = "offline/extractive") =>
      new Pipeline("chat", { agent: "test" })
        .source("chats", { format: "jsonl" })
        .transform("summaries", { from: "chats", prompt: "Summarize: {{ record.content }}", model: summaryModel })
        .aggregate("monthly", { from: "summaries", period: "month", prompt: "Month {{ group.key }}: {% for r in records %}{{ r.content }}{% endfor %}" })
        .fold("world", { from: "monthly", prompt: "State: {{ state }} New: {{ record.content }}", checkpointEvery: 2 })
        .output("context", { from: "world", surface: "projection" })
        .toSpec();
    const id = await newPipeline(offlineSpec());
    await appendSourceRecords(db, id, "chats", Array.from({ length: 6 }, (_, i) => ({ ...item(400 + i), metadata: { time: { created_at: `2024-0${(i % 3) + 1}-10T10:00:00Z` } } })));
    const before = await planWithCost(db, id, "main");
    expect(before.steps.map((s) => s.step)).toEqual(["summaries", "monthly", "world"]);
    for (const s of before.steps) {
      expect(s.estimatedCostUsd).toBe(0);
      expect(s.usesModel).toBe(true);
    }
    expect(before.steps[0]!.estimatedTokensIn).toBeGreaterThan(0);
    await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    const after = await planWithCost(db, id, "main");
    expect(after.totals.pending).toBe(0);
    await createBranch(db, id, { name: "paid" });
    await saveVersion(db, id, { spec: offlineSpec("mock/gpt-4o"), branch: "paid", message: "real model" });
    const paid = await planWithCost(db, id, "paid");
    expect(paid.costRatioVsMain).toBeNull();
    expect(paid.warning).toMatch(/main costs nothing/);
    expect(paid.steps[0]!.estimatedCostUsd).toBeGreaterThan(0);
  });

  it("the provider router exposes planCost", async () => {
    const caller = createCaller(await createContext({ db, session: { userId, email: "models@example.com" } }));
    const id = await newPipeline(spec());
    await appendSourceRecords(db, id, "chats", [item(1), item(2)]);
    const plan = await caller.provider.planCost({ workspaceId, pipelineId: id });
    expect(plan.totals.pending).toBe(2);
    expect(plan.totals.estimatedCostUsd).toBeGreaterThan(0);
  });
});

describe("keys", () => {
  it("a saved key never appears in API responses, logs or errors", async () => {
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((m) => vi.spyOn(console, m));
    const caller = createCaller(await createContext({ db, session: { userId, email: "models@example.com" } }));
    const outputs: unknown[] = [];
    outputs.push(await caller.provider.upsert({ workspaceId, name: "leaky", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: SECRET }));
    outputs.push(await caller.provider.list({ workspaceId }));
    outputs.push(await caller.provider.testConnection({ workspaceId, name: "leaky", model: "gpt-4o-mini" }));
    // Wrong key: the error must not echo the stored key either.
    outputs.push(await caller.provider.upsert({ workspaceId, name: "wrong", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: `${SECRET}-wrong` }));
    const bad = await caller.provider.testConnection({ workspaceId, name: "wrong" });
    outputs.push(bad);
    expect(bad.ok).toBe(false);
    expect(bad.message).toBe("Reachable, but the provider refused the API key.");
    outputs.push(await caller.provider.upsert({ workspaceId, name: "leaky", kind: "openai-compatible", baseUrl: mock.baseUrl, maxConcurrency: 2 }));
    outputs.push(await caller.provider.prices({ workspaceId }));
    // A run whose every call fails with an auth error: failures and run rows hold no key.
    const id = await newPipeline(spec({ model: "wrong/gpt-4o-mini" }));
    await appendSourceRecords(db, id, "chats", [item(0)]);
    const run = await runPipeline(db, { workspaceId, pipelineId: id }, { runOptions: FAST });
    outputs.push(run, await caller.run.get({ workspaceId, runId: run.id }));
    const err = await caller.provider.upsert({ workspaceId, name: "offline", kind: "openai", apiKey: SECRET }).catch((e: unknown) => e);
    outputs.push(String(err), (err as Error).message);

    const listed = outputs[1] as Array<{ name: string; keyPreview: string | null; hasKey: boolean }>;
    expect(listed.find((p) => p.name === "leaky")).toMatchObject({ hasKey: true, keyPreview: "sk-…cdef" });
    const kept = outputs[5] as { hasKey: boolean };
    expect(kept.hasKey).toBe(true); // omitted apiKey keeps the stored key
    expect((outputs[2] as { ok: boolean }).ok).toBe(true);

    const everything = JSON.stringify(outputs) + spies.map((s) => JSON.stringify(s.mock.calls)).join("");
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain("SUPERSECRET");
    // At rest: encrypted, not the plaintext.
    const row = await db.providerCredential.findFirstOrThrow({ where: { workspaceId, name: "leaky" } });
    expect(row.encryptedKey).not.toContain("SUPERSECRET");
    expect(row.encryptedKey).toMatch(/^v1\./);
    for (const s of spies) s.mockRestore();
  });

  it("viewers can list providers and prices but not change them", async () => {
    const { secret } = await createApiKey(db, workspaceId, { userId, role: "owner" }, { name: "viewer-key", role: "viewer" });
    const viewer = createCaller(await createContext({ db, authorization: `Bearer ${secret}` }));
    const listed = await viewer.provider.list({ workspaceId });
    expect(listed.length).toBeGreaterThan(0);
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    expect((await viewer.provider.prices({ workspaceId })).length).toBeGreaterThan(10);
    await expect(viewer.provider.upsert({ workspaceId, name: "x", kind: "openai", apiKey: "k" })).rejects.toThrow(/does not allow providers:manage/);
    await expect(viewer.provider.setPrice({ workspaceId, model: "gpt-4o", inputPerMillion: 1, outputPerMillion: 1 })).rejects.toThrow(/providers:manage/);
    await expect(viewer.provider.testConnection({ workspaceId, name: "mock" })).rejects.toThrow(/providers:manage/);
  });

  it("price overrides change the cost the provider reports", async () => {
    const caller = createCaller(await createContext({ db, session: { userId, email: "models@example.com" } }));
    await caller.provider.setPrice({ workspaceId, model: "mock/gpt-4o-mini", inputPerMillion: 1000, outputPerMillion: 1000 });
    const prices = await caller.provider.prices({ workspaceId });
    expect(prices.find((p) => p.model === "mock/gpt-4o-mini")).toMatchObject({ source: "override", inputPerMillion: 1000 });
    const res = await model().complete({ model: "mock/gpt-4o-mini", prompt: "Summarize: one two three four five six", temperature: 0, task: "summarize", inputs: [] });
    expect(res.costUsd).toBeCloseTo(((res.tokensIn + res.tokensOut) * 1000) / 1e6, 10);
    await caller.provider.resetPrice({ workspaceId, model: "mock/gpt-4o-mini" });
    expect((await caller.provider.prices({ workspaceId })).find((p) => p.model === "mock/gpt-4o-mini")).toBeUndefined();
  });
});
