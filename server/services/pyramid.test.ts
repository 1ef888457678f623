/**
 * The Pyramid template on a real (PGlite) database: 25 observations make 3 tier-1 summaries of at
 * most 10 and 1 tier-2 summary; observations are classified into mental models by topic; the
 * synthesis sits on top; and retrieval walks the pyramid top-down to the observation and its source.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { PYRAMID_STEP } from "../pipeline/templates/pyramid";
import { templateSpec } from "../pipeline/templates";
import { SHARP_HITS, walk } from "../search/walk";
import { createTestDb } from "../store/test-db";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
const SCOPE = "locomo:conv-1";

const TURNS = [
  "I started a new job as a nurse at the city hospital this spring.",
  "My daughter Emma turned six and we threw her a party at home.",
  "I have been painting watercolors every weekend to relax.",
  "The night shifts at work are exhausting but my colleagues are kind.",
  "We are planning a family trip to Lisbon in August.",
  "I adopted a rescue dog named Biscuit last month.",
  "My brother is moving back to town after ten years abroad.",
  "I signed up for a pottery class at the community college.",
  "Work gave me a promotion to charge nurse in June.",
  "Emma started piano lessons with a teacher from her school.",
  "I run five kilometers in the park before my shift.",
  "Our flight to Lisbon leaves on the third of August.",
  "I finished a painting of the harbour for my mother.",
  "My manager asked me to mentor two new nurses.",
  "Biscuit chewed through the garden hose again.",
  "I am reading a book about the history of Portugal.",
  "We booked a hotel near the old town in Lisbon.",
  "Emma lost her first tooth at school on Tuesday.",
  "I joined a choir that sings at the community centre.",
  "My colleague Priya covered my shift when Emma was sick.",
  "The spare key to the lighthouse cabin is under the blue ceramic frog.",
  "I want to learn Portuguese before the trip.",
  "My brother found an apartment two streets from ours.",
  "I sold two paintings at the autumn art fair.",
  "The hospital is opening a new children's ward next year.",
];

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "pyramid@example.com", password: "pyramid-password-1" }));
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "pyramid", spec: templateSpec("pyramid", "json") }));
  // One conversation of 25 turns: offline, one observation per turn.
  const content = ["# Catching up", ...TURNS.map((t) => `Caroline: ${t}`)].join("\n\n");
  await appendSourceRecords(db, pipelineId, "chats", [
    { externalId: "session-1", content, scope: SCOPE, metadata: { time: { created_at: "2023-05-08T13:56:00Z" }, chat: { conversation_id: "session-1", title: "Catching up" } } },
  ]);
  expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
}, 180_000);
afterAll(async () => close?.());

const count = (step: string) => db.record.count({ where: { pipelineId, step } });

describe("pyramid template", () => {
  it("25 observations → 3 tier-1 groups of at most 10 → 1 tier-2 → 1 synthesis", async () => {
    expect(PYRAMID_STEP).toBe(10);
    expect(await count("observations")).toBe(25);
    expect(await count("tier-1")).toBe(3);
    expect(await count("tier-2")).toBe(1);
    expect(await count("synthesis")).toBe(1);
    const tier1 = await db.record.findMany({ where: { pipelineId, step: "tier-1" }, select: { id: true } });
    const sizes = await Promise.all(tier1.map((t) => db.recordEdge.count({ where: { childId: t.id } })));
    expect(sizes.sort((a, b) => a - b)).toEqual([5, 10, 10]);
    const [tier2] = await db.record.findMany({ where: { pipelineId, step: "tier-2" }, select: { id: true } });
    expect(await db.recordEdge.count({ where: { childId: tier2!.id } })).toBe(3);
  });

  it("a tier summarises consecutive observations: turns 1–10, 11–20, 21–25 (one session's turns share its time)", async () => {
    const tier1 = await db.record.findMany({ where: { pipelineId, step: "tier-1" }, select: { id: true } });
    const turnsOf = async (tierId: string) => {
      const edges = await db.recordEdge.findMany({ where: { childId: tierId }, select: { parentId: true } });
      const members = await db.record.findMany({ where: { id: { in: edges.map((e) => e.parentId) } }, select: { metadata: true } });
      return members.map((m) => (m.metadata as { custom: { turns: number[] } }).custom.turns[0]!).sort((a, b) => a - b);
    };
    const groups = (await Promise.all(tier1.map((t) => turnsOf(t.id)))).sort((a, b) => a[0]! - b[0]!);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(groups).toEqual([range(1, 10), range(11, 20), range(21, 25)]);
  });

  it("classifies every observation into a mental model by topic, one model per topic", async () => {
    const topics = await db.record.findMany({ where: { pipelineId, step: "topics" }, select: { content: true, metadata: true } });
    expect(topics).toHaveLength(25);
    const topicOf = (text: string) => (topics.find((t) => t.content.includes(text))!.metadata as { custom: { topic: string } }).custom.topic;
    expect(topicOf("promotion to charge nurse")).toBe("work");
    expect(topicOf("flight to Lisbon")).toBe("travel");
    expect(topicOf("painting watercolors")).toBe("hobbies");
    const distinct = new Set(topics.map((t) => (t.metadata as { custom: { topic: string } }).custom.topic));
    const models = await db.record.findMany({ where: { pipelineId, step: "mental-models" }, select: { metadata: true } });
    expect(models.map((m) => (m.metadata as { group: { key: string } }).group.key).sort()).toEqual([...distinct].sort());
  });

  it("walks top-down: synthesis → tier-2 → tier-1 → the observation, with its source session", async () => {
    const result = await walk(db, { workspaceId, pipelineId, query: "Where is the spare key to the lighthouse cabin?", from: "synthesis", scope: SCOPE, limit: 3 });
    expect(result.path).toEqual(["synthesis", "tier-2", "tier-1", "observations"]);
    expect(result.levels.map((l) => l.step)).toEqual(["synthesis", "tier-2", "tier-1"]);
    expect(result.levels[0]!.nodes).toHaveLength(1);
    // Each level's records were reached from the level above.
    for (let i = 1; i < result.levels.length; i++) {
      const above = new Set(result.levels[i - 1]!.nodes.map((n) => n.id));
      for (const n of result.levels[i]!.nodes) expect(above.has(n.parentId!)).toBe(true);
    }
    const top = result.hits[0]!;
    expect(top.step).toBe("observations");
    expect(top.content).toMatch(/blue ceramic frog/);
    expect(new Set(result.levels[2]!.nodes.map((n) => n.id)).has(top.parentId!)).toBe(true);
    expect(top.sources).toHaveLength(1);
    expect(top.sources[0]).toMatchObject({ step: "chats" });
    expect(top.sources[0]!.content).toMatch(/^# Catching up/);
  });

  it("keeps the right branch: a narrow walk that loses it falls back to the observations ranked flat", async () => {
    const narrow = { workspaceId, pipelineId, from: "synthesis", scope: SCOPE, limit: 1, beam: 1, breadth: "fixed" as const };
    let lost = 0;
    for (const turn of TURNS) {
      const query = turn.replace(/^(?:I|My|We|Our)\s+/, "");
      const walked = await walk(db, { ...narrow, query, fallback: "none" });
      if (!walked.hits[0]?.content.includes(turn)) lost++;
      const kept = await walk(db, { ...narrow, query });
      expect(kept.hits[0]?.content, query).toContain(turn);
      if (kept.fallback) expect(kept.fallback).toMatchObject({ step: "observations", reason: expect.stringMatching(/ranked observations flat/) });
    }
    // A beam of one does lose branches here: without the fallback some questions miss.
    expect(lost).toBeGreaterThan(0);
    // Breadth from the question walks wider than the beam when several branches match as well.
    const wide = await walk(db, { workspaceId, pipelineId, from: "synthesis", scope: SCOPE, query: "Emma painting", beam: 1, fallback: "none" });
    expect(wide.levels[2]!.nodes.length).toBeGreaterThan(1);
  });

  it("keeps both branches of a two-part question: a confident walk ranks other branches too, below its own", async () => {
    // Emma's piano lessons (the flat best, turn 10) and the lighthouse key (turn 21) sit in different tier-1 groups.
    const query = "Who teaches Emma her piano lessons at school, and where is the lighthouse key?";
    const narrow = { workspaceId, pipelineId, from: "synthesis", scope: SCOPE, limit: 4, beam: 1, breadth: "fixed" as const };
    const walkOnly = await walk(db, { ...narrow, query, fallback: "none" });
    expect(walkOnly.hits[0]!.content).toContain("piano lessons");
    // The walk alone keeps one branch: its other records fill the limit, the second part is lost.
    expect(walkOnly.hits.some((h) => h.content.includes("lighthouse cabin"))).toBe(false);
    const kept = await walk(db, { ...narrow, query });
    expect(kept.fallback).toBeUndefined();
    expect(kept.hits[0]!.content).toContain("piano lessons");
    expect(kept.hits.slice(0, 2).map((h) => h.content).join("\n")).toContain("lighthouse cabin");
  });

  it("an open question's matches spread over the history: a branch no better than the others is a weak prior", async () => {
    // Painting comes up in every tier-1 group (turns 3, 13, 24); the walk keeps one group, whose Emma turns
    // match the question less well than the other groups' painting turns do.
    const query = "Would Caroline enjoy painting with Emma?";
    const narrow = { workspaceId, pipelineId, from: "synthesis", scope: SCOPE, limit: 5, beam: 1, breadth: "fixed" as const };
    const walked = await walk(db, { ...narrow, query });
    expect(walked.fallback).toBeUndefined();
    const branch = new Set((await walk(db, { ...narrow, query, fallback: "none" })).hits.map((h) => h.id));
    expect(branch.has(walked.hits[0]!.id)).toBe(true);
    // The three painting turns first (two of them from other branches), then the branch's Emma turns.
    expect(walked.hits.slice(0, 3).map((h) => h.content)).toEqual([
      expect.stringContaining("painting of the harbour"),
      expect.stringContaining("painting watercolors"),
      expect.stringContaining("sold two paintings"),
    ]);
    expect(walked.hits.slice(3).every((h) => branch.has(h.id) && h.content.includes("Emma"))).toBe(true);
  });

  it("a deep walk keeps the first page as the match ranking and orders the rest with the group context", async () => {
    // A question whose group context would reorder its first page (Emma's turns sit in two tier-1 groups).
    const query = "Emma school piano tooth sick party";
    const base = { workspaceId, pipelineId, from: "synthesis", scope: SCOPE, query };
    const page = await walk(db, { ...base, limit: SHARP_HITS });
    const deep = await walk(db, { ...base, limit: 25 });
    expect(deep.hits.slice(0, SHARP_HITS).map((h) => h.id)).toEqual(page.hits.map((h) => h.id));
    // Past the first page, every other record once (the group context reorders, it drops nothing).
    expect(deep.hits).toHaveLength(TURNS.length);
    expect(new Set(deep.hits.map((h) => h.id)).size).toBe(TURNS.length);
  });

  it("refuses a walk that cannot run, saying why", async () => {
    await expect(walk(db, { workspaceId, pipelineId, query: "key", from: "chats" })).rejects.toThrow(/"chats" is a source/);
    await expect(walk(db, { workspaceId, pipelineId, query: "key", from: "nope" })).rejects.toThrow(/Unknown step "nope"\. Steps in this pipeline: observations, topics/);
    await expect(walk(db, { workspaceId, pipelineId, query: "   ", from: "synthesis" })).rejects.toThrow(/query/);
    await expect(walk(db, { workspaceId, pipelineId, query: "key", from: "synthesis", beam: 0 })).rejects.toThrow(/beam must be from 1/);
    // Another scope has no pyramid: an empty walk, not an error.
    expect((await walk(db, { workspaceId, pipelineId, query: "key", from: "synthesis", scope: "locomo:conv-2" })).hits).toEqual([]);
  });
});
