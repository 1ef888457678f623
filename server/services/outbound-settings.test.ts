/**
 * Server-side request forgery through settings: provider base URLs and webhook URLs are checked
 * when saved and when called; a provider re-pointed elsewhere does not take its stored key along;
 * "test connection" says only "reachable" or a provider-level problem.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { decryptSecret } from "../auth/encryption";
import { Pipeline } from "../pipeline/sdk";
import { startMockOpenAIServer, type MockOpenAIServer } from "../llm/testing/mock-openai-server";
import { createTestDb } from "../store/test-db";
import type { Db } from "../core/db";
import { DomainError } from "../core/errors";
import { createPipeline } from "./pipelines";
import { testProviderConnection, upsertProvider } from "./providers";
import { signUp } from "./users";
import { deliverPending } from "./webhooks";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-outbound";
const KEY = "sk-live-REAL-KEY-0123456789";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let mock: MockOpenAIServer;
let listener: Server;
let listenerPort: number;
const hits: string[] = [];

/** Production defaults: nothing private allowed, https only. */
function strictEnv() {
  vi.stubEnv("SYNTHEX_ALLOW_HTTP_HOSTS", "");
  vi.stubEnv("SYNTHEX_ALLOW_PRIVATE_NETWORKS", "");
}

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { workspace } = await signUp(db, { email: "ssrf@example.com", password: "ssrf-password-1" });
  workspaceId = workspace.id;
  mock = await startMockOpenAIServer({ apiKey: KEY });
  listener = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.end("ok");
  });
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  listenerPort = (listener.address() as AddressInfo).port;
});
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await mock.close();
  listener.close();
  await close();
});

