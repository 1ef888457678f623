/**
 * An id belongs to the scope that made it, over real HTTP (REST /api/v1, /compat/zep and
 * /compat/mem0 behind node's HTTP server), with the real `@getzep/zep-cloud` and `mem0ai` clients:
 *
 * - a key limited to `user:alice` opens thread / session `support-bob-0042` before the app does;
 *   the app (a key without limits) is refused with 409 naming the owner's scope — on create, on
 *   `addMessages`, on a REST call naming another scope and on an unscoped follow-up — and nothing
 *   of Bob's reaches Alice's thread, context block or search; the apps' normal flows still work;
 * - to a key limited to a scope (or to pipelines), another scope's ids and ids that do not exist
 *   answer the same status and body (the id aside) on every read and write that names them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("scope-ownership");

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { closeIdleSessions } = await import("@/server/services/ingest");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { zepRoute } = await import("@/server/compat/zep");
const { mem0Route } = await import("@/server/compat/mem0");
const { ZepClient } = await import("@getzep/zep-cloud");
const { MemoryClient } = await import("mem0ai");

type Db = Awaited<ReturnType<typeof openMigratedDb>>;
let db: Db;
let server: Awaited<ReturnType<typeof startRouteServer>>;
let pipelineId = "";
const keys = { app: "", alice: "", otherPipeline: "" };
const BOB_SECRET = "BOBPLANT-6620";

beforeAll(async () => {
  db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "owner@scope-ownership.test", password: "ownership-password-1" });
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") }));
  const another = await createPipeline(db, workspace.id, { name: "another", spec: templateSpec("mem0") });
  const owner = { userId: user.id, role: "owner" as const };
  keys.app = (await createApiKey(db, workspace.id, owner, { name: "the app", role: "admin" })).secret;
  keys.alice = (await createApiKey(db, workspace.id, owner, { name: "alice only", role: "editor", pipelines: [pipelineId], scopePrefix: "user:alice" })).secret;
  keys.otherPipeline = (await createApiKey(db, workspace.id, owner, { name: "another only", role: "editor", pipelines: [another.pipeline.id] })).secret;
  server = await startRouteServer([
    [/^\/compat\/zep(\/|$)/, zepRoute],
    [/^\/compat\/mem0(\/|$)/, mem0Route],
  ]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const zep = (apiKey: string, pipeline = "agent-memory") => new ZepClient({ apiKey, baseUrl: `${server.url}/compat/zep/p/${pipeline}` });
const mem0 = (apiKey: string) => new MemoryClient({ apiKey, host: `${server.url}/compat/mem0/p/agent-memory` });

/** `async_mode: false`: the add answers its memories directly (Mem0 v3 answers an event otherwise; issue 49). The TS client passes it through untyped. */
const SYNC = { asyncMode: false } as object;

