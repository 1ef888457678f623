/**
 * Replay of an unchanged branch measures no latency regression (issue 48 item 6). A branch made
 * from main shares every record; before the fix its searches probed each candidate's pointer
 * through ("branchId", "updatedAt") — the planner's statistics, gathered before the branch existed,
 * took its id for a handful of rows — reading all of the branch's pointers per candidate: 3–5×
 * main's latency on an identical index. Creating a branch now analyzes the tables it filled, and
 * replay warms both sides up and alternates which side runs first.
 *
 * The latency assertion is made to not flake: with no real difference the paired interval covers
 * zero, or (a busy machine skewing one side's few queries) the mean difference is a small share of
 * main's mean; the regression it guards against was 200–400%. The plan assertion is exact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import os from "node:os";
import type { Db } from "../core/db";
import { ragBaselineSpec } from "../pipeline/templates/rag";
import { search } from "../search/search";
import { settleBackgroundWork } from "../services/background";
import { createBranch } from "../services/branches";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { insertQueryLogEntry } from "../store/query-log";
import { sqlTrace } from "../store/record-sql";
import { createTestDb } from "../store/test-db";
import { replayQueries } from "./replay";

const WORDS = ["garden", "lisbon", "billing", "marathon", "lease", "book", "heron", "zebra", "otter", "vault", "ferns", "pier", "boat", "budget", "week", "trip", "rewrite", "club"];
const RECORDS = 800;
const QUERIES = 24;

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "replay-latency@example.com", password: "replay-password-1" }));
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "latency", spec: ragBaselineSpec("jsonl") }));
  const items = Array.from({ length: RECORDS }, (_, i) => ({
    externalId: `n${i}`,
    content: `${Array.from({ length: 30 }, (_, j) => WORDS[(i * 7 + j * j * 3 + (i % 11)) % WORDS.length]).join(" ")} item ${i}.`,
  }));
  await appendSourceRecords(db, pipelineId, "chats", items);
  await runPipeline(db, { workspaceId, pipelineId });
  await settleBackgroundWork();
  await createBranch(db, pipelineId, { name: "unchanged" });
  for (let i = 0; i < QUERIES; i++) {
    const query = `${WORDS[i % WORDS.length]} ${WORDS[(i * 5 + 3) % WORDS.length]} ${WORDS[(i * 3 + 1) % WORDS.length]}`;
    await insertQueryLogEntry(db, {
      workspaceId, pipelineId, surface: "rest", kind: "search", caller: "apiKey:agent", scope: null, mode: "hybrid", params: { limit: 10 }, query, branch: "main", versionId: null,
      hits: [], cited: [], confidence: null, latencyMs: 10,
    });
  }
}, 300_000);
afterAll(async () => close?.());

describe("replay of an unchanged branch", () => {
  it("reads the branch's pointers the way it reads main's (no scan of the branch's pointers per candidate)", async () => {
    const plans: Record<string, string> = {};
    for (const branch of ["main", "unchanged"]) {
      const seen: Array<{ label: string; sql: string; params: unknown[] }> = [];
      sqlTrace.fn = (label, sql, params) => seen.push({ label, sql, params });
      await search(db, { workspaceId, pipelineId, branch, query: "heron zebra vault", limit: 10, mode: "fts" });
      sqlTrace.fn = null;
      const bm25 = seen.find((s) => s.label === "bm25")!;
      const rows = await db.$queryRawUnsafe<Array<Record<string, string>>>(`EXPLAIN (COSTS OFF) ${bm25.sql}`, ...bm25.params);
      plans[branch] = rows.map((r) => Object.values(r)[0]).join("\n");
    }
    const pointerIndexes = (plan: string) => [...plan.matchAll(/using "(BranchPointer_[^"]+)"/g)].map((m) => m[1]).sort();
    expect(pointerIndexes(plans.unchanged!)).not.toContain("BranchPointer_branchId_updatedAt_idx");
    expect(pointerIndexes(plans.unchanged!)).toEqual(pointerIndexes(plans.main!));
  });

  it("finds the same hits and a latency difference within noise", async () => {
    const report = await replayQueries(db, { workspaceId, pipelineId, branch: "unchanged" });
    const s = report.summary;
    console.log(`replay unchanged branch: main ${s.meanLatencyMs.main.toFixed(1)} ms, branch ${s.meanLatencyMs.branch.toFixed(1)} ms, diff ${s.latencyDiff.mean.toFixed(1)} [${s.latencyDiff.low?.toFixed(1)}, ${s.latencyDiff.high?.toFixed(1)}] (n=${s.latencyDiff.n}), load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
    expect(s).toMatchObject({ replayed: QUERIES, meanOverlap: 1, gained: 0, lost: 0 });
    for (const q of report.queries) for (const id of q.branch.ids) expect(report.texts[id]).toMatch(/item \d+\./);
    const withinNoise = s.latencyDiff.low! <= 0 && s.latencyDiff.high! >= 0;
    const small = Math.abs(s.latencyDiff.mean) <= 0.3 * s.meanLatencyMs.main;
    expect(withinNoise || small, `branch − main ${s.latencyDiff.mean.toFixed(1)} ms [${s.latencyDiff.low}, ${s.latencyDiff.high}] on main's ${s.meanLatencyMs.main.toFixed(1)} ms`).toBe(true);
  });
});
