/**
 * Replay (issue 37) on a small fixture computed by hand: a RAG pipeline whose main chunks each note
 * whole (1,200 characters) and a branch that chunks them into 100-character pieces. Two logged asks
 * cited main's chunk of their note. On the branch no served id is main's (overlap 0, RBO 0), each
 * query loses main's chunk, and citation recall drops from 1 to 0 for both: the paired interval of
 * branch − main is exactly [−1, −1]. A branch identical to main gives overlap 1, RBO 1, nothing
 * gained or lost, and a zero interval. A label turns a logged query into a question-set question.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { labelLoggedQuery, replayQueries } from "./replay";
import { replayFixture } from "./testing/replay-fixture";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
let chunkOf: Record<string, string> = {};

beforeAll(async () => {
  ({ db, close, workspaceId, pipelineId, chunkOf } = await replayFixture("replay@example.com"));
}, 180_000);
afterAll(async () => close?.());

describe("replayQueries", () => {
  it("a branch that changes retrieval: overlap, RBO, gained/lost and citation recall as computed by hand", async () => {
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "small-chunks" });
    expect(report.queries.map((q) => q.query).sort()).toEqual(["heron garden ferns", "zebra vault combination"]);
    for (const q of report.queries) {
      const word = q.query.split(" ")[0]!;
      expect(q.k).toBe(3);
      expect(q.main.ids).toEqual([chunkOf[word]]);
      expect(q.branch.ids.length).toBeGreaterThan(0);
      expect(q.branch.ids).not.toContain(chunkOf[word]);
      expect([q.overlap, q.rbo]).toEqual([0, 0]);
      expect(q.lost).toEqual([chunkOf[word]]);
      expect(q.gained).toEqual(q.branch.ids);
      expect([q.main.citationRecall, q.branch.citationRecall]).toEqual([1, 0]);
    }
    expect(report.summary).toMatchObject({ replayed: 2, meanOverlap: 0, meanRbo: 0, lost: 2, citationRecall: { main: 1, branch: 0, diff: { n: 2, mean: -1, low: -1, high: -1 } } });
  }, 60_000);

  it("identical branches: overlap 1, RBO 1, nothing gained or lost, a zero interval", async () => {
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "same" });
    expect(report.summary).toMatchObject({ replayed: 2, meanOverlap: 1, gained: 0, lost: 0, citationRecall: { main: 1, branch: 1, diff: { n: 2, mean: 0, low: 0, high: 0 } } });
    expect(report.summary.meanRbo).toBeCloseTo(1, 12);
    for (const q of report.queries) expect(q.branch.ids).toEqual(q.main.ids);
  }, 60_000);

  it("a label makes the logged query a question of a question set", async () => {
    const entry = await db.queryLogEntry.findFirstOrThrow({ where: { pipelineId, query: "heron garden ferns" } });
    const labelled = await labelLoggedQuery(db, workspaceId, { pipelineId, entryId: entry.id, recordId: chunkOf.heron!, set: "from-traffic" });
    expect(labelled).toMatchObject({ set: "from-traffic", questions: 1, recordId: chunkOf.heron });
    const set = await db.evalQuestionSet.findFirstOrThrow({ where: { workspaceId, name: "from-traffic" } });
    expect(set.questions).toEqual([expect.objectContaining({ question: "heron garden ferns", recordIds: [chunkOf.heron], pipelineId })]);
    expect((await db.queryLogEntry.findUniqueOrThrow({ where: { id: entry.id } })).labelRecordId).toBe(chunkOf.heron);
    await expect(labelLoggedQuery(db, "another-workspace", { pipelineId, entryId: entry.id, recordId: chunkOf.heron!, set: "x" })).rejects.toThrow(/not found/);
  }, 60_000);
});
