/**
 * The Inngest run function, executed by @inngest/test against a test database: same records as
 * the in-process runner, retries, permanent failures, memoization, cancellation, flow control.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InngestTestEngine } from "@inngest/test";
import { InngestExecutionEngine } from "inngest/internals";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelError, type ModelProvider } from "../server/engine/model";
import { ScriptedModel } from "../server/llm/fake-model";
import { OfflineModel } from "../server/llm/offline-model";
import { Pipeline } from "../server/pipeline/sdk";
import type { PipelineSpec } from "../server/pipeline/spec";
import type { Db } from "../server/core/db";
import { appendSourceRecords, createPipeline } from "../server/services/pipelines";
import type { SourceItem } from "../server/core/source-item";
import { cancelRun, createRun, runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";
import { getWebhookSecret, verifyWebhookSignature } from "../server/services/webhooks";
import { search } from "../server/search/search";
import { createTestDb, type TestDb } from "../server/store/test-db";
import { createCancelFunction, createRunFunction } from "./functions";
import { flowControl } from "./flow-control";

let t: TestDb;
let db: Db;
let workspaceId: string;
let n = 0;

beforeAll(async () => {
  t = await createTestDb();
  db = t.db;
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "inngest@example.com", password: "inngest-password" }));
});
afterAll(async () => t.close());

/** A 3-step pipeline: transform → aggregate (month) → fold. */
function chatSpec(): PipelineSpec {
  return new Pipeline("chat", { agent: "test" })
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", prompt: "Summarize: {{ record.content }}" })
    .aggregate("monthly", { from: "summaries", period: "month", prompt: "Month {{ group.key }}: {% for r in records %}{{ r.content }}{% endfor %}" })
    .fold("world", { from: "monthly", prompt: "State: {{ state }} New: {{ record.content }}", checkpointEvery: 2 })
    .toSpec();
}

function conversation(i: number): SourceItem {
  const month = ["2024-01", "2024-02", "2024-03"][i % 3]!;
  return {
    externalId: `conv-${i}`,
    content: `Conversation ${i} about topic ${i % 3}. The user asked question number ${i} and talked about budgets and plans.`,
    metadata: { time: { created_at: `${month}-${String((i % 27) + 1).padStart(2, "0")}T10:00:00Z` } },
  };
}

async function newPipeline(target: Db, ws = workspaceId, sources = 7) {
  n += 1;
  const { pipeline } = await createPipeline(target, ws, { name: `inngest-${n}`, spec: chatSpec() });
  await appendSourceRecords(target, pipeline.id, "chats", Array.from({ length: sources }, (_, i) => conversation(i)));
  return pipeline.id;
}

const requested = (runId: string, ws = workspaceId) =>
  ({ name: "synthex/run.requested", data: { runId, workspaceId: ws, provider: "offline" } }) as const;

/** Everything the run made, comparable across databases: keys, contents, provenance, pointers. */
async function snapshot(target: Db, pipelineId: string) {
  const records = await target.record.findMany({
    where: { pipelineId, step: { in: ["summaries", "monthly", "world"] } },
    select: { id: true, step: true, materializationKey: true, content: true, contentFingerprint: true, scope: true },
    orderBy: { materializationKey: "asc" },
  });
  const keyOf = new Map(records.map((r) => [r.id, r.materializationKey]));
  const edges = await target.recordEdge.findMany({ where: { childId: { in: records.map((r) => r.id) } } });
  const pointers = await target.branchPointer.findMany({ where: { step: { in: ["summaries", "monthly", "world"] }, recordId: { in: records.map((r) => r.id) } } });
  return {
    records: records.map((r) => ({ step: r.step, materializationKey: r.materializationKey, content: r.content, contentFingerprint: r.contentFingerprint, scope: r.scope })),
    edges: edges.map((e) => `${keyOf.get(e.parentId) ?? e.parentId}->${keyOf.get(e.childId)}`).sort(),
    pointers: pointers.map((p) => `${p.step}|${p.groupKey}|${keyOf.get(p.recordId)}`).sort(),
  };
}

const stepIds = (ctx: { step: { run: { mock: { calls: unknown[][] } } } }) => ctx.step.run.mock.calls.map((c) => c[0] as string);

