/**
 * Shadow traffic (issue 37) through the real REST handler: two branches shadow main — one that
 * chunks differently (small-chunks) and one identical to main (same). With shadow on, main's
 * responses are byte-identical to shadow off (same queries, same data); each shadow's report fills
 * with exactly the queries sent on main (none served on another branch), main's side is what was
 * served, the identical branch scores overlap 1 / RBO 1 / a zero interval and the other less.
 * Stopping stops the copies. A burst larger than the (small) queue drops copies and counts them,
 * every response still answered. A copy waits while a live request is in flight. Bad input is refused naming the field; roles below the declared
 * permissions are refused; a scope purge deletes the shadow results of that scope.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

vi.hoisted(() => {
  // A small queue, so the burst below overflows it (read when services/shadow.ts loads).
  process.env.SYNTHEX_SHADOW_QUEUE = "2";
});

import type { Db } from "../core/db";
import { ragBaselineSpec } from "../pipeline/templates/rag";
import { createApiKey } from "../services/api-keys";
import { settleBackgroundWork } from "../services/background";
import { createBranch } from "../services/branches";
import { addNote } from "../services/notes";
import { createPipeline, saveVersion } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { beginLiveRequest } from "../services/live-requests";
import { settleShadow, shadowStats } from "../services/shadow";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { handleRest } from "./rest";
import { appRestEndpoints } from "./rest-app";
import { appRouter } from "./root";
import { createContext } from "./trpc";

type Json = Record<string, unknown>;
let db: Db;
let close: () => Promise<void>;
let workspaceId = "";
let pipelineId = "";
const keys = { admin: "", editor: "", viewer: "" };

const NOTES = [
  { scope: "acme:alice", text: "The zebra vault opens with the combination 4471. ".repeat(5) },
  { scope: "acme:bob", text: "The heron garden ferns are watered every Tuesday morning. ".repeat(5) },
  { scope: "acme:bob", text: "The otter boat is moored at pier nine near the lighthouse. ".repeat(5) },
];

async function rest(method: "GET" | "POST", url: string, key: string, body?: unknown): Promise<{ status: number; text: string; json: Json }> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const req = new Request(`http://localhost/api/v1${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const res = await handleRest({ router: appRouter, endpoints: appRestEndpoints(), req, path: url.split("?")[0]!, createContext: () => createContext({ db, authorization: `Bearer ${key}` }) });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Json };
}

/** What agents ask main: searches (GET and POST) and an ask, in two scopes. */
const QUERIES: Array<["GET" | "POST", string, unknown?]> = [
  ["GET", "/search?query=zebra%20vault%20combination&mode=fts&limit=5&scope=acme:alice"],
  ["POST", "/search", { query: "heron garden ferns", mode: "hybrid", limit: 3 }],
  ["POST", "/ask", { question: "Where is the otter boat moored?", k: 3, mode: "fts" }],
  ["GET", "/search?query=the&mode=fts&limit=10"],
];
const send = (q: (typeof QUERIES)[number], extra = "") => rest(q[0], `/pipelines/${pipelineId}${q[1]}${extra}`, keys.admin, q[2]);
async function sendAll(settleEach: boolean): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const res = await send(q);
    expect(res.status, res.text).toBe(200);
    out.push(res.text);
    if (settleEach) await settleShadow();
  }
  return out;
}
const servedIds = (text: string) => {
  const json = JSON.parse(text) as { hits?: Array<{ id: string }>; evidence?: Array<{ id: string }> };
  return (json.hits ?? json.evidence ?? []).map((h) => h.id);
};

