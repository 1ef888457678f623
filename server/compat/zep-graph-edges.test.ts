/**
 * Issue 49 (Zep): on a pipeline whose graph is entities + relations and that has no memory step (the
 * Synapsis template, offline), the real `@getzep/zep-cloud` ZepClient over real HTTP gets nodes (the
 * entities, found by part of a name: "Ana" finds "Ana Smith") and edges (the relations' beliefs) that
 * name their source and target nodes by the nodes' uuids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Before anything that reads it is imported (server/compat/testing/compat-test-env.ts).
const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("zep-graph-edges");

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
  const { user, workspace } = await signUp(db, { email: "zep-graph-edges@example.com", password: "zep-password-1" });
  await createPipeline(db, workspace.id, { name: "graph-memory", spec: templateSpec("synapsis") });
  key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "zep graph" })).secret;
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

describe("ZepClient on the Synapsis template (entities + relations, no memory step)", () => {
  it("nodes are found by part of a name; edges name their source and target nodes", async () => {
    const client = zep();
    await client.user.add({ userId: "ana" });
    await client.thread.create({ threadId: "ana-1", userId: "ana" });
    await client.thread.addMessages("ana-1", {
      messages: [
        { role: "user", content: "Ana Smith works at Globex in Lisbon." },
        { role: "user", content: "Ana Smith met Bruno Costa at the Lisbon office." },
      ],
    });

    const byPart = await eventually(
      () => client.graph.search({ userId: "ana", query: "Ana", scope: "nodes" }),
      (r) => (r.nodes ?? []).some((n) => n.name === "Ana Smith"),
    );
    const ana = byPart.nodes!.find((n) => n.name === "Ana Smith")!;
    expect(ana).toBeDefined();

    const nodes = new Map((await client.graph.node.getByUserId("ana", {})).map((n) => [n.uuid, n.name]));
    expect(nodes.get(ana.uuid)).toBe("Ana Smith");

    const found = await eventually(
      () => client.graph.search({ userId: "ana", query: "Where does Ana Smith work?", scope: "edges" }),
      (r) => (r.edges ?? []).some((e) => /Globex/.test(e.fact)),
    );
    const edge = found.edges!.find((e) => /Globex/.test(e.fact))!;
    expect(edge.sourceNodeUuid).toBe(ana.uuid);
    // Every edge between entities names nodes the graph answers.
    const linked = found.edges!.filter((e) => e.targetNodeUuid);
    expect(linked.length).toBeGreaterThan(0);
    for (const e of linked) {
      expect(nodes.has(e.sourceNodeUuid)).toBe(true);
      expect(nodes.has(e.targetNodeUuid)).toBe(true);
    }
    const listed = await client.graph.edge.getByUserId("ana", {});
    expect(listed.some((e) => e.sourceNodeUuid === ana.uuid && /Globex/.test(e.fact))).toBe(true);

    const { context } = await client.thread.getUserContext("ana-1");
    expect(context).toMatch(/<FACTS>[\s\S]*Globex[\s\S]*<\/FACTS>/);
  }, 150_000);
});
