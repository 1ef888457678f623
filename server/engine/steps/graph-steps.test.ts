/**
 * The graph steps (entities → relations → insights) through the real runner on PGlite: entity
 * resolution per scope, beliefs that supersede (both kept, with valid times) and contradict,
 * insights as a projection, provenance to the source turns, and incrementality (an unchanged
 * re-run makes nothing; a new session re-derives only its own scope).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../core/db";
import { Pipeline } from "../../pipeline/sdk";
import { projection } from "../../services/projections";
import { appendSourceRecords, createPipeline, getBranch } from "../../services/pipelines";
import { runPipeline } from "../../services/runs";
import { signUp } from "../../services/users";
import { createTestDb } from "../../store/test-db";
import type { BeliefMeta } from "../belief-extract";
import type { EntityMeta } from "../entity-extract";
import type { InsightMeta } from "../insight-detect";
import type { ModelProvider, ModelRequest } from "../model";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "graph-steps@example.com", password: "graph-steps-password" }));
});
afterAll(async () => close());

const session = (scope: string, id: string, day: string, turns: string[]) => ({
  externalId: `${scope}:${id}`,
  content: [`# ${day}`, ...turns].join("\n\n"),
  scope,
  metadata: { time: { created_at: `${day}T10:00:00.000Z` } },
});

const spec = new Pipeline("graph", {})
  .source("sessions", { format: "jsonl" })
  .split("turns", { from: "sessions", operator: { kind: "turns", size: 1, stride: 1 } })
  .entities("entities", { from: "turns" })
  .relations("relations", { from: ["turns", "entities"] })
  .insights("proactive", { from: ["relations", "entities"] })
  .output("insights", { from: "proactive", surface: "projection" })
  .toSpec();

type Stats = { steps: Array<{ step: string; input: number; output: number; errors: number; modelCalls: number }> };

describe("graph steps", () => {
  it("build entities, beliefs and insights per scope, incrementally", async () => {
    const { pipeline } = await createPipeline(db, workspaceId, { name: "graph", spec });
    await appendSourceRecords(db, pipeline.id, "sessions", [
      session("conv-a", "1", "2023-05-08", ["Caroline: Hey Mel! How was the trip?", "Melanie: Great! I just moved to Boston with the kids.", "Caroline: Melanie, that is huge. I love painting these days."]),
      session("conv-a", "2", "2023-08-14", ["Melanie: Big news: I moved to Seattle last week.", "Caroline: Mel, wow! I don't like painting anymore, but I love pottery.", "Caroline: I live in Denver. Actually I live in Austin."]),
      session("conv-b", "1", "2023-06-01", ["Ben: My cat is called Mel and she sleeps all day.", "Ana: Mel is lovely. I work at Riverside Library."]),
    ]);
    const first = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    expect(first.status).toBe("completed");
    const { branch } = await getBranch(db, pipeline.id, "main");
    const pointed = async (step: string) => {
      const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step } });
      return db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } } });
    };
    const custom = <T>(r: { metadata: unknown }, key: string) => (r.metadata as { custom?: Record<string, T> }).custom?.[key];

    // Entities: Mel and Melanie are one person in conv-a; Mel is a cat in conv-b.
    const entities = await pointed("entities");
    const entity = (scope: string, name: string) => {
      const r = entities.find((e) => e.scope === scope && custom<EntityMeta>(e, "entity")?.name === name);
      return r ? { record: r, meta: custom<EntityMeta>(r, "entity")! } : undefined;
    };
    const melanie = entity("conv-a", "Melanie")!;
    expect(melanie.meta).toMatchObject({ aliases: ["Mel"], type: "person", firstSeen: "2023-05-08T10:00:00.000Z", lastSeen: "2023-08-14T10:00:00.000Z" });
    expect(melanie.meta.mentions).toBe(5);
    expect(melanie.record.content).toBe("Melanie (person). Also: Mel. Mentioned 5 times, 2023-05-08 – 2023-08-14.");
    expect(entity("conv-a", "Mel")).toBeUndefined();
    expect(entity("conv-b", "Mel")!.meta.aliases).toEqual([]);
    expect(entity("conv-b", "Melanie")).toBeUndefined();
    const pointer = await db.branchPointer.findFirstOrThrow({ where: { branchId: branch.id, step: "entities", recordId: melanie.record.id } });
    expect(pointer.groupKey).toBe(`conv-a\u001f${melanie.meta.id}`);
    // Provenance: the turns that mention her.
    const parents = await db.recordEdge.findMany({ where: { childId: melanie.record.id } });
    const turns = await db.record.findMany({ where: { id: { in: parents.map((p) => p.parentId) } } });
    expect(turns).toHaveLength(5);
    expect(turns.every((t) => t.step === "turns" && /Mel/.test(t.content))).toBe(true);

    // Beliefs: Boston is superseded by Seattle; both are pointed, with their valid times.
    const beliefs = (await pointed("relations")).map((r) => ({ record: r, meta: custom<BeliefMeta>(r, "belief")! }));
    const lives = beliefs.filter((b) => b.meta.subject === melanie.meta.id && b.meta.predicate === "lives in");
    const boston = lives.find((b) => b.meta.object === "Boston")!;
    const seattle = lives.find((b) => b.meta.object === "Seattle")!;
    expect(boston.meta).toMatchObject({ status: "superseded", validFrom: "2023-05-08T10:00:00.000Z", validTo: "2023-08-14T10:00:00.000Z", supersededBy: seattle.meta.id });
    expect(seattle.meta).toMatchObject({ status: "current", validFrom: "2023-08-14T10:00:00.000Z", validTo: null, supersedes: boston.meta.id });
    expect(boston.meta.learnedAt).toBe(boston.meta.learnedAt && new Date(boston.meta.learnedAt).toISOString());
    const [bostonTurn] = await db.record.findMany({ where: { id: { in: boston.meta.sources } } });
    expect(bostonTurn!.content).toMatch(/I just moved to Boston/);
    expect(await db.recordEdge.count({ where: { childId: boston.record.id, parentId: bostonTurn!.id } })).toBe(1);
    expect(beliefs.some((b) => b.meta.predicate === "mentioned with" && b.meta.objectEntity)).toBe(true);

    // Insights: a contradiction (Denver and Austin, same session), connections, digests, one feed per scope.
    const insights = (await pointed("proactive")).filter((r) => custom<InsightMeta>(r, "insight"));
    const contradictions = insights.filter((r) => custom<InsightMeta>(r, "insight")!.kind === "contradiction");
    expect(contradictions.map((r) => custom<InsightMeta>(r, "insight")!.title)).toEqual([expect.stringMatching(/^Contradiction: Caroline — lives in — (Denver|Austin) .* vs Caroline — lives in — (Denver|Austin) /)]);
    expect(insights.filter((r) => custom<InsightMeta>(r, "insight")!.kind === "digest").map((r) => `${r.scope} ${custom<InsightMeta>(r, "insight")!.period}`).sort()).toEqual([
      "conv-a 2023-05",
      "conv-a 2023-08",
      "conv-b 2023-06",
    ]);
    const feed = await projection(db, pipeline.id, "main", "insights", "conv-a", { workspaceId });
    expect(feed.blocks).toHaveLength(1);
    expect(feed.text).toMatch(/^1 contradiction, \d+ connections, 2 digests\. Newest:\n- \[/);

    // Unchanged: nothing to do, nothing new.
    const records = await db.record.count({ where: { pipelineId: pipeline.id } });
    const again = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    for (const s of (again.stats as Stats).steps) expect([s.step, s.input, s.output]).toEqual([s.step, 0, 0]);
    expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(records);

    // A new session in conv-b re-derives conv-b only; conv-a keeps its very records.
    const before = new Set((await pointed("entities")).filter((r) => r.scope === "conv-a").map((r) => r.id));
    await appendSourceRecords(db, pipeline.id, "sessions", [session("conv-b", "2", "2023-07-01", ["Ben: Ana, I moved to Lisbon."])]);
    const third = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    const entityStats = (third.stats as Stats).steps.find((s) => s.step === "entities")!;
    expect(entityStats.input).toBe(3); // conv-b's three turns, not conv-a's six
    expect(new Set((await pointed("entities")).filter((r) => r.scope === "conv-a").map((r) => r.id))).toEqual(before);
    expect((await pointed("relations")).some((r) => custom<BeliefMeta>(r, "belief")?.object === "Lisbon")).toBe(true);
  }, 120_000);

  it("with a model: structured output per turn, stored once, resolved per scope the same way", async () => {
    // A fake provider (the LLM is the one thing tests fake): names the people it knows, and knows
    // that "Mel" is short for Melanie.
    const calls: ModelRequest[] = [];
    const model: ModelProvider = {
      async complete(request) {
        calls.push(request);
        const text = request.inputs.map((i) => i.content).join("\n");
        const names = ["Caroline", "Melanie", "Oscar"].filter((n) => text.includes(n));
        const entities = names.map((name) => ({ name, type: "person", ...(name === "Melanie" ? { aliases: ["Mel"] } : {}) }));
        if (/\bMel\b/.test(text) && !names.includes("Melanie")) entities.push({ name: "Melanie", type: "person", aliases: ["Mel"] });
        const raw = JSON.stringify({ entities });
        return { text: raw, raw, model: request.model, tokensIn: 10, tokensOut: 10, costUsd: 0, latencyMs: 1 };
      },
    };
    const withModel = new Pipeline("graph-model", {})
      .source("sessions", { format: "jsonl" })
      .split("turns", { from: "sessions", operator: { kind: "turns", size: 1, stride: 1 } })
      .entities("entities", { from: "turns", prompt: "List the entities.\n\n{{ record.content }}", model: "openai/gpt-4o-mini" })
      .toSpec();
    const { pipeline } = await createPipeline(db, workspaceId, { name: "graph-model", spec: withModel });
    await appendSourceRecords(db, pipeline.id, "sessions", [session("conv-m", "1", "2023-05-08", ["Caroline: Hey Mel, how are you?", "Melanie: Fine, thanks Caroline."])]);
    const first = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model });
    expect(first.status).toBe("completed");
    expect(calls).toHaveLength(2);
    expect(calls[0]!.jsonSchema).toMatchObject({ required: ["entities"] });
    const { branch } = await getBranch(db, pipeline.id, "main");
    const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: "entities" } });
    const metas = (await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } } })).map((r) => (r.metadata as unknown as { custom: { entity: EntityMeta } }).custom.entity);
    expect(metas.map((m) => [m.name, m.aliases]).sort()).toEqual([
      ["Caroline", []],
      ["Melanie", ["Mel"]],
    ]);

    // Unchanged: no call. A new turn in the scope: one call, for that turn only.
    await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model });
    expect(calls).toHaveLength(2);
    await appendSourceRecords(db, pipeline.id, "sessions", [session("conv-m", "2", "2023-06-01", ["Caroline: Mel, did Oscar call?"])]);
    await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { model });
    expect(calls).toHaveLength(3);
    expect(calls[2]!.inputs[0]!.content).toMatch(/did Oscar call/);
  }, 120_000);
});