interface Report {
  shadow: { id: string; state: string; answered: number; failed: number; dropped: number } | null;
  queries: Array<{ kind: string; query: string; main: { ids: string[] }; branch: { ids: string[] }; overlap: number }>;
  summary: { replayed: number; meanOverlap: number; meanRbo: number; gained: number; lost: number; latencyDiff: { n: number }; citationRecall: { diff: { n: number; mean: number; low: number | null; high: number | null } } };
}
const report = async (branch: string) => (await rest("GET", `/pipelines/${pipelineId}/shadow/report?branch=${branch}&limit=100`, keys.admin)).json as unknown as Report;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "shadow@example.com", password: "shadow-password-1" });
  workspaceId = workspace.id;
  const owner = { userId: user.id, role: "owner" as const };
  keys.admin = (await createApiKey(db, workspaceId, owner, { name: "admin agent", role: "admin" })).secret;
  keys.editor = (await createApiKey(db, workspaceId, owner, { name: "editor agent", role: "editor" })).secret;
  keys.viewer = (await createApiKey(db, workspaceId, owner, { name: "viewer agent", role: "viewer" })).secret;
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "shadowed", spec: ragBaselineSpec("folder") }));
  for (const n of NOTES) await addNote(db, { workspaceId, pipelineId, source: "chats" }, n);
  await settleBackgroundWork();
  while (await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } } })) await new Promise((r) => setTimeout(r, 200));
  await runPipeline(db, { workspaceId, pipelineId });
  await createBranch(db, pipelineId, { name: "same" });
  await createBranch(db, pipelineId, { name: "small-chunks" });
  await saveVersion(db, pipelineId, { spec: ragBaselineSpec("folder", { chunkSize: 100 }), branch: "small-chunks", message: "100-character chunks" });
  await runPipeline(db, { workspaceId, pipelineId, branch: "small-chunks" });
  await settleBackgroundWork();
}, 180_000);
afterAll(async () => {
  await settleShadow();
  await close?.();
});