/** Inngest's memoized state after an execution, as mocked steps for the next one (what a retry sees). */
async function memoized(state: Record<string, Promise<unknown>>, except: (id: string) => boolean = () => false) {
  const steps = [];
  for (const [id, promise] of Object.entries(state)) {
    if (except(id)) continue;
    try {
      const data = await promise;
      steps.push({ id, idIsHashed: true, handler: () => data });
    } catch {
      // failed step: not memoized, the retry executes it again
    }
  }
  return steps;
}

describe("run function", () => {
  it("executes a 3-step pipeline to the same records as the in-process runner, in batches", async () => {
    // One seeded database, cloned byte for byte: identical pipelines, sources and ids.
    const pipelineId = await newPipeline(db);
    const cloned = await t.clone();
    const clone = cloned.db;
    try {
      const local = await runPipeline(db, { workspaceId, pipelineId }, { model: new OfflineModel(), runOptions: { retryBaseMs: 1 } });
      expect(local.status).toBe("completed");

      const run = await createRun(clone, { workspaceId, pipelineId });
      const fn = createRunFunction({ getDb: () => clone, getModel: () => new OfflineModel(), batchSize: 3 });
      const { result, error, ctx } = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
      expect(error).toBeUndefined();
      expect(result).toMatchObject({ runId: run.id, status: "completed" });
      // 7 sources in pages of 3: three memoized batches for the transform, one step.run each for the others.
      expect(stepIds(ctx as never)).toEqual(["plan", "step:summaries:0", "step:summaries:1", "step:summaries:2", "step:monthly:0", "step:world:0", "finish"]);

      const [a, b] = [await snapshot(db, pipelineId), await snapshot(clone, pipelineId)];
      expect(b.records).toHaveLength(7 + 3 + 1);
      expect(b).toEqual(a);

      const row = await clone.run.findUniqueOrThrow({ where: { id: run.id } });
      expect(row.status).toBe("completed");
      expect(row.finishedAt).not.toBeNull();
      const stats = (row.stats as { steps: Array<{ step: string; input: number; output: number; skipped: number }> }).steps;
      expect(stats.map((s) => [s.step, s.input, s.output])).toEqual([
        ["summaries", 7, 7],
        // An aggregate's input counts the records its groups read (7 summaries into 3 months).
        ["monthly", 7, 3],
        ["world", 3, 1],
      ]);
      expect(stats.map((s) => [s.step, s.input, s.output])).toEqual(
        (local.stats as { steps: typeof stats }).steps.map((s) => [s.step, s.input, s.output]),
      );
    } finally {
      await cloned.close();
    }
  });

  it("retries a batch that hit a transient provider error; the retry computes only what is missing", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 4);
    const run = await createRun(db, { workspaceId, pipelineId });
    const model = new ScriptedModel().failTimes(1);
    const fn = createRunFunction({ getDb: () => db, getModel: () => model, batchSize: 10 });

    const first = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(first.error).toMatchObject({ message: expect.stringMatching(/transient provider error.*Inngest retries this batch/) });
    expect(first.error).not.toMatchObject({ name: "NonRetriableError" });
    // The attempt's failed items are not left behind as failures: the retry recomputes them.
    expect(await db.runFailure.count({ where: { runId: run.id } })).toBe(0);
    expect((await db.run.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("running");
    const transformCalls = () => model.calls.filter((c) => c.prompt.startsWith("Summarize:"));
    expect(transformCalls()).toHaveLength(4); // 1 failed + 3 done

    // Inngest's retry: the memoized plan is reused, the failed step runs again.
    const retry = await new InngestTestEngine({ function: fn, events: [requested(run.id)], steps: await memoized(first.state) }).execute();
    expect(retry.error).toBeUndefined();
    expect(retry.result).toMatchObject({ status: "completed" });
    expect(stepIds(retry.ctx as never)).toContain("step:summaries:0");
    // Only the item that failed was computed again.
    expect(transformCalls()).toHaveLength(5);
    expect(new Set(transformCalls().map((c) => c.inputs[0]!.id)).size).toBe(4);
    const row = await db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(row.status).toBe("completed");
    expect(await db.record.count({ where: { pipelineId, step: "summaries" } })).toBe(4);
    expect(await db.record.count({ where: { pipelineId, step: "world" } })).toBe(1);
  });

  it("fails the run with a visible reason on a permanent provider error, without retrying", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 3);
    const run = await createRun(db, { workspaceId, pipelineId });
    const model = new ScriptedModel().failWhen(
      () => true,
      () => new ModelError("openai/gpt-4o-mini: authentication failed (HTTP 401): check the provider's API key", { raw: '{"error":"invalid key"}', kind: "permanent" }),
    );
    const fn = createRunFunction({ getDb: () => db, getModel: () => model, batchSize: 10 });
    const { error, ctx } = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(error).toMatchObject({ name: "NonRetriableError", message: expect.stringContaining("authentication failed") });
    expect(stepIds(ctx as never)).not.toContain("step:monthly:0");
    const row = await db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(row.status).toBe("failed");
    expect(row.error).toMatch(/summaries: the model provider refused the request: .*authentication failed \(HTTP 401\)/);
    const failures = await db.runFailure.findMany({ where: { runId: run.id } });
    expect(failures).toHaveLength(3);
    expect(failures[0]).toMatchObject({ step: "summaries", rawResponse: '{"error":"invalid key"}' });
  });

  it("fails an invalid spec permanently, in the plan step", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 1);
    const run = await createRun(db, { workspaceId, pipelineId });
    await db.pipelineVersion.update({ where: { id: run.versionId }, data: { spec: { name: "broken", steps: "nope" } } });
    const fn = createRunFunction({ getDb: () => db, getModel: () => new OfflineModel() });
    const { error, ctx } = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(error).toMatchObject({ name: "NonRetriableError", message: expect.stringContaining("The pipeline spec is invalid") });
    expect(stepIds(ctx as never)).toEqual(["plan"]);
    const row = await db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(row).toMatchObject({ status: "failed", error: expect.stringContaining("The pipeline spec is invalid") });
  });

  it("onFailure (retries exhausted) marks the run failed with the reason", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 1);
    const run = await createRun(db, { workspaceId, pipelineId });
    await db.run.update({ where: { id: run.id }, data: { status: "running" } });
    const fn = createRunFunction({ getDb: () => db, getModel: () => new OfflineModel() });
    const onFailure = fn.opts.onFailure as unknown as (ctx: unknown) => Promise<unknown>;
    const out = await onFailure({
      event: { name: "inngest/function.failed", data: { event: requested(run.id), error: { name: "Error", message: "connection reset" } } },
      error: new Error("connection reset"),
    });
    expect(out).toEqual({ marked: true, runId: run.id });
    expect(await db.run.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({ status: "failed", error: "connection reset" });
  });

  it("re-executing memoized steps does not call the model again", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 5);
    const run = await createRun(db, { workspaceId, pipelineId });
    const model = new ScriptedModel();
    const fn = createRunFunction({ getDb: () => db, getModel: () => model, batchSize: 2 });
    const first = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(first.result).toMatchObject({ status: "completed" });
    const calls = model.calls.length;
    expect(calls).toBe(5 + 3 + 3); // 5 summaries, 3 months, 3 fold steps
    const records = await db.record.count({ where: { pipelineId } });

    // A replay with every step memoized: no step body runs.
    const replay = await new InngestTestEngine({ function: fn, events: [requested(run.id)], steps: await memoized(first.state) }).execute();
    expect(replay.result).toEqual(first.result);
    expect(model.calls.length).toBe(calls);

    // Inngest lost the batches' results (worker died after the work): the bodies execute again,
    // find every work item done, and make no model calls and no new records.
    const plan = await memoized(first.state, (id) => id !== InngestExecutionEngine._internals.hashId("plan"));
    const again = await new InngestTestEngine({ function: fn, events: [requested(run.id)], steps: plan }).execute();
    expect(again.error).toBeUndefined();
    expect(stepIds(again.ctx as never)).toContain("step:summaries:0");
    expect(model.calls.length).toBe(calls);
    expect(await db.record.count({ where: { pipelineId } })).toBe(records);
  });

  it("a full run retires each step once and recomputes it in batches", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 4);
    const fn = createRunFunction({ getDb: () => db, getModel: () => new OfflineModel(), batchSize: 3 });
    const first = await createRun(db, { workspaceId, pipelineId });
    await new InngestTestEngine({ function: fn, events: [requested(first.id)] }).execute();
    const before = await snapshot(db, pipelineId);

    const model = new ScriptedModel();
    const full = await createRun(db, { workspaceId, pipelineId, options: { full: true } });
    const fullFn = createRunFunction({ getDb: () => db, getModel: () => model, batchSize: 3 });
    const { result, ctx } = await new InngestTestEngine({ function: fullFn, events: [requested(full.id)] }).execute();
    expect(result).toMatchObject({ status: "completed" });
    expect(stepIds(ctx as never)).toEqual([
      "plan",
      "retire:summaries", "step:summaries:0", "step:summaries:1",
      "retire:monthly", "step:monthly:0",
      "retire:world", "step:world:0",
      "finish",
    ]);
    expect(model.calls).toHaveLength(4 + 3 + 3);
    // Same contents, new records under the same keys; the old ones are retired, not erased.
    const current = (await snapshot(db, pipelineId)).records.filter((r) => !r.materializationKey.includes("~"));
    expect(current.map((r) => [r.materializationKey, r.content])).toEqual(before.records.map((r) => [r.materializationKey, r.content]));
    expect(await db.record.count({ where: { pipelineId, step: "summaries" } })).toBe(8);
  });

  it("cancellation stops further steps and marks the run cancelled", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 7);
    const run = await createRun(db, { workspaceId, pipelineId });
    const inner = new ScriptedModel();
    let cancelled = false;
    const model: ModelProvider = {
      async complete(request) {
        if (!cancelled) {
          cancelled = true;
          await cancelRun(db, workspaceId, run.id); // what the UI's cancel button does
        }
        return inner.complete(request);
      },
    };
    const fn = createRunFunction({ getDb: () => db, getModel: () => model, batchSize: 3 });
    const { result, ctx } = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
    expect(result).toMatchObject({ status: "cancelled", stoppedAt: "summaries" });
    expect(stepIds(ctx as never)).toEqual(["plan", "step:summaries:0"]);
    expect(inner.calls).toHaveLength(3); // the batch in flight finished, nothing after it
    expect(await db.record.count({ where: { pipelineId, step: "summaries" } })).toBe(3);
    expect(await db.record.count({ where: { pipelineId, step: { in: ["monthly", "world"] } } })).toBe(0);
    expect(await db.run.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({ status: "cancelled", cancelRequested: true });
  });

  it("the run.cancelled event marks the run cancelled (the run function stops via cancelOn)", async () => {
    const pipelineId = await newPipeline(db, workspaceId, 1);
    const run = await createRun(db, { workspaceId, pipelineId });
    const fn = createCancelFunction({ getDb: () => db });
    const { result } = await new InngestTestEngine({ function: fn, events: [{ name: "synthex/run.cancelled", data: { runId: run.id } }] }).execute();
    expect(result).toEqual({ runId: run.id });
    expect(await db.run.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({ status: "cancelled", cancelRequested: true });
    // A later run.requested for it does nothing.
    const runFn = createRunFunction({ getDb: () => db, getModel: () => new OfflineModel() });
    const later = await new InngestTestEngine({ function: runFn, events: [requested(run.id)] }).execute();
    expect(later.result).toEqual({ runId: run.id, status: "cancelled" });
  });

  it("ends with the same afterRun as the in-process runner: records are embedded for search and webhooks fire", async () => {
    const received: Array<{ body: string; signature: string; timestamp: string }> = [];
    const server: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        received.push({ body, signature: String(req.headers["x-synthex-signature"]), timestamp: String(req.headers["x-synthex-timestamp"]) });
        res.end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      n += 1;
      const spec = new Pipeline("served", { agent: "test" })
        .source("chats", { format: "jsonl" })
        .transform("summaries", { from: "chats", prompt: "Summarize: {{ record.content }}" })
        .fold("world", { from: "summaries", prompt: "State: {{ state }} New: {{ record.content }}" })
        .output("context", { from: "world", surface: "projection", webhook: { url: hook } })
        .output("search", { from: ["summaries"], surface: "search" })
        .toSpec();
      const { pipeline } = await createPipeline(db, workspaceId, { name: `inngest-${n}`, spec });
      await appendSourceRecords(db, pipeline.id, "chats", [
        ...Array.from({ length: 3 }, (_, i) => conversation(i)),
        { externalId: "kite", content: "The user flies a kite made of quetzalcoatl feathers every Sunday.", metadata: { time: { created_at: "2024-01-05T10:00:00Z" } } },
      ]);
      const run = await createRun(db, { workspaceId, pipelineId: pipeline.id });
      const fn = createRunFunction({ getDb: () => db, getModel: () => new OfflineModel(), batchSize: 2 });
      const { result, error, ctx } = await new InngestTestEngine({ function: fn, events: [requested(run.id)] }).execute();
      expect(error).toBeUndefined();
      expect(result).toMatchObject({ runId: run.id, status: "completed" });
      expect(stepIds(ctx as never).at(-1)).toBe("finish");

      // Embedded: every summary has a vector, and semantic search finds the one about the kite.
      const summaries = await db.record.findMany({ where: { pipelineId: pipeline.id, step: "summaries" }, select: { id: true } });
      expect(summaries).toHaveLength(4);
      expect(await db.embedding.count({ where: { recordId: { in: summaries.map((r) => r.id) } } })).toBe(4);
      const found = await search(db, { workspaceId, pipelineId: pipeline.id, query: "kite quetzalcoatl feathers", mode: "semantic", step: "summaries" });
      expect(found.hits[0]?.content).toContain("quetzalcoatl");

      // The projection changed: its webhook was delivered, signed, before the run function returned.
      expect(received).toHaveLength(1);
      const secret = await getWebhookSecret(db, workspaceId);
      expect(verifyWebhookSignature(secret, received[0]!.signature, received[0]!.timestamp, received[0]!.body)).toBe(true);
      expect(JSON.parse(received[0]!.body)).toMatchObject({ event: "projection.updated", output: "context" });
      expect(await db.webhookDelivery.findFirstOrThrow({ where: { pipelineId: pipeline.id } })).toMatchObject({ status: "delivered" });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("sets concurrency, throttle, cancellation and retries as designed", () => {
    const fn = createRunFunction({ getDb: () => db, getModel: () => new OfflineModel() });
    expect(fn.id("synthex")).toBe("synthex-run");
    expect(fn.opts.triggers).toEqual([{ event: expect.objectContaining({ name: "synthex/run.requested" }) }]);
    expect(fn.opts.concurrency).toEqual([
      { key: "event.data.workspaceId", limit: flowControl.workspaceConcurrency },
      { key: "event.data.provider", limit: flowControl.providerConcurrency, scope: "env" },
    ]);
    expect(fn.opts.throttle).toEqual({ key: "event.data.provider", ...flowControl.providerThrottle });
    expect(fn.opts.cancelOn).toEqual([{ event: "synthex/run.cancelled", if: "async.data.runId == event.data.runId" }]);
    expect(fn.opts.idempotency).toBe("event.data.runId");
    expect(fn.opts.retries).toBe(3);
    expect(typeof fn.opts.onFailure).toBe("function");

    // What the SDK registers with Inngest (PUT /api/inngest): flow control and the failure handler.
    const getConfig = (fn as unknown as { getConfig(o: { baseUrl: URL; appPrefix: string }): Array<Record<string, unknown>> }).getConfig.bind(fn);
    const [main, failure] = getConfig({ baseUrl: new URL("http://localhost:3000/api/inngest"), appPrefix: "synthex" });
    expect(main).toMatchObject({
      id: "synthex-run",
      triggers: [{ event: "synthex/run.requested" }],
      idempotency: "event.data.runId",
      concurrency: [
        { key: "event.data.workspaceId", limit: flowControl.workspaceConcurrency },
        { key: "event.data.provider", limit: flowControl.providerConcurrency, scope: "env" },
      ],
      throttle: { key: "event.data.provider", ...flowControl.providerThrottle },
      cancel: [{ event: "synthex/run.cancelled", if: "async.data.runId == event.data.runId" }],
      steps: { step: { retries: { attempts: 3 } } },
    });
    expect(failure).toMatchObject({
      id: "synthex-run-failure",
      triggers: [{ event: "inngest/function.failed", expression: "event.data.function_id == 'synthex-run'" }],
    });
  });
});