async function rest(key: string, method: "GET" | "POST", url: string, body?: unknown) {
  const res = await fetch(`${server.url}/api/v1${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.text() };
}
const ingest = (key: string, body: Record<string, unknown>) => rest(key, "POST", `/pipelines/${pipelineId}/sources/chats/messages`, body);

/** A client call's outcome as status + body (a thrown ZepError / Mem0 error, or the answer). */
async function outcome(call: () => Promise<unknown>): Promise<{ status: number; body: string }> {
  try {
    return { status: 200, body: JSON.stringify(await call()) };
  } catch (err) {
    const e = err as { statusCode?: number; body?: unknown; message?: string; name?: string };
    // mem0ai throws an error class per HTTP status (MemoryNotFoundError, …) whose message holds the server's `detail`.
    return { status: e.statusCode ?? -1, body: e.body !== undefined ? JSON.stringify(e.body) : `${e.name}: ${e.message}` };
  }
}

/** The same answer, the id aside: status, body shape and message template. */
function expectSameAnswer(what: string, other: { status: number; body: string }, otherId: string, unknown: { status: number; body: string }, unknownId: string) {
  const norm = (o: { status: number; body: string }, id: string) => ({ what, status: o.status, body: o.body.replaceAll(encodeURIComponent(id), "<id>").replaceAll(id, "<id>") });
  expect(norm(other, otherId)).toEqual(norm(unknown, unknownId));
  expect(other.status, `${what}: refused`).not.toBe(200);
  expect(other.body, `${what}: names nothing of Bob's`).not.toContain(BOB_SECRET);
}

describe("an id belongs to the scope that made it", () => {
  it("Zep: a thread a scope-limited key opened first is refused to the app (create and addMessages), and Alice sees nothing of Bob's", async () => {
    const app = zep(keys.app);
    const alice = zep(keys.alice);
    await app.user.add({ userId: "bob" });
    await alice.user.add({ userId: "alice" });
    // Alice squats the id the app will use for Bob's support thread.
    await alice.thread.create({ threadId: "support-bob-0042", userId: "alice" });
    await alice.thread.addMessages("support-bob-0042", { messages: [{ role: "user", content: "Alice's own note." }] });

    const created = await outcome(() => app.thread.create({ threadId: "support-bob-0042", userId: "bob" }));
    expect(created.status).toBe(409);
    expect(JSON.parse(created.body).message).toMatch(/^Thread support-bob-0042 belongs to scope user:alice \(user alice\), not user:bob; pass that user or use another thread id\.$/);

    const added = await outcome(() => app.thread.addMessages("support-bob-0042", { messages: [{ role: "user", content: `${BOB_SECRET}: my account number is 4471.` }] }));
    expect(added.status).toBe(409);
    expect(JSON.parse(added.body).message).toMatch(/^Thread support-bob-0042 belongs to scope user:alice \(user alice\), which an API key limited to a scope can also write: pass that user \(header X-Synthex-User: alice\)/);
    // Naming Bob does not help: the thread is Alice's.
    const named = await outcome(() =>
      app.thread.addMessages("support-bob-0042", { messages: [{ role: "user", content: `${BOB_SECRET}: again.` }] }, { headers: { "X-Synthex-User": "bob" } }),
    );
    expect({ status: named.status, message: JSON.parse(named.body).message }).toEqual({ status: 409, message: expect.stringMatching(/belongs to scope user:alice \(user alice\), not user:bob/) });

    // Once the thread's marker session has closed (idle), create is still refused, not handed Alice's thread.
    await closeIdleSessions(db, { pipelineId, now: new Date(Date.now() + 86_400_000), idleMs: 1 });
    expect((await outcome(() => app.thread.create({ threadId: "support-bob-0042", userId: "bob" }))).status).toBe(409);

    // Alice reads nothing of Bob's: her thread, its context block; nothing of it was stored at all.
    const thread = await alice.thread.get("support-bob-0042");
    expect(thread.messages!.map((m) => m.content)).toEqual(["Alice's own note."]);
    expect((await alice.thread.getUserContext("support-bob-0042")).context).not.toContain(BOB_SECRET);
    expect(await db.ingestMessage.count({ where: { content: { contains: BOB_SECRET } } })).toBe(0);

    // The apps' normal flows: the app's own thread for Bob, and Alice's own thread by Alice's key.
    await app.thread.create({ threadId: "bob-1", userId: "bob" });
    expect((await app.thread.addMessages("bob-1", { messages: [{ role: "user", content: "Bob's first message." }] })).messageUuids).toHaveLength(1);
    await alice.thread.addMessages("support-bob-0042", { messages: [{ role: "user", content: "Alice again." }] });
    // A thread the app made for Alice: Alice's key can write user:alice too, so the app names her to add to it.
    await app.thread.create({ threadId: "alice-app-1", userId: "alice" });
    expect((await outcome(() => app.thread.addMessages("alice-app-1", { messages: [{ role: "user", content: "hi" }] }))).status).toBe(409);
    expect((await app.thread.addMessages("alice-app-1", { messages: [{ role: "user", content: "hi" }] }, { headers: { "X-Synthex-User": "alice" } })).messageUuids).toHaveLength(1);
    // Re-creating one's own thread once its marker has closed is still fine (the same thread).
    await closeIdleSessions(db, { pipelineId, now: new Date(Date.now() + 86_400_000), idleMs: 1 });
    expect(await app.thread.create({ threadId: "bob-1", userId: "bob" })).toMatchObject({ threadId: "bob-1", userId: "bob" });
  }, 120_000);

  it("REST: the app naming another scope, or following up without one on a session a limited key opened, gets 409; its own sessions keep working", async () => {
    expect((await ingest(keys.alice, { sessionId: "rest-bob-0042", messages: [{ role: "user", content: "Alice's session." }] })).status).toBe(200);
    expect((await db.ingestSession.findFirstOrThrow({ where: { sessionId: "rest-bob-0042" } })).scope).toBe("user:alice");

    const named = await ingest(keys.app, { sessionId: "rest-bob-0042", scope: "user:bob", messages: [{ role: "user", content: `${BOB_SECRET}: named` }] });
    expect({ status: named.status, body: JSON.parse(named.body) }).toEqual({
      status: 409,
      body: { error: { code: "CONFLICT", message: `Session "rest-bob-0042" belongs to scope "user:alice"; pass that scope or use another sessionId.` } },
    });
    const unscoped = await ingest(keys.app, { sessionId: "rest-bob-0042", messages: [{ role: "user", content: `${BOB_SECRET}: unscoped` }] });
    expect(unscoped.status).toBe(409);
    expect(JSON.parse(unscoped.body).error.message).toMatch(/^Session "rest-bob-0042" belongs to scope "user:alice", which an API key limited to a scope can also write: pass that scope/);
    expect(await db.ingestMessage.count({ where: { content: { contains: BOB_SECRET } } })).toBe(0);
    // Naming the session's own scope is a deliberate write into it.
    expect((await ingest(keys.app, { sessionId: "rest-bob-0042", scope: "user:alice", messages: [{ role: "assistant", content: "Noted." }] })).status).toBe(200);

    // The usual agent flow: scope on the first call, none on follow-ups — in a scope no limited key writes.
    expect((await ingest(keys.app, { sessionId: "app-1", scope: "user:bob", messages: [{ role: "user", content: "first" }] })).status).toBe(200);
    expect((await ingest(keys.app, { sessionId: "app-1", messages: [{ role: "user", content: "second" }], close: true })).status).toBe(200);
    // In a scope a limited key can write, the app restates it.
    expect((await ingest(keys.app, { sessionId: "app-2", scope: "user:alice:agent:support", messages: [{ role: "user", content: "first" }] })).status).toBe(200);
    expect((await ingest(keys.app, { sessionId: "app-2", messages: [{ role: "user", content: "second" }] })).status).toBe(409);
    expect((await ingest(keys.app, { sessionId: "app-2", scope: "user:alice:agent:support", messages: [{ role: "user", content: "second" }] })).status).toBe(200);
    // Alice's key follows up on a session of her scope without naming it.
    expect((await ingest(keys.alice, { sessionId: "app-2", messages: [{ role: "user", content: "third" }] })).status).toBe(200);
  }, 60_000);

  it("to a scope- or pipeline-limited key, another scope's ids answer exactly like ids that do not exist (REST, Zep, Mem0)", async () => {
    // Bob's data, made by the app: a REST session, a Zep user and thread, a Mem0 memory.
    expect((await ingest(keys.app, { sessionId: "bob-session", scope: "user:bob", messages: [{ role: "user", content: `${BOB_SECRET}: session` }] })).status).toBe(200);
    const app = zep(keys.app);
    await app.user.add({ userId: "bob" }).catch(() => undefined);
    await app.thread.create({ threadId: "bob-thread", userId: "bob" });
    const added = (await mem0(keys.app).add([{ role: "user", content: `I keep ${BOB_SECRET} in the blue drawer.` }], { userId: "bob", ...SYNC })) as unknown as { results: Array<{ id: string }> };
    const bobMemory = added.results[0]?.id;
    expect(bobMemory, "the app's add made a memory").toBeTruthy();
    const bobRecord = (await db.record.findFirstOrThrow({ where: { pipelineId, scope: "user:bob", step: "chats" } })).id;
    const bobMemoryRecord = (await db.record.findFirstOrThrow({ where: { pipelineId, scope: "user:bob", step: "memories" } })).id;

    const p = `/pipelines/${pipelineId}`;
    const aliceRest = (method: "GET" | "POST", url: string, body?: unknown) => rest(keys.alice, method, url, body);
    const pairs: Array<[string, (id: string) => Promise<{ status: number; body: string }>, string, string]> = [
      ["GET session", (id) => aliceRest("GET", `${p}/sources/chats/sessions/${id}`), "bob-session", "nobody-session"],
      ["POST messages naming Bob's scope", (id) => aliceRest("POST", `${p}/sources/chats/messages`, { sessionId: id, scope: "user:bob", messages: [{ role: "user", content: "x" }] }), "bob-session", "nobody-session"],
      ["GET record", (id) => aliceRest("GET", `/records/${id}`), bobRecord, "rec_nobody"],
      ["GET record sources", (id) => aliceRest("GET", `/records/${id}/sources`), bobRecord, "rec_nobody"],
      ["GET record lineage", (id) => aliceRest("GET", `/records/${id}/lineage`), bobRecord, "rec_nobody"],
      ["GET memory history", (id) => aliceRest("GET", `/records/${id}/history`), bobMemoryRecord, "rec_nobody"],
      ["Zep thread.get", (id) => outcome(() => zep(keys.alice).thread.get(id)), "bob-thread", "nobody-thread"],
      ["Zep thread.getUserContext", (id) => outcome(() => zep(keys.alice).thread.getUserContext(id)), "bob-thread", "nobody-thread"],
      ["Zep thread.addMessages", (id) => outcome(() => zep(keys.alice).thread.addMessages(id, { messages: [{ role: "user", content: "x" }] })), "bob-thread", "nobody-thread"],
      ["Zep thread.delete", (id) => outcome(() => zep(keys.alice).thread.delete(id)), "bob-thread", "nobody-thread"],
      ["Zep user.get", (id) => outcome(() => zep(keys.alice).user.get(id)), "bob", "nobody"],
      ["Zep user.add", (id) => outcome(() => zep(keys.alice).user.add({ userId: id })), "bob", "nobody"],
      ["Zep user.getThreads", (id) => outcome(() => zep(keys.alice).user.getThreads(id)), "bob", "nobody"],
      ["Mem0 get", (id) => outcome(() => mem0(keys.alice).get(id)), bobMemory!, "mem_nobody"],
      ["Mem0 update", (id) => outcome(() => mem0(keys.alice).update(id, { text: "x" })), bobMemory!, "mem_nobody"],
      ["Mem0 delete", (id) => outcome(() => mem0(keys.alice).delete(id)), bobMemory!, "mem_nobody"],
      ["Mem0 history", (id) => outcome(() => mem0(keys.alice).history(id)), bobMemory!, "mem_nobody"],
      // A key limited to another pipeline: this pipeline answers like one that does not exist.
      ["Zep thread.get, another pipeline's key", (id) => outcome(() => zep(keys.otherPipeline, id).thread.get("bob-thread")), "agent-memory", "no-such-pipeline"],
      ["GET session, another pipeline's key", (id) => rest(keys.otherPipeline, "GET", `/pipelines/${id}/sources/chats/sessions/bob-session`), pipelineId, "no-such-pipeline"],
    ];
    for (const [what, call, other, unknown] of pairs) expectSameAnswer(what, await call(other), other, await call(unknown), unknown);

    // Writing under a taken id cannot answer like a new one (that creates it): it is refused, naming nothing of Bob's scope.
    const taken = await aliceRest("POST", `${p}/sources/chats/messages`, { sessionId: "bob-session", messages: [{ role: "user", content: "x" }] });
    expect(taken.status).toBe(403);
    expect(taken.body).not.toContain("user:bob");
    expect(await db.ingestMessage.count({ where: { content: "x" } })).toBe(0);
    // Bob's thread was not deleted, nor his memory changed, by the refused calls.
    expect((await app.thread.get("bob-thread")).messages).toEqual([]);
    expect((await mem0(keys.app).get(bobMemory!)).id).toBe(bobMemory);
  }, 180_000);
});
