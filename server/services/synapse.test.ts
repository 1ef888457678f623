/**
 * The Synapse template on a real (PGlite) database, fed the way Synapse is: an agent pushes turns,
 * sessions close after the idle gap, each closed session becomes a source record, an incremental
 * run follows — and the user's scope gets a rolling summary over its sessions, narrative entities
 * per session (structured, in metadata) and a brief with the recent turns and both projections.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { templateSpec } from "../pipeline/templates";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import { brief } from "./brief";
import { closeIdleSessions, getSession, ingestMessages } from "./ingest";
import { createPipeline } from "./pipelines";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
const target = () => ({ workspaceId, pipelineId, source: "sessions" });
const SCOPE = "acme:user-42";
const MINUTE = 60_000;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "synapse@example.com", password: "synapse-password-1" }));
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "synapse", spec: templateSpec("synapse", "api") }));
}, 60_000);
afterAll(async () => close?.());

async function latest(step: string) {
  return db.record.findMany({ where: { pipelineId, step, scope: SCOPE }, orderBy: { createdAt: "desc" } });
}

describe("synapse template", () => {
  it("closes a quiet session after the idle gap into a record; the run extracts its narrative and starts the rolling summary", async () => {
    const t0 = new Date("2026-11-20T09:00:00Z");
    await ingestMessages(
      db,
      target(),
      {
        sessionId: "monday",
        scope: SCOPE,
        title: "Thesis week",
        messages: [
          { role: "user", content: "I'm so stressed and exhausted today. I've been struggling to finish the thesis chapter before the Friday deadline.", time: t0.toISOString() },
          { role: "assistant", content: "That sounds like a lot. Where are you working from?", time: t0.toISOString() },
          { role: "user", content: "I'm working from the library on campus, it is quiet and calm here.", time: t0.toISOString() },
        ],
      },
      t0,
    );
    // Another session still talking at the idle check keeps its messages open.
    await ingestMessages(db, target(), { sessionId: "tuesday", scope: SCOPE, messages: [{ role: "user", content: "Quick note before bed." }] }, new Date(t0.getTime() + 20 * MINUTE));
    expect(await db.record.count({ where: { pipelineId, step: "sessions" } })).toBe(0);

    const swept = await closeIdleSessions(db, { pipelineId, now: new Date(t0.getTime() + 31 * MINUTE), idleMs: 30 * MINUTE });
    expect(swept.closed).toBe(1);
    expect((await getSession(db, target(), "monday")).status).toBe("closed");
    expect((await getSession(db, target(), "tuesday")).status).toBe("open");
    await settleBackgroundWork();
    const run = await db.run.findFirstOrThrow({ where: { pipelineId }, orderBy: { createdAt: "desc" } });
    expect(run.status).toBe("completed");

    const [narrative] = await latest("narrative");
    const custom = (narrative!.metadata as { custom: Record<string, Array<Record<string, unknown>>> }).custom;
    expect(custom.mental_state![0]).toMatchObject({ who: "user", energy_level: "low" });
    expect(custom.mental_state![0]!.mood).toEqual(expect.arrayContaining(["stressed", "exhausted"]));
    expect(custom.tensions![0]).toMatchObject({ who: "user", status: "open" });
    expect(custom.tensions![0]!.description).toMatch(/thesis chapter/);
    expect(custom.environment![0]).toMatchObject({ who: "user", location_type: "school" });
    expect(custom.environment![0]!.vibe).toMatch(/quiet/);
    expect(narrative!.content).toMatch(/^Mental state — user: .*stressed/m);

    const summaries = await latest("rolling-summary");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.content).toMatch(/thesis/);
  }, 180_000);

  it("folds the next session into the same scope's rolling summary, and the brief serves turns, summary and narrative", async () => {
    const t1 = new Date("2026-11-21T18:00:00Z");
    await ingestMessages(
      db,
      target(),
      {
        sessionId: "tuesday",
        messages: [{ role: "user", content: "I finally fixed the citation problem and submitted the chapter. I feel relieved and proud.", time: t1.toISOString() }],
        close: true,
      },
      t1,
    );
    await settleBackgroundWork();
    const summaries = await latest("rolling-summary");
    const current = summaries.find((s) => (s.metadata as { step?: { sequence?: number } }).step?.sequence === 2);
    expect(current, "a rolling summary over both sessions").toBeTruthy();
    expect(await db.recordEdge.count({ where: { childId: current!.id } })).toBe(2);

    const b = await brief(db, { workspaceId, pipelineId, branch: "main", scope: SCOPE, turns: 3 });
    expect(b.recentTurns.map((t) => t.sessionId)).toEqual(["monday", "tuesday", "tuesday"]);
    expect(b.recentTurns.at(-1)!.content).toMatch(/citation problem/);
    expect(b.openSessions).toBe(0);
    expect(b.projection!.output).toBe("brief");
    expect(b.projection!.text).toMatch(/^Rolling summary \(as of 2026-11-20\):/);
    expect(b.projections.map((p) => p.output)).toEqual(["brief", "narrative-state"]);
    const narrative = b.projections[1]!;
    expect(narrative.text).toMatch(/relieved, proud/);
    expect(narrative.text).toMatch(/Tension \(resolved\) — user: I finally fixed the citation problem/);
    expect(b.now).toBeInstanceOf(Date);

    // An agent searches the scope's memory: the windows and the narrative are indexed.
    const found = await search(db, { workspaceId, pipelineId, query: "thesis deadline stressed", mode: "fts", scope: SCOPE });
    expect(found.hits.map((h) => h.step)).toEqual(expect.arrayContaining(["narrative"]));
  }, 180_000);
});
