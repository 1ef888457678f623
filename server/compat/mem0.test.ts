/**
 * Issue 36: the real `mem0ai` MemoryClient, unchanged, against Synthex at /compat/mem0 over real
 * HTTP (the route handler behind node's HTTP server), on the offline model: add → search finds it
 * → get → update → history shows both versions → delete → get all no longer lists it; a
 * scope-limited key sees only its scope; another workspace's key sees nothing; what Synthex cannot
 * honour is refused in Mem0's error shape. Mem0's telemetry is off (MEM0_TELEMETRY=false, its
 * documented switch) and ~/.mem0 is a temp dir: the test needs no network.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("mem0");

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
const keys = { admin: "", alice: "", other: "", readOnly: "" };
let db: Awaited<ReturnType<typeof openMigratedDb>>;
let workspaceId = "";

beforeAll(async () => {
  db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "mem0@example.com", password: "mem0-password-1" });
  workspaceId = workspace.id;
  const { pipeline } = await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  await createPipeline(db, workspace.id, { name: "another", spec: templateSpec("mem0") });
  const owner = { userId: user.id, role: "owner" as const };
  keys.admin = (await createApiKey(db, workspace.id, owner, { name: "mem0 agent", role: "admin", pipelines: [pipeline.id] })).secret;
  keys.alice = (await createApiKey(db, workspace.id, owner, { name: "alice only", role: "editor", pipelines: [pipeline.id], scopePrefix: "user:alice" })).secret;
  keys.readOnly = (await createApiKey(db, workspace.id, owner, { name: "reader", role: "editor", readOnly: true, pipelines: [pipeline.id] })).secret;
  const other = await signUp(db, { email: "mem0-other@example.com", password: "mem0-password-2" });
  await createPipeline(db, other.workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  keys.other = (await createApiKey(db, other.workspace.id, { userId: other.user.id, role: "owner" }, { name: "other", role: "admin" })).secret;
  server = await startRouteServer([[/^\/compat\/mem0(\/|$)/, mem0Route]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const say = (content: string) => [{ role: "user" as const, content }];

/** `async_mode: false`: the add answers its memories directly (Mem0 v3 answers an event otherwise; issue 49). The TS client passes it through untyped. */
const SYNC = { asyncMode: false } as object;
const client = (apiKey: string) => new MemoryClient({ apiKey, host: `${server.url}/compat/mem0` });

