/**
 * Graph search and ask on a real graph: sessions → turns → entities → relations built by the real
 * runner on PGlite, indexed, then searched. The fixture is built for a 2-hop question: Alice names
 * her sister Bob in one turn; another speaker says where Bob moved in a turn that never mentions
 * Alice and shares no word with the question, so lexical and semantic search cannot find it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import { ask } from "../services/ask";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { indexPipeline } from "./indexing";
import { search } from "./search";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;

const SCOPE = "family:alice";
const session = (id: string, day: string, turns: string[]) => ({
  externalId: `${SCOPE}:${id}`,
  content: [`# ${day}`, ...turns].join("\n\n"),
  scope: SCOPE,
  metadata: { time: { created_at: `${day}T10:00:00.000Z` } },
});
const LISBON = "Dana: I heard Bob moved to Lisbon last spring.";
const isLisbon = (content: string) => content.endsWith(LISBON);

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "graph-search@example.com", password: "graph-search-password" }));
  const spec = new Pipeline("graph-search", {})
    .source("sessions", { format: "jsonl" })
    .split("turns", { from: "sessions", operator: { kind: "turns", size: 1, stride: 1 } })
    .entities("entities", { from: "turns" })
    .relations("relations", { from: ["turns", "entities"] })
    .output("search", { from: ["turns"], surface: "search" })
    .toSpec();
  const { pipeline } = await createPipeline(db, workspaceId, { name: "graph-search", spec });
  pipelineId = pipeline.id;
  await appendSourceRecords(db, pipelineId, "sessions", [
    session("1", "2023-05-01", ["Alice: My sister Bob is coming to stay with us.", "Dana: That is lovely news."]),
    session("2", "2023-06-01", ["Dana: I live near the harbour these days.", "Alice: We live two streets from the market, where do you live exactly?"]),
    session("3", "2023-07-01", ["Alice: Any news from the family?", LISBON]),
  ]);
  const run = await runPipeline(db, { workspaceId, pipelineId });
  expect(run.status).toBe("completed");
  await indexPipeline(db, pipelineId, "main", { workspaceId });
});
afterAll(async () => close());

const QUESTION = "Where does the sister of Alice live?";
const find = (mode: "hybrid" | "graph", limit = 5) => search(db, { workspaceId, pipelineId, query: QUESTION, mode, scope: SCOPE, limit });

describe("graph search", () => {
  it("answers a 2-hop question through the graph that lexical and semantic search miss", async () => {
    const lexical = await find("hybrid", 20);
    expect(lexical.hits.filter((h) => isLisbon(h.content))).toEqual([]);

    const graph = await find("graph");
    expect(graph.graph!.entities.map((e) => e.name)).toContain("Alice");
    const hit = graph.hits.find((h) => isLisbon(h.content));
    expect(hit, JSON.stringify(graph.hits.map((h) => h.content))).toBeDefined();
    expect(hit!.score.graph).toBeGreaterThan(0);
    // The evidence path: Alice → belief → Bob → belief (Bob lives in Lisbon) → this turn.
    const path = hit!.evidencePaths![0]!;
    expect(path.from).toMatchObject({ name: "Alice", matched: "alice" });
    expect(path.edges).toHaveLength(2);
    expect(path.edges[0]).toMatchObject({ subjectName: expect.any(String), objectEntity: expect.any(String) });
    expect([path.edges[0]!.subjectName, path.edges[0]!.object]).toEqual(expect.arrayContaining(["Alice", "Bob"]));
    expect(path.edges[1]).toMatchObject({ subjectName: "Bob", predicate: "lives in", object: "Lisbon", status: "current" });
    expect(path.sourceId).toBe(hit!.id);
    expect(typeof path.edges[1]!.recordId).toBe("string");
  });

  it("ask answers it from the graph by default, with the path and full entity coverage", async () => {
    const packet = await ask(db, { workspaceId, pipelineId, branch: "main", question: QUESTION, scope: SCOPE });
    expect(packet.mode).toBe("graph");
    expect(packet.abstained).toBe(false);
    expect(packet.graph).toMatchObject({ entities: ["Alice"], reached: ["Alice"], missing: [], coverage: 1 });
    expect(packet.critic).toMatchObject({ verdict: "APPROVE", model: "offline/entity-coverage" });
    // The packet carries the evidence path to the answering turn.
    const lisbon = packet.evidence.find((e) => isLisbon(e.content))!;
    expect(lisbon.relevance).toBeGreaterThan(0);
    expect(lisbon.paths?.[0]?.edges.at(-1)).toMatchObject({ subjectName: "Bob", predicate: "lives in", object: "Lisbon" });
    const cited = packet.evidence.find((e) => e.id === packet.citations[0]!.recordId)!;
    expect(cited.paths?.length).toBeGreaterThan(0);
  });

  it("abstains when the question's entities are not in the graph", async () => {
    const packet = await ask(db, { workspaceId, pipelineId, branch: "main", question: "Where does the sister of Zed live?", scope: SCOPE });
    expect(packet.mode).toBe("graph");
    expect(packet.graph).toMatchObject({ entities: ["Zed"], reached: [], missing: ["Zed"], coverage: 0 });
    expect(packet.critic.verdict).toBe("REJECT");
    expect(packet.abstained).toBe(true);
    expect(packet.answer).toBeNull();
    expect(packet.uncertaintyReason).toMatch(/Zed/);
    const result = await search(db, { workspaceId, pipelineId, query: "Where does the sister of Zed live?", mode: "graph", scope: SCOPE });
    expect(result.graph).toMatchObject({ entities: [], unknownNames: ["Zed"] });
    expect(result.notice).toMatch(/names no entity of the graph \(Zed is not in it\)/);
  });
});
