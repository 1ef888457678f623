/**
 * Issue 37: the Mem0 and Zep compatibility endpoints leave their search calls in the pipeline's
 * query log when it is on — the real `mem0ai` MemoryClient and `@getzep/zep-cloud` ZepClient over
 * real HTTP — each entry naming the calling key, the scope searched (a scope-limited key's own
 * scope when it names none), the compat surface and the query; with the log off, none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("compat-log");

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { settleBackgroundWork } = await import("@/server/services/background");
const { listQueryLog, setQueryLogConfig, settleQueryLog } = await import("@/server/services/query-log");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { mem0Route } = await import("@/server/compat/mem0");
const { zepRoute } = await import("@/server/compat/zep");
const { MemoryClient } = await import("mem0ai");
const { ZepClient } = await import("@getzep/zep-cloud");

let server: Awaited<ReturnType<typeof startRouteServer>>;
let db: Awaited<ReturnType<typeof openMigratedDb>>;
let workspaceId = "";
let pipelineId = "";
const keys = { agent: { id: "", secret: "" }, alice: { id: "", secret: "" } };

beforeAll(async () => {
  db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "compat-log@example.com", password: "compat-log-password-1" });
  workspaceId = workspace.id;
  const { pipeline } = await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  pipelineId = pipeline.id;
  const owner = { userId: user.id, role: "owner" as const };
  keys.agent = await createApiKey(db, workspace.id, owner, { name: "compat agent", role: "editor", pipelines: [pipeline.id] });
  keys.alice = await createApiKey(db, workspace.id, owner, { name: "alice only", role: "editor", pipelines: [pipeline.id], scopePrefix: "user:alice" });
  server = await startRouteServer([
    [/^\/compat\/mem0(\/|$)/, mem0Route],
    [/^\/compat\/zep(\/|$)/, zepRoute],
  ]);
  // Zep answers 404 for a user it does not know (issue 49): bob is added as Zep's quickstart does.
  await new ZepClient({ apiKey: keys.agent.secret, baseUrl: `${server.url}/compat/zep` }).user.add({ userId: "bob" });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const mem0 = (secret: string) => new MemoryClient({ apiKey: secret, host: `${server.url}/compat/mem0` });
const zep = (secret: string) => new ZepClient({ apiKey: secret, baseUrl: `${server.url}/compat/zep` });

/** One search through each client: the agent's Mem0 and Zep searches for bob, alice's Mem0 search without filters. */
async function searchThroughBoth(tag: string) {
  await mem0(keys.agent.secret).search(`mem0 where is the lighthouse key ${tag}`, { filters: { user_id: "bob" } });
  await zep(keys.agent.secret).graph.search({ userId: "bob", query: `zep where is the lighthouse key ${tag}`, scope: "edges" });
  await mem0(keys.alice.secret).search(`mem0 alice's own question ${tag}`);
  await settleQueryLog();
}

const logged = () => listQueryLog(db, { workspaceId, pipelineId, limit: 100 });

describe("compatibility endpoints and the query log", () => {
  it("log off (the default): compat searches leave no entry", async () => {
    await searchThroughBoth("off-before");
    expect(await logged()).toEqual([]);
  }, 60_000);

  it("log on: each Mem0 and Zep search is logged with its caller, scope, surface and query", async () => {
    await setQueryLogConfig(db, workspaceId, pipelineId, { enabled: true });
    await searchThroughBoth("on");
    const entries = await logged();
    expect(entries).toHaveLength(3);
    const byQuery = (q: string) => entries.find((e) => e.query === q);
    expect(byQuery("mem0 where is the lighthouse key on")).toMatchObject({ surface: "compat", kind: "search", caller: `apiKey:${keys.agent.id}`, scope: "user:bob", branch: "main" });
    expect(byQuery("zep where is the lighthouse key on")).toMatchObject({ surface: "compat", kind: "search", caller: `apiKey:${keys.agent.id}`, scope: "user:bob", branch: "main" });
    // A scope-limited key that names no scope searched its own: that is the scope logged.
    expect(byQuery("mem0 alice's own question on")).toMatchObject({ surface: "compat", kind: "search", caller: `apiKey:${keys.alice.id}`, scope: "user:alice" });
    for (const e of entries) expect(e.versionId).toEqual(expect.any(String));
  }, 60_000);

  it("log off again: no new entries", async () => {
    await setQueryLogConfig(db, workspaceId, pipelineId, { enabled: false });
    await searchThroughBoth("off-after");
    const entries = await logged();
    expect(entries).toHaveLength(3);
    expect(entries.some((e) => e.query.endsWith("off-after") || e.query.endsWith("off-before"))).toBe(false);
  }, 60_000);
});
