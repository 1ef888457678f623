/**
 * The entity graph's reads over the tRPC procedures (the ones REST serves) against a real database:
 * a Synapsis-shaped pipeline (turns → entities → relations → insights) built offline from three
 * dated sessions, then entity search by name and alias, an entity's neighbourhood (one and two hops,
 * capped), its belief timeline in valid-time order with the supersession chain, a belief's sources,
 * the insights, scopes, branches (each reads its own pointers), and who may read at all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import { createTestDb } from "../store/test-db";
import { createBranch } from "./branches";
import { appendSourceRecords, createPipeline, saveVersion } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
});
afterAll(async () => close());

const spec = (functional?: string[]) =>
  new Pipeline("graph", { agent: "test" })
    .source("sessions", { format: "json" })
    .split("turns", { from: "sessions", operator: { kind: "turns", size: 1, stride: 1 } })
    .entities("entities", { from: "turns" })
    .relations("relations", { from: ["turns", "entities"], ...(functional ? { functional } : {}) })
    .insights("proactive", { from: ["relations", "entities"] })
    .output("search", { from: ["turns"], surface: "search" })
    .output("insights", { from: "proactive", surface: "projection" })
    .toSpec();

const session = (scope: string, id: string, at: string, turns: string[]) => ({
  externalId: id,
  scope,
  content: turns.join("\n\n"),
  metadata: { time: { created_at: at } },
});

const SESSIONS = [
  session("demo:u1", "s1", "2023-05-08T10:00:00Z", ["Melanie: I live in Boston. Caroline and I went to the museum.", "Caroline: That was fun, Mel!"]),
  session("demo:u1", "s2", "2023-08-14T10:00:00Z", ["Melanie: I moved to Denver last month.", "Caroline: John and I went hiking on Sunday."]),
  session("demo:u1", "s3", "2023-09-01T10:00:00Z", ["John: I work at Acme Robotics now.", "Caroline: Good for you, John."]),
  session("demo:u2", "t1", "2023-06-01T10:00:00Z", ["Zoltan: I live in Paris."]),
];

describe("graph reads", () => {
  let api: ReturnType<typeof createCaller>;
  let workspaceId = "";
  let pipelineId = "";
  const ref = () => ({ workspaceId, pipelineId });

  beforeAll(async () => {
    const { user, workspace } = await signUp(db, { email: "graph@example.com", password: "graph-password-1" });
    workspaceId = workspace.id;
    api = createCaller(await createContext({ db, session: { userId: user.id, email: user.email } }));
    ({
      pipeline: { id: pipelineId },
    } = await createPipeline(db, workspaceId, { name: "graph", spec: spec() }));
    await appendSourceRecords(db, pipelineId, "sessions", SESSIONS);
    expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
  }, 120_000);

  const entityId = async (name: string, scope = "demo:u1") => {
    const { entities } = await api.graph.entities({ ...ref(), q: name, scope });
    const found = entities.find((e) => e.name === name);
    expect(found, `entity ${name}`).toBeTruthy();
    return found!.id;
  };

  it("lists entities most mentioned first and finds them by name or alias, within a scope", async () => {
    const all = await api.graph.entities({ ...ref(), scope: "demo:u1" });
    expect(all.steps).toEqual({ entities: ["entities"], relations: ["relations"], insights: ["proactive"] });
    expect(all.entities.map((e) => e.name)).toEqual(expect.arrayContaining(["Melanie", "Caroline", "John"]));
    expect(all.total).toBe(all.entities.length);
    const mentions = all.entities.map((e) => e.mentions);
    expect(mentions).toEqual([...mentions].sort((a, b) => b - a));
    expect(all.entities.every((e) => e.scope === "demo:u1")).toBe(true);
    expect(all.entities.map((e) => e.name)).not.toContain("Zoltan");

    const byPrefix = await api.graph.entities({ ...ref(), q: "melan" });
    expect(byPrefix.entities[0]!.name).toBe("Melanie");
    // "Mel" is an alias of Melanie (resolved by the entities step): searching the alias finds her.
    const melanie = (await api.graph.entities({ ...ref(), q: "mel", scope: "demo:u1" })).entities.find((e) => e.name === "Melanie")!;
    expect(melanie.aliases).toContain("Mel");
    expect(melanie.type).toBe("person");
    // Without a scope every scope's entities are listed.
    expect((await api.graph.entities({ ...ref(), q: "zolt" })).entities.map((e) => e.name)).toEqual(["Zoltan"]);
    expect((await api.graph.entities({ ...ref(), q: "nobody-like-this" })).entities).toEqual([]);
  });

  it("draws an entity's neighbourhood: one hop by default, two on request, capped, with the beliefs of each edge", async () => {
    const melanie = await entityId("Melanie");
    const caroline = await entityId("Caroline");
    const john = await entityId("John");
    const one = await api.graph.entity({ ...ref(), entityId: melanie });
    expect(one.entity.name).toBe("Melanie");
    const entityNodes = one.nodes.filter((n) => n.kind === "entity");
    expect(entityNodes.find((n) => n.id === melanie)!.depth).toBe(0);
    expect(entityNodes.find((n) => n.id === caroline)?.depth).toBe(1);
    expect(entityNodes.map((n) => n.id)).not.toContain(john);
    expect(Math.max(...entityNodes.map((n) => n.depth))).toBe(1);
    // Every edge joins drawn nodes, and its listed beliefs are in the answer, with the edge's ends.
    const ids = new Set(one.nodes.map((n) => n.id));
    const beliefs = new Map(one.beliefs.map((b) => [b.id, b]));
    for (const e of one.edges) {
      expect(ids.has(e.source) && ids.has(e.target)).toBe(true);
      expect(e.beliefIds.length).toBeGreaterThan(0);
      for (const id of e.beliefIds) {
        const b = beliefs.get(id)!;
        expect(b.subject).toBe(e.source);
        expect(b.predicate).toBe(e.predicate);
      }
    }
    expect(one.edges.some((e) => [e.source, e.target].includes(caroline) && [e.source, e.target].includes(melanie))).toBe(true);

    const two = await api.graph.entity({ ...ref(), entityId: melanie, hops: 2 });
    expect(two.nodes.find((n) => n.id === john)?.depth).toBe(2);
    expect(two.edges.some((e) => [e.source, e.target].includes(john) && [e.source, e.target].includes(caroline))).toBe(true);

    const capped = await api.graph.entity({ ...ref(), entityId: melanie, limit: 1 });
    expect(capped.nodes.filter((n) => n.kind === "entity")).toHaveLength(2);
    expect(capped.truncated).toBe(true);
    // The most strongly linked neighbour is the one kept.
    expect(one.nodes.some((n) => n.id === capped.nodes.find((c) => c.depth === 1 && c.kind === "entity")!.id)).toBe(true);
  });

  it("gives an entity's beliefs over time: valid-time order, the superseded belief kept and linked to the one that replaced it", async () => {
    const melanie = await entityId("Melanie");
    const { timeline, timelineTotal } = await api.graph.entity({ ...ref(), entityId: melanie });
    expect(timelineTotal).toBe(timeline.length);
    const times = timeline.map((b) => b.validFrom ?? "9999");
    expect(times).toEqual([...times].sort());
    expect(timeline.every((b) => b.subject === melanie && b.predicate !== "mentioned with")).toBe(true);
    const boston = timeline.find((b) => b.predicate === "lives in" && b.object === "Boston")!;
    const denver = timeline.find((b) => b.predicate === "lives in" && b.object === "Denver")!;
    expect(boston).toMatchObject({ status: "superseded", supersededBy: denver.id, validFrom: "2023-05-08T10:00:00Z", validTo: "2023-08-14T10:00:00Z" });
    expect(denver).toMatchObject({ status: "current", supersedes: boston.id, validFrom: "2023-08-14T10:00:00Z", validTo: null });
    expect(timeline.indexOf(boston)).toBeLessThan(timeline.indexOf(denver));

    // A belief opens its sources (the turn it was read from) and its neighbours in the chain.
    const detail = await api.graph.belief({ ...ref(), beliefId: boston.id });
    expect(detail.belief.id).toBe(boston.id);
    expect(detail.sources.map((s) => s.step)).toEqual(["turns"]);
    expect(detail.sources[0]!.content).toContain("I live in Boston");
    expect(detail.sources[0]!.onBranch).toBe(true);
    expect(detail.supersededBy?.id).toBe(denver.id);
    expect(detail.supersedes).toBeNull();
    expect((await api.graph.beliefs({ ...ref(), ids: [denver.id, boston.id, "bel_nothing"] })).map((b) => b.id)).toEqual([boston.id, denver.id]);
  });

  it("lists the insights newest first, by kind and by entity, with the entities named", async () => {
    const all = await api.graph.insights({ ...ref() });
    expect(all.steps).toEqual(["proactive"]);
    expect(all.insights.length).toBeGreaterThan(0);
    const connections = await api.graph.insights({ ...ref(), kind: "connection" });
    expect(connections.insights.length).toBeGreaterThan(0);
    expect(connections.insights.every((i) => i.kind === "connection")).toBe(true);
    const john = await entityId("John");
    const aboutJohn = await api.graph.insights({ ...ref(), entity: john });
    expect(aboutJohn.insights.length).toBeGreaterThan(0);
    expect(aboutJohn.insights.every((i) => i.entities.includes(john) && i.entityRefs.some((e) => e.id === john && e.name === "John"))).toBe(true);
    const digests = await api.graph.insights({ ...ref(), kind: "digest", scope: "demo:u2" });
    expect(digests.insights.every((i) => i.scope === "demo:u2")).toBe(true);
  });

  it("reads each branch through its own pointers", async () => {
    // On a branch where "lives in" is not functional, nothing supersedes Boston.
    await createBranch(db, pipelineId, { name: "no-supersede" });
    await saveVersion(db, pipelineId, { spec: spec(["works at"]), branch: "no-supersede", message: "lives in holds several values" });
    expect((await runPipeline(db, { workspaceId, pipelineId, branch: "no-supersede" })).status).toBe("completed");
    const melanie = await entityId("Melanie");
    const onBranch = await api.graph.entity({ ...ref(), branch: "no-supersede", entityId: melanie });
    expect(onBranch.timeline.filter((b) => b.predicate === "lives in").map((b) => [b.object, b.status])).toEqual([
      ["Boston", "current"],
      ["Denver", "current"],
    ]);
    const onMain = await api.graph.entity({ ...ref(), entityId: melanie });
    expect(onMain.timeline.find((b) => b.object === "Boston")!.status).toBe("superseded");
    // The same belief (same id: same statement, same source) is a different record on each branch.
    const boston = onMain.timeline.find((b) => b.object === "Boston")!;
    const there = await api.graph.belief({ ...ref(), branch: "no-supersede", beliefId: boston.id });
    expect(there.belief).toMatchObject({ id: boston.id, status: "current", supersededBy: null });
    expect(there.belief.recordId).not.toBe(boston.recordId);
    expect((await api.graph.belief({ ...ref(), beliefId: boston.id })).belief).toMatchObject({ recordId: boston.recordId, status: "superseded" });
    await expect(api.graph.belief({ ...ref(), branch: "no-supersede", beliefId: "bel_0000000000000000" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  }, 60_000);

  it("refuses a non-member, lets a viewer read, and explains a pipeline without an entities step or an unknown entity", async () => {
    const melanie = await entityId("Melanie");
    const stranger = await signUp(db, { email: "graph-stranger@example.com", password: "graph-password-2" });
    const strangerApi = createCaller(await createContext({ db, session: { userId: stranger.user.id, email: stranger.user.email } }));
    await expect(strangerApi.graph.entities({ ...ref() })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(strangerApi.graph.entity({ ...ref(), entityId: melanie })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(strangerApi.graph.insights({ ...ref() })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const anonymous = createCaller(await createContext({ db }));
    await expect(anonymous.graph.entities({ ...ref() })).rejects.toMatchObject({ code: "UNAUTHORIZED" });

    const viewer = await signUp(db, { email: "graph-viewer@example.com", password: "graph-password-3" });
    await db.membership.create({ data: { userId: viewer.user.id, workspaceId, role: "viewer" } });
    const viewerApi = createCaller(await createContext({ db, session: { userId: viewer.user.id, email: viewer.user.email } }));
    expect((await viewerApi.graph.entity({ ...ref(), entityId: melanie })).entity.name).toBe("Melanie");

    await expect(api.graph.entity({ ...ref(), entityId: "ent_missing" })).rejects.toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("ent_missing") });
    // An entity of another scope is not found when a scope is given.
    await expect(api.graph.entity({ ...ref(), entityId: melanie, scope: "demo:u2" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const plain = await createPipeline(db, workspaceId, {
      name: "plain",
      spec: new Pipeline("plain", {}).source("chats", { format: "json" }).output("search", { from: "chats", surface: "search" }).toSpec(),
    });
    await expect(api.graph.entities({ workspaceId, pipelineId: plain.pipeline.id })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/no entities step/) });
    expect(await api.graph.insights({ workspaceId, pipelineId: plain.pipeline.id })).toEqual({ insights: [], total: 0, steps: [] });
  });
});
