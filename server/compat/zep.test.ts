/**
 * Issue 36: the real `@getzep/zep-cloud` ZepClient, unchanged, against Synthex at /compat/zep over
 * real HTTP, on the offline model: user → thread → messages → the context block mentions the fact
 * → graph search finds it; a scope-limited key sees only its users; another workspace's key sees
 * nothing; what Synthex cannot honour is refused in Zep's error shape (`{ message }`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("zep");

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { zepRoute } = await import("@/server/compat/zep");
const { ZepClient, ZepError } = await import("@getzep/zep-cloud");

let server: Awaited<ReturnType<typeof startRouteServer>>;
const keys = { admin: "", alice: "", other: "" };

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "zep@example.com", password: "zep-password-1" });
  const { pipeline } = await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  const owner = { userId: user.id, role: "owner" as const };
  // Unrestricted (purges need a key without pipeline or scope limits); bound to the workspace's only pipeline.
  keys.admin = (await createApiKey(db, workspace.id, owner, { name: "zep agent", role: "admin" })).secret;
  keys.alice = (await createApiKey(db, workspace.id, owner, { name: "alice only", role: "editor", pipelines: [pipeline.id], scopePrefix: "user:alice" })).secret;
  const other = await signUp(db, { email: "zep-other@example.com", password: "zep-password-2" });
  await createPipeline(db, other.workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  keys.other = (await createApiKey(db, other.workspace.id, { userId: other.user.id, role: "owner" }, { name: "other", role: "admin" })).secret;
  server = await startRouteServer([[/^\/compat\/zep(\/|$)/, zepRoute]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const client = (apiKey: string) => new ZepClient({ apiKey, baseUrl: `${server.url}/compat/zep` });

/** Zep processes messages asynchronously: poll graph search until the memory is there. */
async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  let v = await probe();
  while (!ok(v) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    v = await probe();
  }
  return v;
}

