/**
 * A scripted life through offline consolidate (the Memex decision rule) against a real database:
 * moves, job changes, a pet that dies, preferences reversed, a hobby given up. The final memory
 * set must be what a person (or a model) would keep — each replaced memory retired (UPDATE or
 * DELETE) with the fact that changed it as the reason — not every statement ever made.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../core/db";
import { Pipeline } from "../../pipeline/sdk";
import { appendSourceRecords, createPipeline, getBranch } from "../../services/pipelines";
import { runPipeline } from "../../services/runs";
import { signUp } from "../../services/users";
import { createTestDb } from "../../store/test-db";
import { deletedPointerStep, memoryMetaOf } from "./consolidate";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "life@example.com", password: "consolidate-life-password" }));
});
afterAll(async () => close());

const LIFE = [
  "Ana lives in Lisbon",
  "Ana works as a teacher at Escola Azul",
  "Ana has a dog named Rex",
  "Ana loves coffee",
  "Ana plays chess every weekend",
  "Ana's sister Marta lives in Faro",
  "Ana owns a red bike",
  "Ana moved from Lisbon to Porto",
  "Ana quit her job at Escola Azul",
  "Ana started working at Acme as an engineer",
  "Ana's dog Rex died last week",
  "Ana hates coffee now",
  "Ana no longer plays chess",
  "Ana moved to Madrid",
  "Ana started working at Globex",
  "Ana sold her red bike",
];

async function pointedContents(pipelineId: string, step: string) {
  const { branch } = await getBranch(db, pipelineId, "main");
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step } });
  const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } } });
  return records;
}

describe("consolidate: a life that changes (offline)", () => {
  it("ends with the memories that still hold, each retired one with the fact that retired it", async () => {
    const spec = new Pipeline("life", { agent: "test" })
      .source("facts", { format: "jsonl" })
      .consolidate("memories", { from: "facts", prompt: "Fact: {{ record.content }}" })
      .output("search", { from: "memories", surface: "search" })
      .toSpec();
    const { pipeline } = await createPipeline(db, workspaceId, { name: "life", spec });
    await appendSourceRecords(
      db,
      pipeline.id,
      "facts",
      LIFE.map((content, i) => ({ externalId: `life-${i}`, content, scope: "ana", metadata: { time: { created_at: `2024-01-${String(i + 1).padStart(2, "0")}T10:00:00Z` } } })),
    );
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id }, { runOptions: { retryBaseMs: 1 } });
    expect(run.status).toBe("completed");

    const active = (await pointedContents(pipeline.id, "memories")).map((r) => r.content).sort();
    // A memory of a slot (residence, employer, …) says its value canonically, then the fact's words.
    expect(active).toEqual([
      "Ana hates coffee now",
      "Ana lives in Madrid (Ana moved to Madrid)",
      "Ana works for Globex (Ana started working at Globex)",
      "Ana's sister Marta lives in Faro",
    ]);

    // Every retired memory is a tombstone or a superseded version whose successor names the fact.
    const deleted = await pointedContents(pipeline.id, deletedPointerStep("memories"));
    expect(deleted.map((r) => r.content).sort()).toEqual([
      "Ana owns a red bike",
      "Ana plays chess every weekend",
      "Ana's job title is teacher (Ana works as a teacher at Escola Azul)",
      "Ana's pet is a dog named Rex (Ana has a dog named Rex)",
    ]);
    for (const r of deleted) expect(memoryMetaOf(r as never)!.reason).toMatch(/^"Ana(?: quit| no longer|'s dog| sold)/);

    const versions = await db.record.findMany({ where: { pipelineId: pipeline.id, step: "memories" } });
    const porto = versions.find((r) => r.content === "Ana lives in Porto");
    expect(porto && memoryMetaOf(porto as never)).toMatchObject({ event: "UPDATE", reason: expect.stringContaining("Lisbon → Porto") });
  });
});
