/**
 * A new step kind is one module implementing StepKind plus its registration: the runner runs it
 * (plans, batches, commits, incrementality, provenance) without knowing it. `uppercase` exists only
 * in this test; nothing else in the engine changes for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Pipeline } from "../../pipeline/sdk";
import type { Db } from "../../services/db-types";
import { appendSourceRecords, createPipeline, getBranch } from "../../services/pipelines";
import { signUp } from "../../services/users";
import { PostgresRecordStore } from "../../store/record-store";
import { createTestDb } from "../../store/test-db";
import { oneToOneWorkKey, transformKey } from "../keys";
import { ScriptedModel } from "../../llm/fake-model";
import { executeRun, planRun, type EngineContext, type EngineSpec } from "../runner";
import { inheritedMetadata } from "../step-context";
import { registerStepKind, stepKindOf, type StepKind } from ".";
import { oneToOnePlanning, type InputItem } from "./one-to-one";

// ---- the kind: its own file in real life ----------------------------------------------------

interface UppercaseStep {
  type: "uppercase";
  name: string;
  from: string;
}

const uppercaseKind: StepKind<UppercaseStep, InputItem> = {
  type: "uppercase",
  ...oneToOnePlanning<UppercaseStep>({ exactlyOne: true }),
  async execute(ctx, { input }) {
    return [
      ctx.newRecord({
        workKey: oneToOneWorkKey(ctx.svh, input.id),
        materializationKey: transformKey(ctx.svh, input.id),
        content: input.content.toUpperCase(),
        scope: input.scope,
        sources: [input.id],
        groupKey: input.id,
        metadata: inheritedMetadata([input]),
        audit: { operator: "uppercase" },
      }),
    ];
  },
};

// ---- its registration ------------------------------------------------------------------------

registerStepKind(uppercaseKind);

// ---------------------------------------------------------------------------------------------

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "registry@example.com", password: "registry-password" }));
});
afterAll(async () => close());

async function setup() {
  const base = new Pipeline("shouty", {}).source("chats", { format: "jsonl" }).toSpec();
  const { pipeline } = await createPipeline(db, workspaceId, { name: "shouty", spec: base });
  await appendSourceRecords(db, pipeline.id, "chats", [
    { externalId: "a", content: "quiet words", scope: "acme" },
    { externalId: "b", content: "more quiet words", scope: "acme" },
  ]);
  const { branch } = await getBranch(db, pipeline.id);
  // The spec schema does not know this test-only kind: the engine runs it all the same.
  const spec: EngineSpec = { sources: base.sources, steps: [{ type: "uppercase", name: "shout", from: "chats" }] };
  const context = async (): Promise<EngineContext> => {
    const run = await db.run.create({ data: { workspaceId, pipelineId: pipeline.id, branchId: branch.id, versionId: branch.versionId, status: "running" } });
    return { store: new PostgresRecordStore(db), model: new ScriptedModel(), workspaceId, pipelineId: pipeline.id, branchId: branch.id, runId: run.id, spec };
  };
  const pointed = async () => {
    const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: "shout" } });
    return db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, orderBy: { content: "asc" } });
  };
  return { pipelineId: pipeline.id, context, pointed };
}

describe("step registry", () => {
  it("runs a kind added with one module and its registration through the real runner", async () => {
    const { pipelineId, context, pointed } = await setup();
    expect(await planRun(await context())).toMatchObject([{ step: "shout", type: "uppercase", pending: 2, total: 2 }]);

    const first = await executeRun(await context(), { batchSize: 1 });
    expect(first).toMatchObject({ status: "completed", steps: [{ step: "shout", input: 2, output: 2, skipped: 0, errors: 0 }] });
    const records = await pointed();
    expect(records.map((r) => [r.content, r.scope])).toEqual([
      ["MORE QUIET WORDS", "acme"],
      ["QUIET WORDS", "acme"],
    ]);
    for (const r of records) expect(await db.recordEdge.count({ where: { childId: r.id } })).toBe(1);

    // Incremental like every kind: unchanged, nothing to do; one new source, one new record.
    expect(await executeRun(await context())).toMatchObject({ steps: [{ input: 0, output: 0, skipped: 2 }] });
    await appendSourceRecords(db, pipelineId, "chats", [{ externalId: "c", content: "a whisper", scope: "acme" }]);
    expect(await executeRun(await context())).toMatchObject({ steps: [{ input: 1, output: 1, skipped: 2 }] });
    expect((await pointed()).map((r) => r.content)).toEqual(["A WHISPER", "MORE QUIET WORDS", "QUIET WORDS"]);
  });

  it("a type nobody registered cannot run, and says so", async () => {
    expect(() => stepKindOf("shout-louder")).toThrow(/step type shout-louder is not supported yet/);
    expect(() => registerStepKind({ ...uppercaseKind })).toThrow(/already registered/);
  });
});
