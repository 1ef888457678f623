import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelError, type ModelRequest } from "../engine/model";
import { AiSdkModel, parseModelId, retryAfterMs } from "./sdk-model";
import { ProviderLimiter } from "./limiter";
import { envModel } from "./workspace-model";
import { startMockOpenAIServer, type MockOpenAIServer } from "./testing/mock-openai-server";

let mock: MockOpenAIServer;
beforeAll(async () => {
  mock = await startMockOpenAIServer();
});
afterAll(async () => mock.close());

function model(overrides: Partial<ConstructorParameters<typeof AiSdkModel>[0]> = {}) {
  return new AiSdkModel(
    { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-test-secret-123456", timeoutMs: 300, ...overrides },
    { retryBaseMs: 5, limiter: new ProviderLimiter({ maxConcurrency: 8 }) },
  );
}

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "mock/gpt-4o-mini",
  prompt: "Summarize: the quick brown fox jumps over the lazy dog near the river bank today",
  temperature: 0,
  task: "summarize",
  inputs: [],
  ...extra,
});

describe("AiSdkModel against the mock server", () => {
  it("completes with usage and cost", async () => {
    mock.reset();
    const res = await model().complete(request());
    expect(res.text).toMatch(/^Summary: /);
    expect(res.raw).toBe(res.text);
    expect(res.tokensIn).toBeGreaterThan(10);
    expect(res.tokensOut).toBeGreaterThan(3);
    expect(res.costUsd).toBeCloseTo((res.tokensIn * 0.15 + res.tokensOut * 0.6) / 1e6, 12);
    expect(res.attempts).toBe(1);
    expect(mock.count("chat/completions")).toBe(1);
    expect(mock.requests[0]!.authorization).toBe("Bearer sk-test-secret-123456");
    expect(mock.requests[0]!.body.model).toBe("gpt-4o-mini");
  });

  it("retries 429 (honouring Retry-After), 500 and timeouts, counting attempts", async () => {
    mock.reset();
    mock.enqueue({ kind: "429", retryAfterSeconds: 0.2 }, { kind: "500" }, { kind: "hang" });
    const started = Date.now();
    const res = await model().complete(request());
    expect(res.attempts).toBe(4);
    expect(mock.count("chat/completions")).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200 + 300);
  });

  it("gives up after maxRetries with a ModelError", async () => {
    mock.reset();
    mock.enqueue({ kind: "500" }, { kind: "500" }, { kind: "500" }, { kind: "500" });
    const err = await model().complete(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).options.attempts).toBe(4);
    expect((err as ModelError).kind).toBe("transient");
    expect((err as ModelError).options.raw).toContain("Internal server error");
  });

  it("auth errors are permanent and never echo the key", async () => {
    mock.reset();
    mock.enqueue({ kind: "401" });
    const err = (await model().complete(request()).catch((e: unknown) => e)) as ModelError;
    expect(err).toBeInstanceOf(ModelError);
    expect(err.message).toMatch(/authentication failed/);
    expect(err.options.attempts).toBe(1);
    expect(JSON.stringify({ m: err.message, o: err.options })).not.toContain("sk-test-secret-123456");
  });

  it("structured output: valid JSON passes, malformed JSON fails with the raw response", async () => {
    mock.reset();
    const schema = { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] };
    const ok = await model().complete(request({ task: "json", jsonSchema: schema }));
    expect(JSON.parse(ok.text)).toHaveProperty("summary");
    expect((mock.requests[0]!.body.response_format as { type: string }).type).toBe("json_schema");
    mock.enqueue({ kind: "malformed" });
    const err = (await model().complete(request({ task: "json", jsonSchema: schema })).catch((e: unknown) => e)) as ModelError;
    expect(err).toBeInstanceOf(ModelError);
    expect(err.options.raw).toBe('{"summary": "unterminated');
  });

  it("empty answers fail with a ModelError", async () => {
    mock.reset();
    mock.enqueue({ kind: "empty" });
    const err = (await model().complete(request()).catch((e: unknown) => e)) as ModelError;
    expect(err).toBeInstanceOf(ModelError);
    expect(err.message).toMatch(/empty/);
  });

  it("respects the provider's concurrency limit", async () => {
    const slow = await startMockOpenAIServer({ latencyMs: 50 });
    try {
      const m = new AiSdkModel(
        { name: "slow", kind: "openai-compatible", baseUrl: slow.baseUrl, timeoutMs: 5000 },
        { limiter: new ProviderLimiter({ maxConcurrency: 3 }) },
      );
      await Promise.all(Array.from({ length: 12 }, () => m.complete(request())));
      expect(slow.count("chat/completions")).toBe(12);
      expect(slow.maxInFlight).toBeLessThanOrEqual(3);
    } finally {
      await slow.close();
    }
  });
});

