/**
 * Issue 36 with a model: the mem0 template's facts and consolidate steps call an OpenAI-compatible
 * model (the mock server, real HTTP), and the real `mem0ai` MemoryClient's `add` answers the
 * model's decisions: ADD for a new fact, NONE when the model says a memory already has it; Mem0's
 * quickstart (a user's diet, an assistant's reply) finds the user's fact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockBehaviour, MockRequest } from "@/server/llm/testing/mock-openai-server";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("mem0-model");
process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-mem0-model";

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { upsertProvider } = await import("@/server/services/providers");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { startMockOpenAIServer } = await import("@/server/llm/testing/mock-openai-server");
const { mem0Route } = await import("@/server/compat/mem0");
const { MemoryClient } = await import("mem0ai");

let server: Awaited<ReturnType<typeof startRouteServer>>;
let mock: Awaited<ReturnType<typeof startMockOpenAIServer>>;
let apiKey = "";

/** The facts step gets one fact per message line; the decision is NONE when a memory says the same, else ADD. */
function behave(request: MockRequest): MockBehaviour {
  if (request.text.includes("personal information organizer")) {
    const said = [...request.text.matchAll(/^user: (.+)$/gm)].map((m) => `The user says: ${m[1]!.trim()}`);
    return { kind: "ok", content: JSON.stringify(said) };
  }
  const fact = /New fact: (.+)/.exec(request.text)?.[1]?.trim() ?? "";
  const same = [...request.text.matchAll(/- \[(mem-[0-9a-f]+)\] \([0-9.]+\) (.+)/g)].find((m) => m[2]!.trim() === fact);
  return { kind: "ok", content: JSON.stringify(same ? { event: "NONE", memory_id: same[1] } : { event: "ADD", text: fact }) };
}

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "mem0-model@example.com", password: "mem0-password-1" });
  mock = await startMockOpenAIServer({ behave, apiKey: "sk-mem0" });
  await upsertProvider(db, workspace.id, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-mem0", timeoutMs: 5000 });
  const { pipeline } = await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0", "chatgpt-export", { model: "mock/gpt-test" }) });
  apiKey = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "agent", role: "admin", pipelines: [pipeline.id] })).secret;
  server = await startRouteServer([[/^\/compat\/mem0(\/|$)/, mem0Route]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await mock?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

describe("mem0ai MemoryClient with a model-backed pipeline", () => {
  it("add answers the model's decisions: ADD, then NONE for a fact a memory already has", async () => {
    const mem0 = new MemoryClient({ apiKey, host: `${server.url}/compat/mem0` });
    const say = (content: string) => [{ role: "user" as const, content }];
    // Mem0 v3: the add is an event, PENDING; GET /v1/event/{id}/ answers its status, then its results (issue 49).
    const queued = (await mem0.add(say("I am vegetarian."), { userId: "ann" })) as unknown as { eventId: string; status: string };
    expect(queued).toMatchObject({ status: "PENDING", eventId: expect.any(String) });
    const eventUrl = `${server.url}/compat/mem0/v1/event/${queued.eventId}/`;
    let event: { status: string; event_type: string; results: Array<{ id: string; event: string; memory: string }> };
    for (;;) {
      event = await (await fetch(eventUrl, { headers: { authorization: `Token ${apiKey}` } })).json();
      if (event.status !== "PENDING") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(event).toMatchObject({ status: "SUCCEEDED", event_type: "ADD" });
    const first = event;
    expect(first.results).toEqual([expect.objectContaining({ event: "ADD", memory: "The user says: I am vegetarian." })]);
    // async_mode: false answers the results directly.
    const again = (await mem0.add(say("I am vegetarian."), { userId: "ann", ...({ asyncMode: false } as object) })) as unknown as { results: Array<{ id: string; event: string }> };
    expect(again.results).toEqual([expect.objectContaining({ event: "NONE", id: first.results[0]!.id })]);
    const all = (await mem0.getAll({ filters: { user_id: "ann" } })) as unknown as { results: Array<{ memory: string }> };
    expect(all.results.map((r) => r.memory)).toEqual(["The user says: I am vegetarian."]);
    expect(mock.count("chat/completions")).toBeGreaterThanOrEqual(4);
  }, 120_000);

  it("Mem0's quickstart finds its fact with a model: the user's fact, not the assistant's reply (issue 49)", async () => {
    const mem0 = new MemoryClient({ apiKey, host: `${server.url}/compat/mem0` });
    const messages = [
      { role: "user" as const, content: "I'm a vegetarian and allergic to nuts." },
      { role: "assistant" as const, content: "Got it! I'll remember your dietary preferences." },
    ];
    const added = (await mem0.add(messages, { userId: "alex", ...({ asyncMode: false } as object) })) as unknown as { results: Array<{ event: string; memory: string }> };
    expect(added.results).toEqual([expect.objectContaining({ event: "ADD", memory: "The user says: I'm a vegetarian and allergic to nuts." })]);
    // As Mem0's own suite does (waitForSearchResults): the search index may follow the memories by a moment.
    let found: Array<{ memory: string; userId: string }> = [];
    for (let i = 0; i <= 50 && !found.length; i++) {
      if (i) await new Promise((done) => setTimeout(done, 200));
      found = ((await mem0.search("What are my dietary restrictions?", { filters: { user_id: "alex" } })) as unknown as { results: typeof found }).results;
    }
    expect(found.map((r) => [r.memory, r.userId])).toEqual([["The user says: I'm a vegetarian and allergic to nuts.", "alex"]]);
  }, 120_000);
});