describe("provider base URLs", () => {
  it.each([
    ["http://169.254.169.254/latest/meta-data/", /use https/],
    ["https://169.254.169.254/v1", /169\.254\.169\.254 is a private, loopback, link-local/],
    ["https://127.0.0.1:8443/v1", /127\.0\.0\.1 is a private/],
    ["https://localhost:8443/v1", /localhost resolves to 127\.0\.0\.1/],
  ])("%s is refused when saved, and nothing is stored", async (baseUrl, why) => {
    strictEnv();
    const err = await refusal(upsertProvider(db, workspaceId, { name: "internal", kind: "openai-compatible", baseUrl, apiKey: KEY }));
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.message).toMatch(/^Base URL: /);
    expect(err.message).toMatch(why);
    expect(await db.providerCredential.count({ where: { workspaceId, name: "internal" } })).toBe(0);
  });

  it("a provider saved while allowed is refused when called once the allowance is gone", async () => {
    await upsertProvider(db, workspaceId, { name: "was-allowed", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: KEY });
    const before = mock.requests.length;
    strictEnv();
    const result = await testProviderConnection(db, workspaceId, { name: "was-allowed" });
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/uses http: use https/);
    vi.stubEnv("SYNTHEX_ALLOW_HTTP_HOSTS", "127.0.0.1");
    expect((await testProviderConnection(db, workspaceId, { name: "was-allowed" })).message).toMatch(/is not allowed: 127\.0\.0\.1 is a private/);
    expect(mock.requests.length).toBe(before); // the request never left
  });

  it("re-pointing a provider (base URL or kind) without its key is refused; the stored key stays where it was", async () => {
    await upsertProvider(db, workspaceId, { name: "moving", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: KEY });
    const stored = await db.providerCredential.findUniqueOrThrow({ where: { workspaceId_name: { workspaceId, name: "moving" } } });
    const otherUrl = `http://127.0.0.1:${listenerPort}/v1`;

    const moved = await refusal(upsertProvider(db, workspaceId, { name: "moving", kind: "openai-compatible", baseUrl: otherUrl }));
    expect(moved.message).toBe('Changing the base URL or kind of "moving" needs its API key again: enter the key (or an empty key to remove it).');
    const kind = await refusal(upsertProvider(db, workspaceId, { name: "moving", kind: "openai", baseUrl: mock.baseUrl }));
    expect(kind.message).toMatch(/needs its API key again/);
    expect(await db.providerCredential.findUniqueOrThrow({ where: { id: stored.id } })).toEqual(stored);
    expect(hits).toEqual([]);

    // Same URL and kind without a key keeps it (changing limits is not re-pointing).
    await upsertProvider(db, workspaceId, { name: "moving", kind: "openai-compatible", baseUrl: mock.baseUrl, maxConcurrency: 2 });
    const kept = await db.providerCredential.findUniqueOrThrow({ where: { id: stored.id } });
    expect(decryptSecret(kept.encryptedKey!)).toBe(KEY);
    expect(kept.maxConcurrency).toBe(2);

    // With a key (the new host's), it moves.
    await upsertProvider(db, workspaceId, { name: "moving", kind: "openai-compatible", baseUrl: otherUrl, apiKey: "sk-other-host-key" });
    expect(decryptSecret((await db.providerCredential.findUniqueOrThrow({ where: { id: stored.id } })).encryptedKey!)).toBe("sk-other-host-key");
  });

  it("test connection answers reachable or a provider-level problem, never socket details", async () => {
    await upsertProvider(db, workspaceId, { name: "good", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: KEY });
    await upsertProvider(db, workspaceId, { name: "wrong-key", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-wrong-0000000000" });
    await upsertProvider(db, workspaceId, { name: "not-a-provider", kind: "openai-compatible", baseUrl: `http://127.0.0.1:${listenerPort}/v1`, apiKey: "sk-x-000000000" });
    await upsertProvider(db, workspaceId, { name: "closed-port", kind: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-y-000000000" });

    expect(await testProviderConnection(db, workspaceId, { name: "good" })).toMatchObject({ ok: true, message: expect.stringMatching(/^Reachable: \d+ tokens in/) });
    expect((await testProviderConnection(db, workspaceId, { name: "wrong-key" })).message).toBe("Reachable, but the provider refused the API key.");
    const notProvider = await testProviderConnection(db, workspaceId, { name: "not-a-provider" });
    const closed = await testProviderConnection(db, workspaceId, { name: "closed-port" });
    // An HTTP server that is no provider and a closed port look the same from outside.
    expect(notProvider.message).toBe("Could not reach a compatible provider at this base URL: check the URL, the kind and the model name.");
    expect(closed.message).toBe(notProvider.message);
    for (const r of [notProvider, closed]) expect(r.message).not.toMatch(/HTTP|ECONN|socket|closed|port/i);
  });

  it("test connection says DNS when the host name does not resolve (issue #33 item 9), not the URL", async () => {
    // .invalid never resolves (RFC 6761): NXDOMAIN, or no answer on a machine without a resolver.
    await upsertProvider(db, workspaceId, { name: "no-such-host", kind: "openai-compatible", baseUrl: "https://llm.synthex-check.invalid/v1", apiKey: "sk-z-000000000" });
    const result = await testProviderConnection(db, workspaceId, { name: "no-such-host" });
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/^DNS/);
    expect(result.message).toContain("llm.synthex-check.invalid");
    expect(result.message).not.toMatch(/check the URL, the kind/);
  });
});

describe("webhook URLs", () => {
  const spec = (url: string) =>
    new Pipeline("hooks")
      .source("chats", { format: "jsonl" })
      .output("context", { from: "chats", surface: "projection", template: "{{ record.content }}", webhook: { url } })
      .toSpec();

  it.each([
    [`http://127.0.0.1:${9}/hook`, /use https/],
    ["https://127.0.0.1/hook", /127\.0\.0\.1 is a private/],
    ["https://169.254.169.254/hook", /169\.254\.169\.254 is a private/],
    ["https://localhost/hook", /localhost resolves to 127\.0\.0\.1/],
  ])("%s is refused when the pipeline is saved", async (url, why) => {
    strictEnv();
    const err = await refusal(createPipeline(db, workspaceId, { name: `hooks-${Math.random().toString(36).slice(2, 8)}`, spec: spec(url) }));
    expect(err.message).toMatch(/^The pipeline spec is invalid:\noutputs\.context\.webhook\.url: /);
    expect(err.message).toMatch(why);
    expect(await db.pipeline.count({ where: { workspaceId, name: { startsWith: "hooks-" } } })).toBe(0);
  });

  it("a delivery to an address that is not allowed fails at once, without a request or retries", async () => {
    hits.length = 0;
    const { pipeline } = await createPipeline(db, workspaceId, { name: "allowed-then-not", spec: spec(`http://127.0.0.1:${listenerPort}/hook`) });
    const delivery = await db.webhookDelivery.create({
      data: { workspaceId, pipelineId: pipeline.id, output: "context", url: `http://127.0.0.1:${listenerPort}/hook`, payload: { event: "projection.updated" }, status: "pending" },
    });
    strictEnv();
    expect(await deliverPending(db)).toMatchObject({ attempted: 1, failed: 1, retrying: 0 });
    const after = await db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } });
    expect(after.status).toBe("failed");
    expect(after.lastError).toMatch(/use https|is not allowed/);
    expect(hits).toEqual([]);
  });
});
