/**
 * Live ingestion on a real (PGlite) database: messages are committed as they arrive, a session
 * becomes one conversation record when it closes (explicitly or after the idle gap), a run follows,
 * and the new memory is searchable. Bad input changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import { closeIdleSessions, getSession, ingestMessages, MAX_MESSAGES_PER_CALL } from "./ingest";
import { templateSpec } from "../pipeline/templates";
import { createPipeline } from "./pipelines";
import { createRun } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
const target = () => ({ workspaceId, pipelineId, source: "chats" });

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "ingest@example.com", password: "ingest-password-1" }));
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "live", spec: templateSpec("chat-memory") }));
}, 60_000);
afterAll(async () => close());

describe("live ingestion", () => {
  it("commits messages as they arrive, closes into one record, runs, and the memory is searchable", async () => {
    const t0 = new Date("2026-11-20T10:00:00Z");
    const first = await ingestMessages(db, target(), { sessionId: "s-1", scope: "acme:user-42", title: "Boat plans", messages: [{ role: "user", content: "I am buying a red canoe named Pelican next spring." }] }, t0);
    expect(first).toMatchObject({ status: "open", accepted: 1, messageCount: 1, recordId: null });
    expect(await db.record.count({ where: { pipelineId, step: "chats" } })).toBe(0);

    const second = await ingestMessages(db, target(), { sessionId: "s-1", messages: [{ role: "assistant", content: "Pelican is a lovely name for a canoe." }], close: true }, t0);
    expect(second).toMatchObject({ status: "closed", messageCount: 2, runRequested: true });
    const record = await db.record.findUniqueOrThrow({ where: { id: second.recordId! } });
    expect(record.scope).toBe("acme:user-42");
    expect(record.content).toBe("# Boat plans\n2026-11-20\n\nuser: I am buying a red canoe named Pelican next spring.\n\nassistant: Pelican is a lovely name for a canoe.");

    await settleBackgroundWork();
    const run = await db.run.findFirstOrThrow({ where: { pipelineId }, orderBy: { createdAt: "desc" } });
    expect(run.status).toBe("completed");
    const found = await search(db, { workspaceId, pipelineId, query: "red canoe Pelican", mode: "fts", scope: "acme" });
    expect(found.hits.length).toBeGreaterThan(0);
    expect(found.hits.some((h) => h.content.includes("Pelican"))).toBe(true);

    // A closed session takes no more messages, and says what to do.
    await expect(ingestMessages(db, target(), { sessionId: "s-1", messages: [{ role: "user", content: "late" }] })).rejects.toThrow(/closed.*new sessionId/);
  }, 180_000);

  it("closes sessions that went quiet for the idle gap, and keeps the ones still talking", async () => {
    const t0 = new Date("2026-11-21T09:00:00Z");
    await ingestMessages(db, target(), { sessionId: "quiet", messages: [{ role: "user", content: "The spare key is under the blue frog." }] }, t0);
    await ingestMessages(db, target(), { sessionId: "busy", messages: [{ role: "user", content: "Still here." }] }, new Date(t0.getTime() + 25 * 60_000));
    const result = await closeIdleSessions(db, { now: new Date(t0.getTime() + 31 * 60_000), idleMs: 30 * 60_000 });
    expect(result.closed).toBe(1);
    expect((await getSession(db, target(), "quiet")).status).toBe("closed");
    expect((await getSession(db, target(), "busy")).status).toBe("open");
    await settleBackgroundWork();
  }, 120_000);

  it("keeps every message and the record when a run is in progress, and runs once more when it ends", async () => {
    // A run already queued on main: the close cannot start another one now…
    const blocking = await createRun(db, { workspaceId, pipelineId });
    const res = await ingestMessages(db, target(), { sessionId: "s-blocked", messages: [{ role: "user", content: "Remember the lighthouse." }], close: true });
    expect(res).toMatchObject({ status: "closed", runRequested: true });
    expect(res.recordId).not.toBeNull();
    expect((await getSession(db, target(), "s-blocked")).messages.map((m) => m.content)).toEqual(["Remember the lighthouse."]);
    const later = { pipelineId, createdAt: { gt: blocking.createdAt } };
    expect(await db.run.count({ where: later })).toBe(0);
    // …and starts it once that run ends (a second close meanwhile adds no second follow-up).
    await ingestMessages(db, target(), { sessionId: "s-blocked-2", messages: [{ role: "user", content: "And the harbour." }], close: true });
    await db.run.update({ where: { id: blocking.id }, data: { status: "cancelled" } });
    await settleBackgroundWork();
    expect((await db.run.findMany({ where: later })).map((r) => r.triggeredBy)).toEqual(["ingest"]);
  }, 120_000);

  it("refuses bad input with what and where, writing nothing", async () => {
    const before = await db.ingestMessage.count();
    const tooMany = Array.from({ length: MAX_MESSAGES_PER_CALL + 1 }, (_, i) => ({ role: "user", content: `m${i}` }));
    await expect(ingestMessages(db, target(), { sessionId: "big", messages: tooMany })).rejects.toThrow(/At most 1000 messages per call/);
    await expect(ingestMessages(db, { ...target(), source: "nope" }, { sessionId: "x", messages: [{ role: "user", content: "hi" }] })).rejects.toThrow(/Source "nope" is not in this pipeline\. Sources: chats/);
    await expect(ingestMessages(db, target(), { sessionId: "bad-time", messages: [{ role: "user", content: "hi", time: "yesterday" }] })).rejects.toThrow();
    expect(await db.ingestMessage.count()).toBe(before);
    expect(await db.ingestSession.count({ where: { sessionId: { in: ["big", "x", "bad-time"] } } })).toBe(0);
  });
});
