/**
 * The BM25 statistics cache: served for at most the request-cache lifetime when another process
 * changes the index, ended at once when this process refreshes it. Real database, real engine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Pipeline } from "../pipeline/sdk";
import type { Db } from "../core/db";
import { requestCacheMs } from "../core/ttl-cache";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { resolveBranch } from "./context";
import { indexPipeline } from "./indexing";
import { loadTermStats } from "./lexical";
import { search } from "./search";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "term-stats@example.com", password: "term-stats-password-1" }));
  const spec = new Pipeline("notes").source("notes", { format: "jsonl" }).transform("clean", { from: "notes", operator: { kind: "identity" } }).output("search", { from: "clean", surface: "search" });
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "notes", spec: spec.toSpec() }));
  await appendSourceRecords(db, pipelineId, "notes", [
    { externalId: "a", content: "tomato seedlings on the balcony" },
    { externalId: "b", content: "tomato soup recipe" },
    { externalId: "c", content: "the balcony door sticks" },
  ]);
  expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
  await indexPipeline(db, pipelineId);
}, 120_000);
afterAll(async () => close());

const dfOf = async (branchId: string, term: string, now?: number) => (await loadTermStats(db, branchId, ["clean"], [term], now)).get("clean")?.df.get(term) ?? 0;

describe("BM25 statistics cache", () => {
  it("serves a change made elsewhere for at most the lifetime", async () => {
    const { branchId } = await resolveBranch(db, workspaceId, pipelineId);
    const t0 = performance.now();
    expect(await dfOf(branchId, "tomato", t0)).toBe(2);
    // Another process's run changes the statistics: this process does not know.
    await db.$executeRawUnsafe(`UPDATE "SearchTermStat" SET df = 7 WHERE "branchId" = $1 AND step = 'clean' AND term = 'tomato'`, branchId);
    expect(await dfOf(branchId, "tomato", t0 + 1)).toBe(2);
    // A millisecond past each lifetime: at exactly one lifetime, floating-point sums of `t0` land on either side.
    expect(await dfOf(branchId, "tomato", t0 + requestCacheMs() + 1)).toBe(7);
    await db.$executeRawUnsafe(`UPDATE "SearchTermStat" SET df = 2 WHERE "branchId" = $1 AND step = 'clean' AND term = 'tomato'`, branchId);
    expect(await dfOf(branchId, "tomato", t0 + 2 * requestCacheMs() + 2)).toBe(2);
  });

  it("ends at once when this process refreshes the index, so a search ranks with the new statistics", async () => {
    const { branchId } = await resolveBranch(db, workspaceId, pipelineId);
    const before = await search(db, { workspaceId, pipelineId, query: "tomato balcony", mode: "fts", limit: 10 });
    expect(before.hits).toHaveLength(3);
    const t1 = performance.now();
    expect(await dfOf(branchId, "tomato", t1)).toBe(2);
    await appendSourceRecords(db, pipelineId, "notes", [{ externalId: "d", content: "tomato harvest" }]);
    expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
    await indexPipeline(db, pipelineId);
    // Still within the entry's lifetime (the clock given, however long the run took): the refresh ended it.
    expect(await dfOf(branchId, "tomato", t1 + 1)).toBe(3);
    const after = await search(db, { workspaceId, pipelineId, query: "tomato balcony", mode: "fts", limit: 10 });
    expect(after.hits).toHaveLength(4);
    // With the statistics read fresh (past the lifetime), the scores are the same.
    expect((await loadTermStats(db, branchId, ["clean"], ["tomato", "balconi"], performance.now() + 10 * requestCacheMs())).get("clean")!.df).toEqual(
      new Map([["tomato", 3], ["balconi", 2]]),
    );
  });
});
