/**
 * The query log's batched writer (issue 37) on a real database: served calls are not written one
 * INSERT per call but buffered and written together within the flush bound (here 2 s), with the
 * time each was served; settling (the CLI, tests) and a normal stop write the buffer at once, losing
 * nothing; past the buffer's bound (here 5 entries) an entry is dropped and counted.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

vi.hoisted(() => {
  // Read when the first entry is buffered: a flush bound long enough to look between, and a small buffer.
  process.env.SYNTHEX_QUERY_LOG_FLUSH_MS = "2000";
  process.env.SYNTHEX_QUERY_LOG_BUFFER = "5";
});

import type { Db } from "../core/db";
import { createTestDb } from "../store/test-db";
import { flushQueryLogOnStop, queryLogStats, recordServedQuery, setQueryLogConfig, settleQueryLog, type ServedQuery } from "./query-log";

let db: Db;
let close: () => Promise<void>;
const workspaceId = "ws-writer";
const pipelineId = "pl-writer";

const served = (query: string): ServedQuery => ({
  workspaceId,
  pipelineId,
  surface: "rest",
  kind: "search",
  caller: "apiKey:k1",
  scope: null,
  mode: "hybrid",
  params: { limit: 3 },
  query,
  branch: "main",
  versionId: null,
  hits: [{ id: `rec-${query}`, rank: 1, score: 0.5, step: "chunks" }],
  cited: [],
  confidence: null,
  latencyMs: 12,
});
const logged = async () => (await db.queryLogEntry.findMany({ where: { pipelineId }, orderBy: { query: "asc" } })).map((e) => e.query);
/** Until `n` entries wait in the buffer (each is buffered a turn after its call, once the settings are read). */
async function untilBuffered(n: number) {
  const started = performance.now();
  while (queryLogStats().buffered < n && performance.now() - started < 2000) await new Promise((r) => setTimeout(r, 2));
  expect(queryLogStats().buffered).toBe(n);
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  await setQueryLogConfig(db, workspaceId, pipelineId, { enabled: true });
});
afterAll(async () => {
  await settleQueryLog();
  await close?.();
});

describe("query log writer", () => {
  it("writes served calls together within the flush bound, each with the time it was served", async () => {
    const before = new Date();
    for (const q of ["a1", "a2", "a3"]) recordServedQuery(db, () => served(q));
    // Buffered, not written per call.
    await untilBuffered(3);
    expect(await logged()).toEqual([]);
    const started = performance.now();
    while ((await logged()).length < 3 && performance.now() - started < 5000) await new Promise((r) => setTimeout(r, 20));
    const waited = performance.now() - started;
    expect(await logged()).toEqual(["a1", "a2", "a3"]);
    // Within the bound (2 s; slack for a loaded machine), with no settle call.
    expect(waited).toBeLessThan(3000);
    const entries = await db.queryLogEntry.findMany({ where: { pipelineId } });
    for (const e of entries) {
      expect(e.createdAt.getTime()).toBeGreaterThanOrEqual(before.getTime() - 5);
      expect(e.createdAt.getTime()).toBeLessThan(before.getTime() + 1000);
      expect(e.recordIds).toEqual([`rec-${e.query}`]);
    }
    // The rows can be visible to this connection a moment before the writer's own await resumes and counts them.
    for (const t0 = performance.now(); queryLogStats().written < 3 && performance.now() - t0 < 2000; ) await new Promise((r) => setTimeout(r, 10));
    expect(queryLogStats()).toMatchObject({ written: 3, dropped: 0, failed: 0, buffered: 0 });
  });

  it("past the buffer's bound drops entries and counts them; settling writes the rest at once", async () => {
    for (const q of ["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"]) recordServedQuery(db, () => served(q));
    const started = performance.now();
    await settleQueryLog();
    // Written by the settle, not by the 2 s timer.
    expect(performance.now() - started).toBeLessThan(1500);
    expect((await logged()).filter((q) => q.startsWith("b"))).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    expect(queryLogStats()).toMatchObject({ written: 8, dropped: 3, failed: 0, buffered: 0 });
  });

  it("a log that is off buffers nothing", async () => {
    await setQueryLogConfig(db, workspaceId, pipelineId, { enabled: false });
    recordServedQuery(db, () => served("off1"));
    await settleQueryLog();
    expect(await logged()).not.toContain("off1");
    await setQueryLogConfig(db, workspaceId, pipelineId, { enabled: true });
  });

  it("a normal stop writes what is buffered and then each entry as it comes", async () => {
    for (const q of ["c1", "c2"]) recordServedQuery(db, () => served(q));
    await untilBuffered(2);
    await flushQueryLogOnStop();
    expect((await logged()).filter((q) => q.startsWith("c"))).toEqual(["c1", "c2"]);
    // A request that finishes while the server closes: written without waiting for the timer.
    recordServedQuery(db, () => served("c3"));
    const started = performance.now();
    while (!(await logged()).includes("c3") && performance.now() - started < 5000) await new Promise((r) => setTimeout(r, 10));
    expect(performance.now() - started).toBeLessThan(1500);
    expect(queryLogStats()).toMatchObject({ written: 11, dropped: 3, failed: 0, buffered: 0 });
  });
});
