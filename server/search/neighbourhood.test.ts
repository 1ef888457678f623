/**
 * Issue 14, item 10: a 1,000-node lineage (a record with 1,000 sources, each with its own chain
 * down to a raw record) read one grouped hop at a time: counts per step, a page of records per
 * group, paging, children, and the ancestry further down as counts per step.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import { Pipeline } from "../pipeline/sdk";
import type { Db } from "../core/db";
import { appendSourceRecords, createPipeline, getBranch } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { ancestorsByStep, neighbourhood } from "./neighbourhood";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let userId: string;
let pipelineId: string;
let allId: string;

/** chats (1,000) → summaries (1:1) → all (one group of 1,000) → digest (1:1 of all). */
const bigSpec = () =>
  new Pipeline("big-lineage", { agent: "test" })
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", operator: { kind: "identity" } })
    .aggregate("all", { from: "summaries", every: 1000, operator: { kind: "extractive-summary" } })
    .transform("digest", { from: "all", operator: { kind: "identity" } })
    .output("context", { from: "digest", surface: "projection" })
    .toSpec();

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "lineage@example.com", password: "lineage-password-1" });
  workspaceId = workspace.id;
  userId = user.id;
  ({
    pipeline: { id: pipelineId },
  } = await createPipeline(db, workspaceId, { name: "big-lineage", spec: bigSpec() }));
  await appendSourceRecords(
    db,
    pipelineId,
    "chats",
    Array.from({ length: 1000 }, (_, i) => ({ externalId: `c-${i}`, content: `Conversation ${i}: a sentence about item ${i}.`, metadata: { time: { created_at: "2024-05-01T00:00:00Z" } } })),
  );
  const run = await runPipeline(db, { workspaceId, pipelineId }, { afterRun: false, runOptions: { batchSize: 500 } });
  expect(run.status).toBe("completed");
  const { branch } = await getBranch(db, pipelineId, "main");
  allId = (await db.branchPointer.findFirstOrThrow({ where: { branchId: branch.id, step: "all" } })).recordId;
}, 180_000);
afterAll(async () => close());

describe("neighbourhood", () => {
  it("groups 1,000 parents by step with a count and returns one page of them; children and the ancestry as counts", async () => {
    const hood = await neighbourhood(db, workspaceId, allId, {}, { pipelineId, branch: "main" });
    expect(hood.record).toMatchObject({ id: allId, step: "all", parentCount: 1000, childCount: 1 });
    expect(hood.groups.map((g) => [g.direction, g.step, g.count, g.records.length])).toEqual([
      ["parents", "summaries", 1000, 25],
      ["children", "digest", 1, 1],
    ]);
    // Parents in input order; each says how far it goes on.
    expect(hood.groups[0]!.records[0]).toMatchObject({ step: "summaries", parentCount: 1, childCount: 1, onBranch: true });
    // Beyond the parents: 1,000 chats two hops down, as one count.
    expect(await ancestorsByStep(db, workspaceId, allId, { pipelineId, branch: "main" })).toEqual([{ step: "chats", depth: 2, count: 1000 }]);
  });

  it("pages through one group without repeats, and a parent's own neighbourhood walks down", async () => {
    const first = await neighbourhood(db, workspaceId, allId, { direction: "parents", step: "summaries", limit: 200 });
    const second = await neighbourhood(db, workspaceId, allId, { direction: "parents", step: "summaries", offset: 200, limit: 200 });
    expect(first.groups).toHaveLength(1);
    const ids = [...first.groups[0]!.records, ...second.groups[0]!.records].map((r) => r.id);
    expect(new Set(ids).size).toBe(400);
    const last = await neighbourhood(db, workspaceId, allId, { direction: "parents", step: "summaries", offset: 975, limit: 200 });
    expect(last.groups[0]!.records).toHaveLength(25);

    const summary = first.groups[0]!.records[0]!;
    const down = await neighbourhood(db, workspaceId, summary.id);
    expect(down.groups.map((g) => [g.direction, g.step, g.count])).toEqual([
      ["parents", "chats", 1],
      ["children", "all", 1],
    ]);
    await expect(neighbourhood(db, workspaceId, allId, { offset: 5 })).rejects.toThrow(/needs a direction and a step/);
  });

  it("is a tRPC procedure that checks the workspace", async () => {
    const caller = createCaller(await createContext({ db, session: { userId, email: "lineage@example.com" } }));
    const hood = await caller.record.neighbourhood({ workspaceId, id: allId, pipelineId, branch: "main" });
    expect(hood.groups[0]!.count).toBe(1000);
    expect(await caller.record.ancestry({ workspaceId, id: allId, pipelineId, branch: "main" })).toEqual([{ step: "chats", depth: 2, count: 1000 }]);
    const other = await signUp(db, { email: "stranger@example.com", password: "stranger-password-1" });
    const stranger = createCaller(await createContext({ db, session: { userId: other.user.id, email: "stranger@example.com" } }));
    await expect(stranger.record.neighbourhood({ workspaceId: other.workspace.id, id: allId })).rejects.toThrow();
  });
});