describe("provider kinds and the env fallback", () => {
  it("kind openai (the official OpenAI provider, chat completions) with a base URL", async () => {
    mock.reset();
    const m = new AiSdkModel({ name: "openai", kind: "openai", baseUrl: mock.baseUrl, apiKey: "sk-openai-1234567" }, { limiter: new ProviderLimiter({ maxConcurrency: 2 }) });
    const res = await m.complete(request({ model: "openai/gpt-4o-mini" }));
    expect(res.text).toMatch(/^Summary: /);
    expect(res.costUsd).toBeGreaterThan(0);
    expect(mock.requests[0]!.path).toBe("/v1/chat/completions");
    expect(mock.requests[0]!.body.model).toBe("gpt-4o-mini");
  });

  it("kind anthropic (Messages API)", async () => {
    mock.reset();
    const m = new AiSdkModel({ name: "anthropic", kind: "anthropic", baseUrl: mock.baseUrl, apiKey: "sk-ant-1234567" }, { limiter: new ProviderLimiter({ maxConcurrency: 2 }) });
    const res = await m.complete(request({ model: "anthropic/claude-3-5-haiku-latest" }));
    expect(res.text).toMatch(/^Summary: /);
    expect(res.tokensIn).toBeGreaterThan(10);
    expect(res.costUsd).toBeCloseTo((res.tokensIn * 0.8 + res.tokensOut * 4) / 1e6, 12);
    expect(mock.requests[0]!.path).toBe("/v1/messages");
  });

  it("the CLI's env model: OPENAI_API_KEY / OPENAI_BASE_URL, offline without network", async () => {
    mock.reset();
    const m = envModel({ env: { OPENAI_API_KEY: "sk-env-1234567", OPENAI_BASE_URL: mock.baseUrl } });
    expect((await m.complete(request({ model: "openai/gpt-4o-mini" }))).text).toMatch(/^Summary: /);
    expect(mock.requests[0]!.authorization).toBe("Bearer sk-env-1234567");
    const offline = await m.complete(request({ model: "offline/extractive", inputs: [{ id: "a", content: "One sentence here. Another one there." }] }));
    expect(offline.model).toBe("offline/extractive");
    expect(mock.count()).toBe(1);
    await expect(envModel({ env: {} }).complete(request({ model: "anthropic/claude-3-5-haiku" }))).rejects.toThrow(/ANTHROPIC_API_KEY/);
  });
});

describe("helpers", () => {
  it("parses model ids and Retry-After", () => {
    expect(parseModelId("openai/gpt-4o")).toEqual({ provider: "openai", name: "gpt-4o" });
    expect(parseModelId("router/meta-llama/llama-3.1-8b-instruct")).toEqual({ provider: "router", name: "meta-llama/llama-3.1-8b-instruct" });
    expect(parseModelId("claude-3-5-haiku")).toEqual({ provider: "anthropic", name: "claude-3-5-haiku" });
    expect(retryAfterMs({ "Retry-After": "2" })).toBe(2000);
    expect(retryAfterMs({ "retry-after-ms": "150" })).toBe(150);
    expect(retryAfterMs({})).toBeNull();
  });
});
