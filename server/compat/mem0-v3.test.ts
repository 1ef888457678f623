/**
 * Issue 49: Mem0 v3's contract where its own integration suite (bench/peers/mem0) relies on it, with
 * the real `mem0ai` client over real HTTP: an add is an event (PENDING, then GET /v1/event/{id}/
 * with its status and ADD/UPDATE/DELETE/NONE results; another scope's or workspace's event is
 * unknown); `"*"` wildcards on delete_all exactly as Mem0 documents them; a malformed id is Mem0's
 * ValidationError (400), a well-formed unknown one MemoryNotFoundError; an unsupported method
 * (PATCH included) is a 400 naming the methods to use; an update keeps created_at; the default
 * (editor) key can delete users; update sets a memory's metadata.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("mem0-v3");

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { mem0Route } = await import("@/server/compat/mem0");
const { MemoryClient, MemoryNotFoundError, ValidationError } = await import("mem0ai");

let server: Awaited<ReturnType<typeof startRouteServer>>;
const keys = { editor: "", alice: "", other: "" };

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "v3@example.com", password: "v3-password-1" });
  await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  const owner = { userId: user.id, role: "owner" as const };
  // As `synthex keys create` makes it: the default role, editor.
  keys.editor = (await createApiKey(db, workspace.id, owner, { name: "default" })).secret;
  keys.alice = (await createApiKey(db, workspace.id, owner, { name: "alice", scopePrefix: "user:alice" })).secret;
  const other = await signUp(db, { email: "v3-other@example.com", password: "v3-password-2" });
  await createPipeline(db, other.workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  keys.other = (await createApiKey(db, other.workspace.id, { userId: other.user.id, role: "owner" }, { name: "other" })).secret;
  server = await startRouteServer([[/^\/compat\/mem0(\/|$)/, mem0Route]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const client = (apiKey: string) => new MemoryClient({ apiKey, host: `${server.url}/compat/mem0` });
const say = (content: string) => [{ role: "user" as const, content }];
const raw = (apiKey: string, method: string, path: string) => fetch(`${server.url}/compat/mem0${path}`, { method, headers: { authorization: `Token ${apiKey}`, "content-type": "application/json" } });
type Event = { id: string; status: string; event_type: string; results: Array<{ id: string; event: string; memory: string; user_id: string }> };

async function settled(apiKey: string, eventId: string): Promise<Event> {
  for (let i = 0; i < 300; i++) {
    const event = (await (await raw(apiKey, "GET", `/v1/event/${eventId}/`)).json()) as Event;
    if (event.status !== "PENDING") return event;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the event stayed PENDING");
}

/** Adds and waits for the event: the memories it made. */
async function addNow(apiKey: string, text: string, ids: Record<string, string>) {
  const queued = (await client(apiKey).add(say(text), ids)) as unknown as { eventId: string };
  return (await settled(apiKey, queued.eventId)).results;
}

const ids = async (apiKey: string, filters: Record<string, unknown>) => ((await client(apiKey).getAll({ filters })) as unknown as { results: Array<{ id: string }> }).results.map((r) => r.id);

