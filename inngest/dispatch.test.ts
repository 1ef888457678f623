/**
 * How runs get to a runner: SYNTHEX_EXECUTOR (executor.ts, startRun) and the debounced
 * incremental run after `synthex/source.appended`.
 */
import { InngestTestEngine } from "@inngest/test";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Pipeline } from "../server/pipeline/sdk";
import type { Db } from "../server/services/db-types";
import { executorKind, inngestExecutor, providerKeyOf } from "../server/services/executor";
import { appendSourceRecords, createPipeline } from "../server/services/pipelines";
import { importFile } from "../server/services/imports";
import { startRun } from "../server/services/runs";
import { signUp } from "../server/services/users";
import { createTestDb, type TestDb } from "../server/store/test-db";
import { inngest } from "./client";
import { flowControl } from "./flow-control";
import { createIncrementalRunFunction, DEBOUNCE_KEY } from "./functions";

let t: TestDb;
let db: Db;
let workspaceId: string;
let n = 0;

beforeAll(async () => {
  t = await createTestDb();
  db = t.db;
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "dispatch@example.com", password: "dispatch-password" }));
});
afterAll(async () => t.close());
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const spec = () =>
  new Pipeline("p", {})
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", prompt: "Summarize: {{ record.content }}" })
    .toSpec();

