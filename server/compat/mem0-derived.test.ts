/**
 * Issues 49 and 50: Mem0's endpoint on pipelines without a memory step, with the real `mem0ai`
 * client over real HTTP (offline model). Mem0's quickstart on the Synapsis template (a graph: its
 * memories are the relations' current beliefs) and on the default template chat-memory (its
 * memories are its search output's records); edits of those derived records are refused with
 * what to do, and an admin key's delete_all purges the scope.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("mem0-derived");

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { mem0Route } = await import("@/server/compat/mem0");
const { MemoryClient } = await import("mem0ai");

let server: Awaited<ReturnType<typeof startRouteServer>>;
let adminKey = "";
let editorKey = "";

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "mem0-derived@example.com", password: "derived-password-1" });
  await createPipeline(db, workspace.id, { name: "graph", spec: templateSpec("synapsis") });
  await createPipeline(db, workspace.id, { name: "default", spec: templateSpec("chat-memory") });
  const owner = { userId: user.id, role: "owner" as const };
  adminKey = (await createApiKey(db, workspace.id, owner, { name: "admin", role: "admin" })).secret;
  editorKey = (await createApiKey(db, workspace.id, owner, { name: "default" })).secret;
  server = await startRouteServer([[/^\/compat\/mem0(\/|$)/, mem0Route]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const client = (pipeline: string, key = adminKey) => new MemoryClient({ apiKey: key, host: `${server.url}/compat/mem0/p/${pipeline}` });
const raw = (pipeline: string, method: string, path: string, body?: unknown, key = adminKey) =>
  fetch(`${server.url}/compat/mem0/p/${pipeline}${path}`, { method, headers: { authorization: `Token ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

type Found = Array<{ id: string; memory: string; userId: string | null }>;

/** Mem0's quickstart: add, wait for the event, search as the quickstart does. */
async function quickstart(pipeline: string): Promise<Found> {
  const queued = (await client(pipeline).add([{ role: "user", content: "I'm a vegetarian and allergic to nuts." }], { userId: "alex" })) as unknown as { eventId: string };
  for (let i = 0; i < 600; i++) {
    const event = (await (await raw(pipeline, "GET", `/v1/event/${queued.eventId}/`)).json()) as { status: string };
    if (event.status === "SUCCEEDED") break;
    expect(event.status).toBe("PENDING");
    await new Promise((r) => setTimeout(r, 100));
  }
  const got = ((await client(pipeline).search("What are my dietary restrictions?", { filters: { user_id: "alex" } })) as unknown as { results: Found }).results;
  return got;
}

describe("Mem0 on a pipeline without a memory step (issues 49, 50)", () => {
  it("Synapsis: the quickstart's fact comes back from the relations' beliefs; getAll, get and history read them; edits are refused", async () => {
    const found = await quickstart("graph");
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]!.memory).toMatch(/vegetarian/i);
    expect(found[0]!.userId).toBe("alex");

    const all = ((await client("graph").getAll({ filters: { user_id: "alex" } })) as unknown as { results: Found }).results;
    expect(all.map((m) => m.id)).toContain(found[0]!.id);
    const one = (await client("graph").get(found[0]!.id)) as unknown as { memory: string; created_at?: string; createdAt?: string };
    expect(one.memory).toBe(found[0]!.memory);
    const history = (await client("graph").history(found[0]!.id)) as unknown as Array<{ event: string; newMemory?: string; new_memory?: string }>;
    expect(history).toHaveLength(1);
    expect(history[0]!.event).toBe("ADD");

    const update = await raw("graph", "PUT", `/v1/memories/${found[0]!.id}/`, { text: "I eat fish." });
    expect(update.status).toBe(400);
    expect((await update.json()).detail).toMatch(/has no memory step: its memories are derived by its steps \(relations\).*on a branch.*purge a scope/);
    const batch = await raw("graph", "DELETE", "/v1/batch/", { memories: [{ memory_id: found[0]!.id }] });
    expect(batch.status).toBe(400);
    await expect(client("graph").delete(found[0]!.id)).rejects.toThrow(/derived by its steps/);
    const unknown = await raw("graph", "GET", "/v1/memories/rec-does-not-exist/");
    expect(unknown.status).toBe(404);
  }, 180_000);

  it("the default template (chat-memory): the quickstart's fact comes back from its search output's records", async () => {
    const found = await quickstart("default");
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]!.memory).toMatch(/vegetarian/i);
    expect(found.every((m) => m.userId === "alex")).toBe(true);
  }, 180_000);

  it("delete_all purges the user's scope with an admin key; an editor key is told what it needs", async () => {
    const editor = await raw("graph", "DELETE", "/v1/memories/?user_id=alex", undefined, editorKey);
    expect(editor.status).toBe(403);
    expect((await editor.json()).detail).toMatch(/Purging needs an admin key/);
    expect(await client("graph").deleteAll({ userId: "alex" })).toMatchObject({ message: expect.stringMatching(/1 scope purged/) });
    expect(await client("graph").getAll({ filters: { user_id: "alex" } })).toMatchObject({ count: 0, results: [] });
  }, 120_000);
});
