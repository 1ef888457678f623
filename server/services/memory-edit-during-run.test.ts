/**
 * Issue 49: a memory edited through the memory API (Mem0's update) while a run is in progress
 * survives the run's commit. The run reads the people's versions when it starts consolidating; an
 * edit made after that, to a memory of a scope the run does not change, must still be what the
 * branch shows when the run points it at its memory sets. The run's model call is held by the mock
 * provider (its latency) so that the edit lands inside the run, against a real database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import type { MockRequest } from "../llm/testing/mock-openai-server";
import { startMockOpenAIServer } from "../llm/testing/mock-openai-server";
import { Pipeline } from "../pipeline/sdk";
import { createTestDb } from "../store/test-db";
import { reviseMemory } from "./memories";
import { listMemories } from "./memory-reads";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { upsertProvider } from "./providers";
import { runPipeline } from "./runs";
import { signUp } from "./users";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-memory-edit";

let db: Db;
let close: () => Promise<void>;
let mock: Awaited<ReturnType<typeof startMockOpenAIServer>>;

/** Every fact is a new memory. */
const behave = (request: MockRequest) => ({ kind: "ok" as const, content: JSON.stringify({ event: "ADD", text: request.text.trim(), reason: "new" }) });

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  mock = await startMockOpenAIServer({ behave, apiKey: "sk-edit" });
}, 120_000);
afterAll(async () => {
  await mock?.close();
  await close?.();
});

const day = (d: number) => ({ time: { created_at: `2024-05-${String(d).padStart(2, "0")}T09:00:00Z` } });

describe("a memory edited during a run", () => {
  it("keeps the edit after the run commits", async () => {
    const { workspace } = await signUp(db, { email: "edit-during-run@example.com", password: "edit-password-1" });
    const workspaceId = workspace.id;
    await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-edit", timeoutMs: 30_000 });
    const spec = new Pipeline("mem", { agent: "test" })
      .source("facts", { format: "jsonl" })
      .consolidate("memories", { from: "facts", prompt: "{{ record.content }}", model: "mock/gpt-test" })
      .output("search", { from: "memories", surface: "search" })
      .toSpec();
    const { pipeline } = await createPipeline(db, workspaceId, { name: "mem", spec });
    const pipelineId = pipeline.id;
    await appendSourceRecords(db, pipelineId, "facts", [{ externalId: "1", content: "Ana keeps bees on the roof", scope: "ana", metadata: day(1) }]);
    expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
    const memories = () => listMemories(db, { workspaceId, pipelineId, branch: "main", step: "memories" });
    const [ana] = await memories();
    expect(ana).toMatchObject({ content: "Ana keeps bees on the roof", scope: "ana" });

    // A new fact in another scope: the run holds at its model call while the memory is edited.
    await appendSourceRecords(db, pipelineId, "facts", [{ externalId: "2", content: "Ben rows on Sundays", scope: "ben", metadata: day(2) }]);
    mock.options.latencyMs = 1500;
    const calls = mock.count("chat/completions");
    const run = runPipeline(db, { workspaceId, pipelineId });
    while (mock.count("chat/completions") === calls) await new Promise((r) => setTimeout(r, 20));
    await reviseMemory(db, workspaceId, { recordId: ana!.recordId, change: { event: "UPDATE", content: "Ana keeps bees on the roof and in the orchard" } });
    expect((await run).status).toBe("completed");
    mock.options.latencyMs = 0;

    const after = new Map((await memories()).map((m) => [m.scope, m.content]));
    expect(after.get("ben")).toBe("Ben rows on Sundays");
    expect(after.get("ana")).toBe("Ana keeps bees on the roof and in the orchard");

    // And a later run keeps it too.
    expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
    expect(new Map((await memories()).map((m) => [m.scope, m.content])).get("ana")).toBe("Ana keeps bees on the roof and in the orchard");
  }, 120_000);
});
