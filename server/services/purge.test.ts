/**
 * Purge on a real (PGlite) database after a real run, with a second branch sharing the records:
 * the dry run lists exactly what the purge removes (records derived at every step, pointers on
 * every branch, embeddings, postings, ingest sessions), the purge leaves nothing of it behind,
 * writes an audit entry, and the memory that remains still searches and runs.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import { createBranch } from "./branches";
import { importFile } from "./imports";
import { ingestMessages } from "./ingest";
import { templateSpec } from "../pipeline/templates";
import { createPipeline } from "./pipelines";
import { purgeRecord, purgeScope, type PurgeResult } from "./purge";
import { runPipeline } from "./runs";
import { signUp } from "./users";

const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");
let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
const target = (dryRun: boolean) => ({ workspaceId, actor: "user:test", dryRun });

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "purge@example.com", password: "purge-password-1" }));
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") }));
  await importFile(db, { workspaceId, pipelineId, source: "chats", path: fixture });
  expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
  await settleBackgroundWork();
  await createBranch(db, pipelineId, { name: "experiment" });
}, 180_000);
afterAll(async () => close());

const withoutRun = (r: PurgeResult) => ({ ...r, dryRun: undefined, auditId: undefined });

async function remaining(ids: string[]) {
  return {
    records: await db.record.count({ where: { id: { in: ids } } }),
    pointers: await db.branchPointer.count({ where: { recordId: { in: ids } } }),
    embeddings: await db.embedding.count({ where: { recordId: { in: ids } } }),
    postings: await db.searchPosting.count({ where: { recordId: { in: ids } } }),
    edges: await db.recordEdge.count({ where: { OR: [{ childId: { in: ids } }, { parentId: { in: ids } }] } }),
  };
}

describe("purge", () => {
  it("a dry run lists the whole cascade; the purge removes exactly that, on every branch, with an audit entry", async () => {
    const source = await db.record.findFirstOrThrow({ where: { pipelineId, step: "chats", content: { contains: "lighthouse" } } });
    const before = await db.record.count({ where: { pipelineId } });

    const dry = await purgeRecord(db, target(true), source.id);
    expect(dry.dryRun).toBe(true);
    expect(dry.auditId).toBeNull();
    expect(dry.records[0]).toMatchObject({ id: source.id, step: "chats", depth: 0 });
    // Derived at every altitude: the transcript, its windows and summary, and the aggregates above.
    expect(Object.keys(dry.byStep)).toEqual(expect.arrayContaining(["chats", "transcripts", "summaries", "world-model"]));
    expect(dry.pointers).toMatchObject({ main: dry.records.length, experiment: dry.records.length });
    expect(dry.embeddings).toBeGreaterThan(0);
    expect(dry.postings).toBeGreaterThan(0);
    // Nothing changed.
    expect(await db.record.count({ where: { pipelineId } })).toBe(before);
    const ids = dry.records.map((r) => r.id);
    expect((await remaining(ids)).records).toBe(ids.length);

    const real = await purgeRecord(db, target(false), source.id);
    expect(withoutRun(real)).toEqual(withoutRun(dry));
    expect(real.auditId).toBeTruthy();
    expect(await remaining(ids)).toEqual({ records: 0, pointers: 0, embeddings: 0, postings: 0, edges: 0 });
    expect(await db.record.count({ where: { pipelineId } })).toBe(before - ids.length);

    const audit = await db.auditEvent.findUniqueOrThrow({ where: { id: real.auditId! } });
    expect(audit).toMatchObject({ workspaceId, actor: "user:test", action: "purge", target: `record:${source.id}` });
    expect(audit.summary).toMatchObject({ records: ids.length, roots: [source.id] });
    // The audit keeps counts, never the purged text.
    expect(JSON.stringify(audit.summary)).not.toMatch(/lighthouse/i);

    // The purged memory is gone from search on both branches; the rest still answers.
    for (const branch of ["main", "experiment"]) {
      const gone = await search(db, { workspaceId, pipelineId, branch, query: "lighthouse key ceramic frog", mode: "fts" });
      expect(gone.hits).toEqual([]);
    }
    const kept = await search(db, { workspaceId, pipelineId, query: "tomato seeds indoors", mode: "fts" });
    expect(kept.hits.length).toBeGreaterThan(0);

    // The next run rebuilds the aggregates from what is left, and never brings the purged record back.
    expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
    await settleBackgroundWork();
    expect(await db.record.count({ where: { pipelineId, content: { contains: "ceramic frog" } } })).toBe(0);
    expect(await db.branchPointer.count({ where: { step: "world-model", branchId: (await db.branch.findFirstOrThrow({ where: { pipelineId, name: "main" } })).id } })).toBeGreaterThan(0);

    await expect(purgeRecord(db, target(false), source.id)).rejects.toThrow(/not found/);
  }, 120_000);

  it("purges a scope: its records, what derives from them and its live sessions, open or closed", async () => {
    const t = { workspaceId, pipelineId, source: "chats" };
    await ingestMessages(db, t, { sessionId: "gdpr-1", scope: "acme:user-9", messages: [{ role: "user", content: "My passport number is in the red drawer." }], close: true });
    await ingestMessages(db, t, { sessionId: "gdpr-2", scope: "acme:user-9:mobile", messages: [{ role: "user", content: "still typing" }] });
    await ingestMessages(db, t, { sessionId: "keep-1", scope: "acme:user-90", messages: [{ role: "user", content: "not the same user" }] });
    await settleBackgroundWork();
    for (;;) {
      const active = await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } } });
      if (!active) break;
      await new Promise((r) => setTimeout(r, 200));
    }

    const dry = await purgeScope(db, target(true), pipelineId, "acme:user-9");
    expect(dry.ingestSessions).toBe(2);
    expect(dry.ingestMessages).toBe(2);
    expect(dry.records.length).toBeGreaterThan(0);
    expect(dry.records.every((r) => r.scope === "acme:user-9" || r.scope.startsWith("acme:user-9:") || r.depth > 0)).toBe(true);

    const real = await purgeScope(db, target(false), pipelineId, "acme:user-9");
    expect(withoutRun(real)).toEqual(withoutRun(dry));
    expect(await db.ingestSession.findMany({ where: { pipelineId }, select: { sessionId: true } })).toEqual([{ sessionId: "keep-1" }]);
    expect(await db.ingestMessage.count({ where: { content: { contains: "passport" } } })).toBe(0);
    expect(await db.record.count({ where: { pipelineId, content: { contains: "passport" } } })).toBe(0);
  }, 120_000);

  it("refuses while a run is in progress and deletes nothing; says what is wrong", async () => {
    const record = await db.record.findFirstOrThrow({ where: { pipelineId, step: "chats" } });
    const main = await db.branch.findFirstOrThrow({ where: { pipelineId, name: "main" } });
    const run = await db.run.create({ data: { workspaceId, pipelineId, branchId: main.id, versionId: main.versionId, status: "running" } });
    const before = await db.record.count({ where: { pipelineId } });
    await expect(purgeRecord(db, target(false), record.id)).rejects.toThrow(/in progress/);
    expect(await db.record.count({ where: { pipelineId } })).toBe(before);
    await db.run.update({ where: { id: run.id }, data: { status: "cancelled" } });

    await expect(purgeScope(db, target(true), pipelineId, " : ")).rejects.toThrow(/scope/);
    await expect(purgeRecord(db, { ...target(true), workspaceId: "another" }, record.id)).rejects.toThrow(/not found/);
  });
});