describe("Mem0 v3 contract (issue 49)", () => {
  it("add answers an event, PENDING; GET /v1/event/{id}/ answers its status and results; another scope's event is unknown", async () => {
    const added = (await client(keys.editor).add(say("I keep the canoe paddles in the boathouse loft."), { userId: "bob" })) as unknown as { eventId: string; status: string; results?: unknown };
    expect(added).toMatchObject({ status: "PENDING", eventId: expect.any(String) });
    expect(added.results).toBeUndefined();
    const event = await settled(keys.editor, added.eventId);
    expect(event).toMatchObject({ id: added.eventId, status: "SUCCEEDED", event_type: "ADD" });
    expect(event.results.length).toBeGreaterThan(0);
    expect(event.results[0]).toMatchObject({ event: "ADD", user_id: "bob", memory: expect.stringMatching(/canoe paddles/) });
    expect(["ADD", "UPDATE", "DELETE", "NONE"]).toEqual(expect.arrayContaining(event.results.map((r) => r.event)));

    // Alice's key (scope user:alice) and another workspace get the answer of an event that does not exist.
    const unknown = await raw(keys.alice, "GET", "/v1/event/no-such-event/");
    for (const key of [keys.alice, keys.other]) {
      const res = await raw(key, "GET", `/v1/event/${added.eventId}/`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual(await unknown.clone().json());
    }
  }, 120_000);

  it("delete_all: user_id=\"*\" deletes every memory with a user, all four \"*\" every memory; nothing named is refused", async () => {
    const [withUser] = await addNow(keys.editor, "My kayak is bright orange.", { userId: "erin" });
    const [agentOnly] = await addNow(keys.editor, "The concierge speaks Portuguese.", { agentId: "concierge" });
    expect(withUser && agentOnly).toBeTruthy();
    const mem0 = client(keys.editor);
    await expect(mem0.deleteAll({})).rejects.toThrow(/at least one of user_id/);

    expect(await mem0.deleteAll({ userId: "*" })).toMatchObject({ message: expect.any(String) });
    expect(await ids(keys.editor, { user_id: "erin" })).toEqual([]);
    expect(await ids(keys.editor, { agent_id: "concierge" })).toContain(agentOnly!.id);

    await addNow(keys.editor, "I store the tent poles in the garage.", { userId: "erin", runId: "trip-9" });
    await mem0.deleteAll({ userId: "*", agentId: "*", appId: "*", runId: "*" });
    expect(((await mem0.getAll({})) as unknown as { count: number }).count).toBe(0);
  }, 120_000);

  it("a malformed id is a ValidationError, a well-formed unknown one MemoryNotFoundError", async () => {
    const mem0 = client(keys.editor);
    await expect(mem0.get("nonexistent-memory-id-12345")).rejects.toThrow(ValidationError);
    await expect(mem0.get("00000000-0000-0000-0000-000000000000")).rejects.toThrow(MemoryNotFoundError);
    await expect(mem0.get("mem-0000000000000000")).rejects.toThrow(MemoryNotFoundError);
    await expect(mem0.history("not a memory")).rejects.toThrow(ValidationError);
  }, 60_000);

  it("an unsupported method, PATCH included, is a 400 naming the methods to use", async () => {
    const [memory] = await addNow(keys.editor, "I prefer aisle seats on trains.", { userId: "fay" });
    for (const [method, path, allowed] of [
      ["PATCH", `/v1/memories/${memory!.id}/`, /use GET or PUT or DELETE/],
      ["POST", "/v1/entities/", /use GET/],
      ["PATCH", "/v3/memories/add/", /use POST/],
    ] as const) {
      const res = await raw(keys.editor, method, path);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect((await res.json()).detail).toMatch(allowed);
    }
  }, 120_000);

  it("an update keeps created_at and moves updated_at", async () => {
    const [memory] = await addNow(keys.editor, "My bicycle has a green bell.", { userId: "gus" });
    const mem0 = client(keys.editor);
    const before = await mem0.get(memory!.id);
    await new Promise((r) => setTimeout(r, 1100));
    await mem0.update(memory!.id, { text: "My bicycle has a red bell." });
    const after = await mem0.get(memory!.id);
    expect(after.memory).toBe("My bicycle has a red bell.");
    expect(after.createdAt).toBe(before.createdAt);
    expect(new Date(after.updatedAt!).getTime()).toBeGreaterThan(new Date(before.createdAt!).getTime());
    const listed = ((await mem0.getAll({ filters: { user_id: "gus" } })) as unknown as { results: Array<{ id: string; createdAt: string }> }).results.find((r) => r.id === memory!.id);
    expect(listed?.createdAt).toBe(before.createdAt);
  }, 120_000);

  it("update sets a memory's metadata (kept with its text, on later versions too)", async () => {
    const [memory] = await addNow(keys.editor, "I collect vintage fountain pens.", { userId: "ivy" });
    const mem0 = client(keys.editor);
    expect((await mem0.get(memory!.id)).metadata).toBeNull();
    await mem0.update(memory!.id, { metadata: { source: "integration-test", priority: "high" } });
    const tagged = await mem0.get(memory!.id);
    expect(tagged.metadata).toEqual({ source: "integration-test", priority: "high" });
    expect(tagged.memory).toBe(memory!.memory);
    await mem0.update(memory!.id, { text: "I collect vintage fountain pens and inks." });
    expect(await mem0.get(memory!.id)).toMatchObject({ memory: "I collect vintage fountain pens and inks.", metadata: { source: "integration-test", priority: "high" } });
    await expect(mem0.update(memory!.id, { timestamp: 5 })).rejects.toThrow(ValidationError);
  }, 120_000);

  it("the default (editor) key deletes a user: its memories go, the user leaves users()", async () => {
    await addNow(keys.editor, "I am learning the cello.", { userId: "hana" });
    const mem0 = client(keys.editor);
    expect((await mem0.users()).results.map((u) => u.name)).toContain("hana");
    expect(await mem0.deleteUsers({ userId: "hana" })).toMatchObject({ message: "Entity deleted successfully." });
    expect(await ids(keys.editor, { user_id: "hana" })).toEqual([]);
    expect((await mem0.users()).results.map((u) => u.name)).not.toContain("hana");
  }, 120_000);
});
