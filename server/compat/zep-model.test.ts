/**
 * Issue 49 (Zep) with a model: Zep's quickstart (memory_example: a user with metadata, a thread, its
 * messages, then thread.getUserContext and graph.search) against /compat/zep on the mem0 template
 * whose facts and consolidate steps call an OpenAI-compatible model (the mock server, real HTTP).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockBehaviour, MockRequest } from "@/server/llm/testing/mock-openai-server";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("zep-model");
process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-zep-model";

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { upsertProvider } = await import("@/server/services/providers");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { startMockOpenAIServer } = await import("@/server/llm/testing/mock-openai-server");
const { zepRoute } = await import("@/server/compat/zep");
const { ZepClient } = await import("@getzep/zep-cloud");

let server: Awaited<ReturnType<typeof startRouteServer>>;
let mock: Awaited<ReturnType<typeof startMockOpenAIServer>>;
let apiKey = "";

/** The facts step: the user's lines as facts; the decision: ADD (nothing is there yet). */
function behave(request: MockRequest): MockBehaviour {
  if (request.text.includes("personal information organizer")) {
    const said = [...request.text.matchAll(/^user: (.+)$/gm)].map((m) => `Jane says: ${m[1]!.trim()}`);
    return { kind: "ok", content: JSON.stringify(said) };
  }
  const fact = /New fact: (.+)/.exec(request.text)?.[1]?.trim() ?? "";
  return { kind: "ok", content: JSON.stringify({ event: "ADD", text: fact }) };
}

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "zep-model@example.com", password: "zep-password-1" });
  mock = await startMockOpenAIServer({ behave, apiKey: "sk-zep" });
  await upsertProvider(db, workspace.id, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-zep", timeoutMs: 5000 });
  await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0", "chatgpt-export", { model: "mock/gpt-test" }) });
  // As `synthex keys create <name>` makes it: the default role (editor).
  apiKey = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "zep agent" })).secret;
  server = await startRouteServer([[/^\/compat\/zep(\/|$)/, zepRoute]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await mock?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

describe("Zep's quickstart with a model-backed pipeline", () => {
  it("getUserContext and graph.search find the fact the model extracted", async () => {
    const zep = new ZepClient({ apiKey, baseUrl: `${server.url}/compat/zep` });
    await zep.user.add({ userId: "jane", email: "jane@example.com", firstName: "Jane", lastName: "Smith", metadata: { vip: "yes" } });
    await zep.thread.create({ threadId: "jane-quickstart", userId: "jane" });
    await zep.thread.addMessages("jane-quickstart", {
      messages: [
        { role: "user", name: "Jane", content: "I'm allergic to peanuts and I'm planning a trip to Kyoto in April." },
        { role: "assistant", name: "AI", content: "Great, I'll remember that." },
      ],
    });
    const until = Date.now() + 90_000;
    let search = await zep.graph.search({ userId: "jane", query: "What is Jane allergic to?", scope: "edges" });
    while (!(search.edges ?? []).some((e) => /peanuts/.test(e.fact)) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      search = await zep.graph.search({ userId: "jane", query: "What is Jane allergic to?", scope: "edges" });
    }
    expect(search.edges!.map((e) => e.fact)).toContain("Jane says: I'm allergic to peanuts and I'm planning a trip to Kyoto in April.");
    expect((await zep.thread.getUserContext("jane-quickstart")).context).toMatch(/<FACTS>[\s\S]*Jane says: I'm allergic to peanuts[\s\S]*<\/FACTS>/);
    expect(mock.count("chat/completions")).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