describe("@getzep/zep-cloud ZepClient against /compat/zep", () => {
  it("user → thread → messages → context block → graph search", async () => {
    const zep = client(keys.admin);
    const user = await zep.user.add({ userId: "bob", firstName: "Bob", email: "bob@example.com" });
    expect(user).toMatchObject({ userId: "bob", firstName: "Bob", email: "bob@example.com" });
    expect(await zep.user.get("bob")).toMatchObject({ userId: "bob", firstName: "Bob" });

    expect(await zep.thread.create({ threadId: "bob-1", userId: "bob" })).toMatchObject({ threadId: "bob-1", userId: "bob" });
    const added = await zep.thread.addMessages("bob-1", {
      messages: [
        { role: "user", name: "Bob", content: "I keep the spare key to the lighthouse cabin under the blue ceramic frog." },
        { role: "assistant", content: "Noted." },
      ],
    });
    expect(added.messageUuids).toHaveLength(2);

    const search = () => zep.graph.search({ userId: "bob", query: "Where is the lighthouse cabin key?", scope: "edges" });
    const found = await eventually(search, (r) => (r.edges ?? []).some((e) => /blue ceramic frog/.test(e.fact)));
    expect(found.edges!.map((e) => e.fact)).toEqual(expect.arrayContaining([expect.stringMatching(/blue ceramic frog/)]));

    const context = await zep.thread.getUserContext("bob-1");
    expect(context.context).toMatch(/<FACTS>[\s\S]*blue ceramic frog[\s\S]*<\/FACTS>/);

    const episodes = await zep.graph.search({ userId: "bob", query: "lighthouse frog", scope: "episodes" });
    expect(episodes.episodes!.some((e) => /blue ceramic frog/.test(e.content))).toBe(true);

    const messages = await zep.thread.get("bob-1");
    expect(messages.messages!.map((m) => [m.role, m.content])).toEqual([
      ["user", "I keep the spare key to the lighthouse cabin under the blue ceramic frog."],
      ["assistant", "Noted."],
    ]);
    expect((await zep.thread.listAll()).threads!.map((t) => t.threadId)).toContain("bob-1");
    expect((await zep.user.getThreads("bob")).map((t) => t.threadId)).toEqual(["bob-1"]);
    expect((await zep.user.listOrdered()).users!.map((u) => u.userId)).toContain("bob");

    // Deleting the thread purges its records (an admin key): graph search no longer finds the fact,
    // and the thread is gone (issue 49).
    await zep.thread.delete("bob-1");
    expect((await search()).edges!.some((e) => /blue ceramic frog/.test(e.fact))).toBe(false);
    await expect(zep.thread.get("bob-1")).rejects.toMatchObject({ statusCode: 404 });
  }, 120_000);

  it("a scope-limited key sees only its users; another workspace's key sees nothing; user.delete purges", async () => {
    const admin = client(keys.admin);
    await admin.user.add({ userId: "dave" });
    await admin.thread.create({ threadId: "dave-1", userId: "dave" });
    await admin.thread.addMessages("dave-1", { messages: [{ role: "user", content: "I parked the camper van at the north gate." }] });

    const alice = client(keys.alice);
    await alice.user.add({ userId: "alice" });
    await alice.thread.create({ threadId: "alice-1", userId: "alice" });
    await alice.thread.addMessages("alice-1", { messages: [{ role: "user", content: "I water the orchids every Sunday morning." }] });
    const mine = await eventually(
      () => alice.graph.search({ userId: "alice", query: "orchids Sunday" }),
      (r) => (r.edges ?? []).some((e) => /orchids/.test(e.fact)),
      90_000, // the memory is made by a pipeline run: on a loaded 2-core machine that can take a while
    );
    expect(mine.edges!.some((e) => /orchids/.test(e.fact))).toBe(true);
    expect((await alice.user.listOrdered()).users!.map((u) => u.userId)).toEqual(["alice"]);
    expect((await alice.thread.listAll()).threads!.map((t) => t.threadId)).toEqual(["alice-1"]);
    await expect(alice.user.get("dave")).rejects.toMatchObject({ statusCode: 403, body: { message: expect.stringMatching(/limited to scope "user:alice"/) } });
    await expect(alice.thread.get("dave-1")).rejects.toMatchObject({ statusCode: 404 });
    // An editor key deletes its user (the memories, restorable); purging is an admin key's (issue 49).
    await expect(alice.user.delete("alice")).resolves.toMatchObject({ message: expect.stringMatching(/memories are deleted/) });
    await expect(alice.user.get("alice")).rejects.toMatchObject({ statusCode: 404 });
    await expect(alice.graph.search({ userId: "dave", query: "camper van" })).rejects.toMatchObject({ statusCode: 403 });
    // A user outside alice's scope is refused the same way whether it exists (dave) or not (erin).
    const refusal = (userId: string) =>
      alice.user.add({ userId }).then(
        () => ({ statusCode: 200, body: "accepted" as unknown }),
        (e: unknown) => e as InstanceType<typeof ZepError>,
      );
    const daveRefusal = await refusal("dave");
    const erinRefusal = await refusal("erin");
    expect(daveRefusal).toMatchObject({ statusCode: 403 });
    expect({ status: erinRefusal.statusCode, body: JSON.stringify(erinRefusal.body).replaceAll("erin", "<id>") }).toEqual({ status: daveRefusal.statusCode, body: JSON.stringify(daveRefusal.body).replaceAll("dave", "<id>") });

    const other = client(keys.other);
    expect((await other.user.listOrdered()).users).toEqual([]);
    await expect(other.user.get("dave")).rejects.toMatchObject({ statusCode: 404 });
    await expect(other.graph.search({ userId: "dave", query: "camper van" })).rejects.toMatchObject({ statusCode: 404 });

    await eventually(() => admin.graph.search({ userId: "dave", query: "camper van" }), (r) => (r.edges ?? []).length > 0);
    await admin.user.delete("dave");
    await expect(admin.user.get("dave")).rejects.toMatchObject({ statusCode: 404 });
    await expect(admin.graph.search({ userId: "dave", query: "camper van" })).rejects.toMatchObject({ statusCode: 404 });
  }, 120_000);

  it("refuses what Synthex cannot honour, in Zep's error shape, naming what to use instead", async () => {
    const zep = client(keys.admin);
    const refused = async (call: Promise<unknown>, message: RegExp) => {
      const err = await call.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ZepError);
      expect((err as InstanceType<typeof ZepError>).statusCode).toBe(400);
      expect(((err as InstanceType<typeof ZepError>).body as { message: string }).message).toMatch(message);
    };
    await refused(zep.graph.addFactTriple({ fact: "f", factName: "F", targetNodeName: "t", userId: "bob" }), /Graph edits/);
    await refused(zep.graph.search({ userId: "bob", query: "x", reranker: "mmr" }), /reranker: not supported/);
    await refused(zep.batch.create(), /Batch API/);
    await refused(zep.thread.message.update("m", { metadata: { k: "v" } }), /Messages cannot be edited/);
    await refused(zep.thread.addMessages("bob-2", { messages: [{ role: "user", content: "x" }], ignoreRoles: ["assistant"] }), /ignore_roles/);
    const unknown = await zep.user.get("x").catch((e: unknown) => e);
    expect(unknown).toMatchObject({ statusCode: 404 });
    await expect(client("sx_not_a_key").user.get("x")).rejects.toMatchObject({ statusCode: 401 });
  }, 60_000);
});
