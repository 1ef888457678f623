/**
 * Issue 30, item 7: a scope-limited key started a full recompute of every scope and cancelled other
 * people's runs. Runs have no scope filter (each computes every scope's pending work), so such a
 * key may start only incremental runs and cancel only runs it started; unrestricted actors keep both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { settleBackgroundWork } from "../services/background";
import { createPipeline, templateSpec } from "../services/pipelines";
import { createRun } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { createCaller } from "./root";
import { createContext } from "./trpc";

let db: Db;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
});
afterAll(async () => {
  await settleBackgroundWork();
  await close();
});

describe("runs and a scope-limited key", () => {
  it("refuses a full run and cancelling runs it did not start; allows its own incremental run and cancelling that", async () => {
    const { user, workspace } = await signUp(db, { email: "runs-owner@example.com", password: "runs-password-1" });
    const workspaceId = workspace.id;
    const owner = createCaller(await createContext({ db, session: { userId: user.id, email: user.email } }));
    const { pipeline } = await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") });
    const pipelineId = pipeline.id;
    const scoped = await owner.apiKey.create({ workspaceId, name: "eng-agent", role: "editor", scopePrefix: "acme:eng" });
    const key = createCaller(await createContext({ db, authorization: `Bearer ${scoped.secret}` }));

    await expect(key.run.start({ pipelineId, options: { full: true } })).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/limited to scope "acme:eng": a full run recomputes every scope/) });
    expect(await db.run.count({ where: { pipelineId } })).toBe(0);

    // Someone else's run (queued, as a busy branch keeps it): the key may not stop it.
    const others = await createRun(db, { workspaceId, pipelineId, triggeredBy: user.id });
    await expect(key.run.cancel({ runId: others.id })).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/may cancel only runs it started/) });
    expect((await db.run.findUniqueOrThrow({ where: { id: others.id } })).cancelRequested).toBe(false);
    await owner.run.cancel({ workspaceId, runId: others.id });
    await db.run.update({ where: { id: others.id }, data: { status: "cancelled" } });

    // Its own incremental run: started, recorded as the key's, and the key may cancel a run of its own.
    const own = await key.run.start({ pipelineId });
    expect(own.triggeredBy).toBe(`apiKey:${scoped.id}`);
    await settleBackgroundWork();
    const queued = await createRun(db, { workspaceId, pipelineId, triggeredBy: `apiKey:${scoped.id}` });
    await expect(key.run.cancel({ runId: queued.id })).resolves.toEqual({ cancelling: queued.id });
    await db.run.update({ where: { id: queued.id }, data: { status: "cancelled" } });

    // An unrestricted key keeps full runs.
    const full = await owner.apiKey.create({ workspaceId, name: "ops", role: "editor" });
    const ops = createCaller(await createContext({ db, authorization: `Bearer ${full.secret}` }));
    await expect(ops.run.start({ pipelineId, options: { full: true } })).resolves.toMatchObject({ triggeredBy: `apiKey:${full.id}` });
    await settleBackgroundWork();
  }, 120_000);
});
