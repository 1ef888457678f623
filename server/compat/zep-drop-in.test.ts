/**
 * Issue 49 (Zep): the real `@getzep/zep-cloud` ZepClient over real HTTP against /compat/zep, with a
 * key as `synthex keys create` makes it (the default role, editor), on the mem0 template offline.
 * Users keep metadata (add, update); messages keep `name` and metadata; episode search finds a
 * thread's message by its words; graph.add of text and JSON; standalone graphs (graph_id);
 * user.delete and thread.delete work for the default role; Zep's quickstart finds its fact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("zep-drop-in");

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { zepRoute } = await import("@/server/compat/zep");
const { ZepClient } = await import("@getzep/zep-cloud");

let server: Awaited<ReturnType<typeof startRouteServer>>;
let key = "";

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "zep-drop-in@example.com", password: "zep-password-1" });
  await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  // As `synthex keys create <name>` makes it: the default role (editor), every pipeline.
  key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "zep agent" })).secret;
  server = await startRouteServer([[/^\/compat\/zep(\/|$)/, zepRoute]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const zep = () => new ZepClient({ apiKey: key, baseUrl: `${server.url}/compat/zep` });

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, ms = 90_000): Promise<T> {
  const until = Date.now() + ms;
  let v = await probe();
  while (!ok(v) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    v = await probe();
  }
  return v;
}

describe("ZepClient against /compat/zep (issue 49)", () => {
  it("users keep metadata on add and update", async () => {
    const client = zep();
    const added = await client.user.add({ userId: "meta", firstName: "Mia", metadata: { plan: "pro", seats: 3 } });
    expect(added).toMatchObject({ userId: "meta", firstName: "Mia", metadata: { plan: "pro", seats: 3 } });
    const updated = await client.user.update("meta", { lastName: "Rossi", metadata: { plan: "team" } });
    expect(updated).toMatchObject({ firstName: "Mia", lastName: "Rossi", metadata: { plan: "team", seats: 3 } });
    expect(await client.user.get("meta")).toMatchObject({ lastName: "Rossi", metadata: { plan: "team", seats: 3 } });
    // Too much to keep: a clear 400 saying what and where.
    await expect(client.user.update("meta", { metadata: { notes: "x".repeat(300) } })).rejects.toMatchObject({ statusCode: 400, body: { message: expect.stringMatching(/at most 200 are kept/) } });
  }, 60_000);

  it("messages keep name and metadata; episode search finds the thread's message by its words", async () => {
    const client = zep();
    await client.user.add({ userId: "nia" });
    await client.thread.create({ threadId: "nia-1", userId: "nia" });
    await client.thread.addMessages("nia-1", {
      messages: [
        { role: "user", name: "Nia Okafor", content: "My cello lessons moved to Thursday evenings.", metadata: { channel: "sms" } },
        { role: "assistant", name: "Helper", content: "Thanks for letting me know." },
      ],
    });
    const { messages } = await client.thread.get("nia-1");
    expect(messages!.map((m) => ({ role: m.role, name: m.name, content: m.content, metadata: m.metadata }))).toEqual([
      { role: "user", name: "Nia Okafor", content: "My cello lessons moved to Thursday evenings.", metadata: { channel: "sms" } },
      { role: "assistant", name: "Helper", content: "Thanks for letting me know.", metadata: {} },
    ]);
    expect((await client.thread.get("nia-1", { lastn: 1 })).messages!.map((m) => m.content)).toEqual(["Thanks for letting me know."]);
    const found = await client.graph.search({ userId: "nia", query: "When are the cello lessons?", scope: "episodes" });
    expect(found.episodes!.map((e) => e.content)[0]).toBe("My cello lessons moved to Thursday evenings.");
    expect((await client.graph.search({ userId: "nia", query: "volcano", scope: "episodes" })).episodes).toEqual([]);
  }, 60_000);

  it("graph.add of text and JSON, into a user's graph and a standalone graph", async () => {
    const client = zep();
    await client.user.add({ userId: "otto" });
    const text = await client.graph.add({ userId: "otto", type: "text", data: "Otto keeps bees on the roof of the library." });
    expect(text).toMatchObject({ content: "Otto keeps bees on the roof of the library.", source: "text" });
    const json = await client.graph.add({ userId: "otto", type: "json", data: JSON.stringify({ pet: { name: "Rex", kind: "dog" } }) });
    expect(json).toMatchObject({ content: "pet.name: Rex.\npet.kind: dog.", source: "json" });
    await expect(client.graph.add({ userId: "otto", type: "json", data: "{not json" })).rejects.toMatchObject({ statusCode: 400, body: { message: expect.stringMatching(/does not parse/) } });
    const { episodes } = await client.graph.episode.getByUserId("otto");
    expect(episodes!.map((e) => e.content)).toEqual(["Otto keeps bees on the roof of the library.", "pet.name: Rex.\npet.kind: dog."]);
    const edges = await eventually(() => client.graph.edge.getByUserId("otto", {}), (e) => e.some((x) => /bees/.test(x.fact)));
    expect(edges.some((e) => /bees/.test(e.fact))).toBe(true);

    await client.graph.create({ graphId: "handbook", name: "Handbook" });
    expect(await client.graph.get("handbook")).toMatchObject({ graphId: "handbook", name: "Handbook" });
    await client.graph.add({ graphId: "handbook", type: "text", data: "Expense reports are due on the fifth of each month." });
    const hits = await client.graph.search({ graphId: "handbook", query: "When are expense reports due?", scope: "episodes" });
    expect(hits.episodes!.map((e) => e.content)).toEqual(["Expense reports are due on the fifth of each month."]);
    expect((await client.graph.listAll()).graphs!.map((g) => g.graphId)).toContain("handbook");
    await client.graph.delete("handbook");
    await expect(client.graph.get("handbook")).rejects.toMatchObject({ statusCode: 404 });
  }, 120_000);

  it("user.delete and thread.delete work for the default role (editor): gone from the API, memories deleted", async () => {
    const client = zep();
    await client.user.add({ userId: "pat" });
    await client.thread.create({ threadId: "pat-1", userId: "pat" });
    await client.thread.addMessages("pat-1", { messages: [{ role: "user", content: "I keep my passport in the red tin box." }] });
    const search = () => client.graph.search({ userId: "pat", query: "Where is my passport?" });
    await eventually(search, (r) => (r.edges ?? []).some((e) => /red tin box/.test(e.fact)));
    await client.thread.delete("pat-1");
    await expect(client.thread.get("pat-1")).rejects.toMatchObject({ statusCode: 404 });
    expect((await search()).edges!.some((e) => /red tin box/.test(e.fact))).toBe(false);
    await client.user.delete("pat");
    await expect(client.user.get("pat")).rejects.toMatchObject({ statusCode: 404 });
    // Added again, the user starts afresh.
    await client.user.add({ userId: "pat" });
    expect((await client.graph.episode.getByUserId("pat")).episodes).toEqual([]);
  }, 120_000);

  it("Zep's quickstart (memory_example): user with metadata, thread, messages; getUserContext and graph.search find the fact", async () => {
    const client = zep();
    await client.user.add({ userId: "jane", email: "jane@example.com", firstName: "Jane", lastName: "Smith", metadata: { vip: "yes" } });
    await client.thread.create({ threadId: "jane-quickstart", userId: "jane" });
    await client.thread.addMessages("jane-quickstart", {
      messages: [
        { role: "user", name: "Jane", content: "Hi, I'm Jane. I'm allergic to peanuts and I'm planning a trip to Kyoto in April." },
        { role: "assistant", name: "AI", content: "Great, I'll remember that. How can I help with Kyoto?" },
      ],
    });
    const edges = await eventually(
      () => client.graph.search({ userId: "jane", query: "What is Jane allergic to?", scope: "edges" }),
      (r) => (r.edges ?? []).some((e) => /peanuts/.test(e.fact)),
    );
    expect(edges.edges!.some((e) => /peanuts/.test(e.fact))).toBe(true);
    const { context } = await client.thread.getUserContext("jane-quickstart");
    expect(context).toMatch(/<FACTS>[\s\S]*peanuts[\s\S]*<\/FACTS>/);
  }, 120_000);
});