describe("mem0ai MemoryClient against /compat/mem0", () => {
  it("add → search → get → update → history → delete → getAll", async () => {
    const mem0 = client(keys.admin);
    await mem0.ping();

    const added = (await mem0.add([{ role: "user", content: "I keep the spare key to the lighthouse cabin under the blue ceramic frog." }], { userId: "bob", agentId: "concierge", ...SYNC })) as unknown as {
      results: Array<{ id: string; event: string; memory: string; userId: string; agentId: string }>;
    };
    expect(added.results.length).toBeGreaterThan(0);
    const memory = added.results.find((r) => /blue ceramic frog/.test(r.memory))!;
    expect(memory).toMatchObject({ event: "ADD", userId: "bob", agentId: "concierge" });
    expect(memory.id).toMatch(/^mem-/);

    const found = (await mem0.search("Where is the lighthouse cabin key?", { filters: { AND: [{ user_id: "bob" }, { agent_id: "concierge" }] } })) as unknown as { results: Array<{ id: string; score: number }> };
    expect(found.results.map((r) => r.id)).toContain(memory.id);
    const wrongAgent = (await mem0.search("Where is the lighthouse cabin key?", { filters: { AND: [{ user_id: "bob" }, { agent_id: "someone-else" }] } })) as unknown as { results: unknown[] };
    expect(wrongAgent.results).toEqual([]);
    const either = (await mem0.search("lighthouse key", { filters: { OR: [{ user_id: "nobody" }, { agent_id: "concierge" }] } })) as unknown as { results: Array<{ id: string }> };
    expect(either.results.map((r) => r.id)).toContain(memory.id);

    expect(await mem0.get(memory.id)).toMatchObject({ id: memory.id, memory: memory.memory, userId: "bob" });

    const updated = await mem0.update(memory.id, { text: "The spare lighthouse key now hangs on the hook by the door." });
    expect(updated).toMatchObject({ id: memory.id, memory: "The spare lighthouse key now hangs on the hook by the door." });
    expect(await mem0.get(memory.id)).toMatchObject({ memory: "The spare lighthouse key now hangs on the hook by the door." });

    // A later add in the same scope runs the memory step again: the edit holds (it is a version, not a cache).
    await mem0.add(say("My favourite tea is smoky lapsang souchong."), { userId: "bob", agentId: "concierge", ...SYNC });
    expect(await mem0.get(memory.id)).toMatchObject({ memory: "The spare lighthouse key now hangs on the hook by the door." });

    const history = await mem0.history(memory.id);
    expect(history.map((h) => [h.event, h.newMemory])).toEqual([
      ["ADD", memory.memory],
      ["UPDATE", "The spare lighthouse key now hangs on the hook by the door."],
    ]);
    expect(history[1]!.oldMemory).toBe(memory.memory);

    const all = await mem0.getAll({ filters: { user_id: "bob" } });
    expect((all as unknown as { results: Array<{ id: string }> }).results.map((r) => r.id)).toContain(memory.id);
    expect(await mem0.delete(memory.id)).toMatchObject({ message: expect.stringMatching(/deleted/) });
    const after = (await mem0.getAll({ filters: { user_id: "bob" } })) as unknown as { results: Array<{ id: string }> };
    expect(after.results.map((r) => r.id)).not.toContain(memory.id);
    await expect(mem0.get(memory.id)).rejects.toMatchObject({ name: "MemoryNotFoundError" });
    await mem0.add(say("I cycle to work on Tuesdays."), { userId: "bob", agentId: "concierge", ...SYNC });
    expect(((await mem0.getAll({ filters: { user_id: "bob" } })) as unknown as { results: Array<{ id: string }> }).results.map((r) => r.id)).not.toContain(memory.id);
    // The deletion is one more version: nothing was erased.
    expect((await mem0.history(memory.id)).map((h) => h.event)).toEqual(["ADD", "UPDATE", "DELETE"]);
  }, 120_000);

  it("batch update and delete, entities, delete all (an empty filter is refused)", async () => {
    const mem0 = client(keys.admin);
    const a = (await mem0.add(say("My sister Ada lives in Lisbon and teaches violin."), { userId: "carol", ...SYNC })) as unknown as { results: Array<{ id: string }> };
    const b = (await mem0.add(say("I am allergic to peanuts."), { userId: "carol", runId: "trip-1", ...SYNC })) as unknown as { results: Array<{ id: string }> };
    const [first, second] = [a.results[0]!.id, b.results[0]!.id];
    expect(await mem0.batchUpdate([{ memoryId: first, text: "Ada, my sister, lives in Porto." }])).toMatchObject({ message: "Successfully updated 1 memories" });
    expect(await mem0.get(first)).toMatchObject({ memory: "Ada, my sister, lives in Porto." });

    const users = await mem0.users();
    expect(users.results).toEqual(expect.arrayContaining([expect.objectContaining({ type: "user", name: "carol" }), expect.objectContaining({ type: "run", name: "trip-1" })]));
    const runOnly = (await mem0.getAll({ filters: { run_id: "trip-1" } })) as unknown as { results: Array<{ id: string; memory: string; runId: string }> };
    expect(runOnly.results.map((r) => r.id)).toContain(second);
    expect(runOnly.results.map((r) => r.id)).not.toContain(first);
    expect(new Set(runOnly.results.map((r) => r.runId))).toEqual(new Set(["trip-1"]));

    await expect(mem0.deleteAll({})).rejects.toThrow(/at least one of user_id/);
    await expect(mem0.batchDelete([first, "mem-unknown"])).rejects.toMatchObject({ name: "MemoryNotFoundError" });
    expect(await mem0.get(first)).toMatchObject({ id: first });
    expect(await mem0.batchDelete([first])).toMatchObject({ message: "Successfully deleted 1 memories" });
    expect(await mem0.deleteAll({ userId: "carol" })).toMatchObject({ message: expect.stringMatching(/deleted/) });
    expect(((await mem0.getAll({ filters: { user_id: "carol" } })) as unknown as { count: number }).count).toBe(0);
  }, 120_000);

  it("a scope-limited key sees only its scope; another workspace's key sees nothing; a read-only key cannot add", async () => {
    const admin = client(keys.admin);
    const dave = (await admin.add(say("I parked the camper van at the north gate."), { userId: "dave", ...SYNC })) as unknown as { results: Array<{ id: string }> };
    const alice = client(keys.alice);
    const own = (await alice.add(say("I water the orchids every Sunday morning."), { userId: "alice", ...SYNC })) as unknown as { results: Array<{ id: string; userId: string }> };
    expect(own.results[0]).toMatchObject({ userId: "alice" });

    const seen = (await alice.getAll({})) as unknown as { results: Array<{ userId: string }> };
    expect(seen.results.length).toBeGreaterThan(0);
    expect(new Set(seen.results.map((r) => r.userId))).toEqual(new Set(["alice"]));
    expect(((await alice.search("camper van north gate", {})) as unknown as { results: unknown[] }).results).toEqual([]);
    await expect(alice.get(dave.results[0]!.id)).rejects.toMatchObject({ name: "MemoryNotFoundError" });
    await expect(alice.delete(dave.results[0]!.id)).rejects.toMatchObject({ name: "MemoryNotFoundError" });
    await expect(alice.add(say("Bob's van is blue."), { userId: "bob" })).rejects.toThrow(/limited to scope .*user:alice/);
    expect(await admin.get(dave.results[0]!.id)).toMatchObject({ userId: "dave" });

    const other = client(keys.other);
    expect(((await other.getAll({})) as unknown as { count: number }).count).toBe(0);
    expect(((await other.search("camper van", {})) as unknown as { results: unknown[] }).results).toEqual([]);
    await expect(other.get(dave.results[0]!.id)).rejects.toMatchObject({ name: "MemoryNotFoundError" });

    await expect(client(keys.readOnly).add(say("nope"), { userId: "dave" })).rejects.toMatchObject({ name: "AuthenticationError", message: expect.stringMatching(/read-only/) });
    await expect(client("sx_not_a_key").getAll({})).rejects.toMatchObject({ name: "AuthenticationError" });
  }, 120_000);

  it("refuses what Synthex cannot honour, in Mem0's error shape, naming what to use instead", async () => {
    const mem0 = client(keys.admin);
    // The project is the key's pipeline and webhooks are its projection webhooks (mem0-project.test.ts): what has no place there is refused.
    await expect(mem0.updateProject({ customCategories: [{ food: "what the user eats" }] })).rejects.toThrow(/custom_categories: not supported by Synthex/);
    await expect(mem0.createWebhook({ name: "x", url: "https://example.com/x", eventTypes: ["memory_categorize" as never] })).rejects.toThrow(/memory_categorize: memories keep no categories/);
    await expect(mem0.getProfile({ entityId: "bob" })).rejects.toThrow(/brief/);
    await expect(mem0.add(say("x"), { userId: "bob", infer: false })).rejects.toThrow(/infer: false is not supported/);
    await expect(mem0.search("x", { filters: { metadata: { city: "Paris" } } })).rejects.toThrow(/filters\.metadata: not supported/);
    await expect(mem0.update("mem-x", { text: "t", timestamp: 1 })).rejects.toThrow(/timestamp: not supported/);
    // An unbound key (no single pipeline; two in the workspace) is told how to bind.
    const unbound = (await createApiKey(db, workspaceId, { userId: (await db.membership.findFirstOrThrow({ where: { workspaceId } })).userId, role: "owner" }, { name: "all pipelines", role: "admin" })).secret;
    await expect(client(unbound).getAll({})).rejects.toThrow(/not bound to a pipeline/);
    const viaPath = new MemoryClient({ apiKey: unbound, host: `${server.url}/compat/mem0/p/another` });
    expect(((await viaPath.getAll({})) as unknown as { count: number }).count).toBe(0);
  }, 60_000);
});