async function newPipeline() {
  n += 1;
  const { pipeline } = await createPipeline(db, workspaceId, { name: `dispatch-${n}`, spec: spec() });
  await appendSourceRecords(db, pipeline.id, "chats", [{ externalId: "a", content: "Alice planned the budget review for March." }]);
  return pipeline.id;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("executor", () => {
  it("reads SYNTHEX_EXECUTOR (default local) and refuses unknown values", () => {
    expect(executorKind({})).toBe("local");
    expect(executorKind({ SYNTHEX_EXECUTOR: "inngest" })).toBe("inngest");
    expect(executorKind({ SYNTHEX_EXECUTOR: " Local " })).toBe("local");
    expect(() => executorKind({ SYNTHEX_EXECUTOR: "celery" })).toThrow(/must be "local" or "inngest"/);
  });

  it("derives the provider key from the LLM steps", () => {
    expect(providerKeyOf(spec())).toBe("offline");
    const mixed = {
      steps: [
        { name: "a", type: "transform", model: "openai/gpt-4o-mini" },
        { name: "b", type: "aggregate", model: "anthropic/claude-haiku" },
        { name: "c", type: "transform", model: "groq/llama", operator: { kind: "regex_entities" } },
        { name: "d", type: "merge" },
      ],
    } as never;
    expect(providerKeyOf(mixed)).toBe("anthropic+openai");
    expect(providerKeyOf({ steps: [] })).toBe("none");
  });

  it("local: startRun executes in this process; the Run row shows the result", async () => {
    const pipelineId = await newPipeline();
    const send = vi.spyOn(inngest, "send");
    const run = await startRun(db, { workspaceId, pipelineId });
    const done = await until(() => db.run.findUniqueOrThrow({ where: { id: run.id } }), (r) => r.status === "completed");
    expect(done.status).toBe("completed");
    expect(send).not.toHaveBeenCalled();
  });

  it("inngest: startRun sends synthex/run.requested with the flow-control keys and leaves the run queued", async () => {
    vi.stubEnv("SYNTHEX_EXECUTOR", "inngest");
    const pipelineId = await newPipeline();
    const send = vi.spyOn(inngest, "send").mockResolvedValue({ ids: ["evt-1"] } as never);
    const run = await startRun(db, { workspaceId, pipelineId });
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0]).toMatchObject({ name: "synthex/run.requested", data: { runId: run.id, workspaceId, provider: "offline" } });
    expect((await db.run.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("queued");
  });

  it("inngest: a send that fails marks the run failed with the reason", async () => {
    const pipelineId = await newPipeline();
    const { createRun } = await import("../server/services/runs");
    const run = await createRun(db, { workspaceId, pipelineId });
    vi.spyOn(inngest, "send").mockRejectedValue(new Error("connect ECONNREFUSED 127.0.0.1:8288"));
    await expect(inngestExecutor.dispatch(db, run)).rejects.toThrow(/Could not hand the run to Inngest/);
    expect(await db.run.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({
      status: "failed",
      error: expect.stringContaining("ECONNREFUSED"),
    });
  });
});

describe("source.appended", () => {
  const fixture = new URL("../server/importers/__fixtures__/chats.jsonl", import.meta.url).pathname;

  it("an import that adds records emits it on the Inngest executor (upload route and CLI import call importFile)", async () => {
    vi.stubEnv("SYNTHEX_EXECUTOR", "inngest");
    const pipelineId = await newPipeline();
    const send = vi.spyOn(inngest, "send").mockResolvedValue({ ids: ["evt-4"] } as never);
    const first = await importFile(db, { workspaceId, pipelineId, source: "chats", path: fixture });
    expect(first.added).toBeGreaterThan(0);
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0]).toMatchObject({ name: "synthex/source.appended", data: { workspaceId, pipelineId, branch: "main" } });
    // Nothing new: nothing to announce.
    expect((await importFile(db, { workspaceId, pipelineId, source: "chats", path: fixture })).added).toBe(0);
    expect(send).toHaveBeenCalledTimes(1);
  });

  it("the local executor schedules nothing; a failed announcement does not fail the import", async () => {
    const send = vi.spyOn(inngest, "send").mockRejectedValue(new Error("connect ECONNREFUSED 127.0.0.1:8288"));
    const local = await newPipeline();
    expect((await importFile(db, { workspaceId, pipelineId: local, source: "chats", path: fixture })).added).toBeGreaterThan(0);
    expect(send).not.toHaveBeenCalled();
    vi.stubEnv("SYNTHEX_EXECUTOR", "inngest");
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const unreachable = await newPipeline();
    expect((await importFile(db, { workspaceId, pipelineId: unreachable, source: "chats", path: fixture })).status).toBe("completed");
    expect(send).toHaveBeenCalledTimes(1);
  });

  const appended = (pipelineId: string) => ({ name: "synthex/source.appended", data: { workspaceId, pipelineId, branch: "main" } }) as const;

  it("is debounced per pipeline and branch", () => {
    const fn = createIncrementalRunFunction({ getDb: () => db });
    expect(DEBOUNCE_KEY).toBe('event.data.pipelineId + ":" + event.data.branch');
    expect(fn.opts.debounce).toEqual({ key: DEBOUNCE_KEY, ...flowControl.debounce });
    expect(fn.opts.triggers).toEqual([{ event: expect.objectContaining({ name: "synthex/source.appended" }) }]);
  });

  it("creates an incremental run and requests it from the run function", async () => {
    const pipelineId = await newPipeline();
    const fn = createIncrementalRunFunction({ getDb: () => db });
    const { result, ctx, error } = await new InngestTestEngine({
      function: fn,
      events: [appended(pipelineId)],
      steps: [{ id: "request-run", handler: () => ({ ids: ["evt-2"] }) }],
    }).execute();
    expect(error).toBeUndefined();
    const runs = await db.run.findMany({ where: { pipelineId } });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "queued", triggeredBy: "source.appended" });
    expect(result).toEqual({ runId: runs[0]!.id });
    expect(ctx.step.sendEvent).toHaveBeenCalledWith(
      "request-run",
      expect.objectContaining({ name: "synthex/run.requested", data: { runId: runs[0]!.id, workspaceId, provider: "offline" } }),
    );
  });

  it("waits while another run holds the branch, then runs", async () => {
    const pipelineId = await newPipeline();
    const { createRun } = await import("../server/services/runs");
    const busy = await createRun(db, { workspaceId, pipelineId });
    await db.run.update({ where: { id: busy.id }, data: { status: "running" } });
    const fn = createIncrementalRunFunction({ getDb: () => db });
    const { result, ctx } = await new InngestTestEngine({
      function: fn,
      events: [appended(pipelineId)],
      steps: [
        {
          id: "wait:0",
          // While "sleeping", the other run finishes.
          handler: async () => {
            await db.run.update({ where: { id: busy.id }, data: { status: "completed" } });
            return null;
          },
        },
        { id: "request-run", handler: () => ({ ids: ["evt-3"] }) },
      ],
    }).execute();
    expect(ctx.step.sleep).toHaveBeenCalledWith("wait:0", "1m");
    const fresh = await db.run.findFirstOrThrow({ where: { pipelineId, triggeredBy: "source.appended" } });
    expect(result).toEqual({ runId: fresh.id });
  });
});
