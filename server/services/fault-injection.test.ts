/**
 * Issue 22, item 3 (faults): a provider that fails 20% of its calls — 429, 500, hangs past the
 * timeout, a non-JSON body, an empty answer — through real HTTP (the mock OpenAI-compatible server)
 * and the workspace's configured provider. The run completes; every injected failure is visible
 * (a counted retry in the step stats, or a failure row with its error and attempts); the items that
 * failed are retried by the next run until the memory equals a run without faults. Prints the figures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { randomFaults, startMockOpenAIServer, type MockOpenAIServer } from "../llm/testing/mock-openai-server";
import { workspaceModel } from "../llm/workspace-model";
import { Pipeline } from "../pipeline/sdk";
import { parseRunStats } from "../store/runs";
import { createTestDb } from "../store/test-db";
import { appendSourceRecords, createPipeline, getBranch } from "./pipelines";
import { upsertProvider } from "./providers";
import { runPipeline } from "./runs";
import { signUp } from "./users";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-fault-injection";
process.env.SYNTHEX_ALLOW_HTTP_HOSTS = "127.0.0.1";
process.env.SYNTHEX_ALLOW_PRIVATE_NETWORKS = "127.0.0.1/32";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let mock: MockOpenAIServer;
const faults = randomFaults({ rate: 0.2, seed: 22 });
let faultsOn = true;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "faults@example.com", password: "faults-password-1" }));
  mock = await startMockOpenAIServer({ apiKey: "sk-mock", behave: () => (faultsOn ? faults.behave() : { kind: "ok" }) });
  await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-mock", timeoutMs: 1000, maxConcurrency: 8 });
});
afterAll(async () => {
  await mock?.close();
  await close();
});

const spec = new Pipeline("faults", { agent: "test" })
  .source("chats", { format: "jsonl" })
  .transform("summaries", { from: "chats", prompt: "Summarize:\n{{ record.content }}", model: "mock/gpt-4o-mini" })
  .transform("facts", { from: "chats", prompt: "Facts:\n{{ record.content }}", model: "mock/gpt-4o" })
  .output("search", { from: ["summaries", "facts"], surface: "search" })
  .toSpec();

const items = Array.from({ length: 60 }, (_, i) => ({ externalId: `c-${i}`, content: `conversation ${i}: the user plans trip ${i} to city ${i % 9} and likes tea number ${i}`, metadata: {} }));

async function memory(pipelineId: string) {
  const { branch } = await getBranch(db, pipelineId, "main");
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: { in: ["summaries", "facts"] } } });
  const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, select: { step: true, content: true } });
  return records.map((r) => `${r.step}\u0000${r.content}`).sort();
}

const run = (pipelineId: string) =>
  runPipeline(db, { workspaceId, pipelineId }, { model: workspaceModel(db, workspaceId, { retryBaseMs: 1, maxRetries: 2 }), runOptions: { retryBaseMs: 1 }, afterRun: false });

describe("a provider failing 20% of calls", () => {
  it("the run completes, every failure is visible, and the next runs retry the failed items to the memory of a clean run", async () => {
    // The memory a provider without faults makes.
    faultsOn = false;
    const { pipeline: clean } = await createPipeline(db, workspaceId, { name: "clean", spec });
    await appendSourceRecords(db, clean.id, "chats", items);
    expect((await run(clean.id)).status).toBe("completed");
    const expected = await memory(clean.id);
    expect(expected).toHaveLength(120);

    faultsOn = true;
    mock.reset();
    const { pipeline } = await createPipeline(db, workspaceId, { name: "flaky", spec });
    await appendSourceRecords(db, pipeline.id, "chats", items);
    const first = await run(pipeline.id);
    // Completes (with errors when an item ran out of attempts), never fails or hangs.
    expect({ status: first.status, error: first.error }).toMatchObject({ status: expect.stringMatching(/^completed(_with_errors)?$/) });
    const calls = mock.count("chat/completions");
    const injected = faults.total();
    expect(injected / calls).toBeGreaterThan(0.1);
    expect(injected / calls).toBeLessThan(0.3);

    // Visible: each injected failure is a retry counted in the step stats or an attempt of a failure row.
    const stats = parseRunStats(await db.run.findUniqueOrThrow({ where: { id: first.id } }));
    const retries = stats.steps.reduce((n, s) => n + s.retries, 0);
    const failures = await db.runFailure.findMany({ where: { runId: first.id } });
    const failedAttempts = failures.reduce((n, f) => n + f.attempts, 0);
    expect(retries + failedAttempts).toBe(injected);
    for (const f of failures) {
      expect(f.error).toMatch(/HTTP|timed out|empty|JSON|invalid|network/i);
      expect(f.inputKey).toBeTruthy();
    }
    expect(stats.steps.reduce((n, s) => n + s.errors, 0)).toBe(failures.length);

    // Retryable: the next runs take exactly the failed items again (faults still on) until none fail.
    const failedItems = new Set(failures.map((f) => `${f.step}\u0000${f.inputKey}`));
    let runs = 1;
    let retriedToSuccess = 0;
    let pending = failures.length;
    while (pending > 0 && runs < 8) {
      const before = mock.count("chat/completions");
      const again = await run(pipeline.id);
      runs += 1;
      expect(["completed", "completed_with_errors"]).toContain(again.status);
      const stillFailing = await db.runFailure.count({ where: { runId: again.id } });
      const modelCalls = parseRunStats(await db.run.findUniqueOrThrow({ where: { id: again.id } })).steps.reduce((n, s) => n + s.modelCalls, 0);
      // Only the items that had failed are called again (plus their retries).
      expect(modelCalls).toBeLessThanOrEqual(mock.count("chat/completions") - before);
      retriedToSuccess += pending - stillFailing;
      pending = stillFailing;
    }
    expect(pending).toBe(0);
    expect(retriedToSuccess).toBe(failedItems.size);
    expect(await memory(pipeline.id)).toEqual(expected);

    console.log(
      [
        "fault injection (mock provider, 20% of chat calls):",
        `  calls ${mock.count("chat/completions")} (first run ${calls}), failures injected ${faults.total()} (first run ${injected}: ${JSON.stringify(faults.injected)})`,
        `  first run: ${first.status}; failures visible ${retries + failedAttempts} of ${injected} (${retries} retried in the run, ${failedAttempts} attempts on ${failures.length} failed items)`,
        `  retried to success by later runs: ${retriedToSuccess} of ${failures.length} items, ${runs} runs in all; memory equals the clean run's ${expected.length} records`,
      ].join("\n"),
    );
  }, 300_000);
});