describe("shadow traffic", () => {
  it("leaves main's responses byte-identical and fills each shadow's report with the queries sent", async () => {
    const off = await sendAll(false);
    // Control: the same queries twice give the same bytes, so a difference below is the shadow's.
    expect(await sendAll(false)).toEqual(off);

    for (const branch of ["small-chunks", "same"]) {
      const on = await rest("POST", `/pipelines/${pipelineId}/shadow`, keys.admin, { branch, minutes: 30 });
      expect(on.status, on.text).toBe(200);
      expect(on.json).toMatchObject({ branch, state: "running", answered: 0, dropped: 0 });
    }
    const withShadow = await sendAll(true);
    expect(withShadow).toEqual(off);
    // Served on a branch, not on main: not copied.
    expect((await send(QUERIES[0]!, "&branch=same")).status).toBe(200);
    await settleShadow();

    const changed = await report("small-chunks");
    const same = await report("same");
    for (const r of [changed, same]) {
      expect(r.shadow).toMatchObject({ state: "running", answered: QUERIES.length, failed: 0, dropped: 0 });
      expect(r.summary.replayed).toBe(QUERIES.length);
      expect(r.summary.latencyDiff.n).toBe(QUERIES.length);
      // Newest first; main's side is exactly what main served.
      expect(r.queries.map((q) => q.main.ids).reverse()).toEqual(off.map(servedIds));
      expect(r.queries.map((q) => q.kind).reverse()).toEqual(["search", "search", "ask", "search"]);
    }
    expect(same.summary).toMatchObject({ meanOverlap: 1, meanRbo: 1, gained: 0, lost: 0 });
    expect(same.queries.map((q) => q.branch.ids)).toEqual(same.queries.map((q) => q.main.ids));
    expect(same.summary.citationRecall.diff).toMatchObject({ mean: 0 });
    // 100-character chunks are other records than main's whole-note chunks.
    expect(changed.summary.meanOverlap).toBeLessThan(1);
    expect(changed.summary.lost).toBeGreaterThan(0);

    // Stopped: no more copies for that branch; the other goes on.
    const stopped = await rest("POST", `/pipelines/${pipelineId}/shadow/stop`, keys.admin, { branch: "same" });
    expect(stopped.json).toMatchObject({ branch: "same", state: "stopped", stopReason: "stopped", answered: QUERIES.length });
    expect(await sendAll(true)).toEqual(off);
    expect((await report("same")).shadow).toMatchObject({ state: "stopped", answered: QUERIES.length });
    expect((await report("small-chunks")).shadow).toMatchObject({ answered: 2 * QUERIES.length });

    const listed = (await rest("GET", `/pipelines/${pipelineId}/shadow`, keys.admin)).json as unknown as Array<{ branch: string; state: string }>;
    expect(listed.map((s) => [s.branch, s.state])).toEqual([
      ["same", "stopped"],
      ["small-chunks", "running"],
    ]);
    const audits = await db.auditEvent.findMany({ where: { workspaceId, action: { startsWith: "shadow." } }, orderBy: { createdAt: "asc" } });
    expect(audits.map((a) => [a.action, a.target])).toEqual([
      ["shadow.start", `pipeline:${pipelineId}/branch:small-chunks`],
      ["shadow.start", `pipeline:${pipelineId}/branch:same`],
      ["shadow.stop", `pipeline:${pipelineId}/branch:same`],
    ]);
  }, 180_000);

  it("drops copies past the queue and counts them; every live response is still answered", async () => {
    const before = (await report("small-chunks")).shadow!;
    const burst = await Promise.all(Array.from({ length: 40 }, () => send(QUERIES[0]!)));
    expect(burst.map((r) => r.status)).toEqual(burst.map(() => 200));
    expect(new Set(burst.map((r) => r.text)).size).toBe(1);
    await settleShadow();
    const after = (await report("small-chunks")).shadow!;
    const answered = after.answered - before.answered;
    const dropped = after.dropped - before.dropped;
    expect(answered + dropped).toBe(40);
    expect(dropped).toBeGreaterThan(0);
  }, 120_000);

  it("answers a copy only when no live request is in flight", async () => {
    const before = shadowStats();
    const stillServing = beginLiveRequest();
    expect((await send(QUERIES[1]!)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    // Taken and waiting while another live request runs.
    expect(shadowStats()).toMatchObject({ taken: before.taken + 1, answered: before.answered, queued: 1 });
    stillServing();
    await settleShadow();
    expect(shadowStats()).toMatchObject({ answered: before.answered + 1, queued: 0 });
  });

  it("refuses bad input naming the field, and roles below the declared permission", async () => {
    const start = (body: Json, key = keys.admin) => rest("POST", `/pipelines/${pipelineId}/shadow`, key, body);
    expect(await start({ branch: "same", minutes: 0 })).toMatchObject({ status: 400, text: expect.stringContaining("minutes") });
    expect(await start({ branch: "main" })).toMatchObject({ status: 400, json: { error: { message: expect.stringMatching(/^branch: main serves the live queries/) } } });
    expect(await start({ branch: "same", endsAt: "2020-01-01T00:00:00Z" })).toMatchObject({ status: 400, json: { error: { message: expect.stringMatching(/^endsAt: already past/) } } });
    expect(await start({ branch: "same", endsAt: "2999-01-01T00:00:00Z", minutes: 5 })).toMatchObject({ status: 400, json: { error: { message: "Give either endsAt or minutes, not both." } } });
    expect((await start({ branch: "no-such-branch" })).status).toBe(404);
    expect(await rest("POST", `/pipelines/${pipelineId}/shadow/stop`, keys.admin, { branch: "same" })).toMatchObject({ status: 404, json: { error: { message: 'Branch "same" is not shadowing main.' } } });
    // Setting needs workspace:update (admins, owners); the report needs log:read (editors and up, not viewers).
    expect(await start({ branch: "same" }, keys.editor)).toMatchObject({ status: 403 });
    expect((await rest("GET", `/pipelines/${pipelineId}/shadow/report?branch=small-chunks`, keys.editor)).status).toBe(200);
    expect(await rest("GET", `/pipelines/${pipelineId}/shadow/report?branch=small-chunks`, keys.viewer)).toMatchObject({ status: 403, json: { error: { message: "Your role (viewer) does not allow log:read." } } });
    expect(await db.shadowTraffic.count({ where: { pipelineId } })).toBe(2);
  });

  it("a scope purge deletes the shadow results asked in that scope or naming its records", async () => {
    const aliceIds = (await db.record.findMany({ where: { pipelineId, scope: "acme:alice" }, select: { id: true } })).map((r) => r.id);
    const named = async () => JSON.stringify(await db.shadowResult.findMany({ where: { pipelineId } }));
    const before = await named();
    expect(aliceIds.length).toBeGreaterThan(0);
    expect(aliceIds.some((id) => before.includes(id))).toBe(true);
    const purged = await rest("POST", `/pipelines/${pipelineId}/purge`, keys.admin, { scope: "acme:alice" });
    expect(purged.status, purged.text).toBe(200);
    const left = await named();
    for (const id of aliceIds) expect(left).not.toContain(id);
    expect(left).not.toContain("zebra");
    expect(await db.shadowResult.count({ where: { pipelineId } })).toBeGreaterThan(0);
    const audit = await db.auditEvent.findFirstOrThrow({ where: { workspaceId, action: "purge" }, orderBy: { createdAt: "desc" } });
    expect((audit.summary as { shadowResults: number }).shadowResults).toBeGreaterThan(0);
  }, 120_000);
});
