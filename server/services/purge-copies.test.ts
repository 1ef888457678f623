/**
 * Purge reaches every copy (issue 30, item 4). A unique string is planted in one scope's
 * conversations and every feature that could copy it runs: a file import, a Mem0 pipeline (facts,
 * memories, entities, search postings, embeddings) with a projection webhook queued, a run whose
 * model fails quoting the text (a run failure with its raw response), live ingest and an `ask`
 * over REST with an Idempotency-Key, a team question set and its eval (cases keep previews and an
 * extractive answer). Then the scope is purged and EVERY table of the database is scanned — the
 * list comes from information_schema, so a table added later is scanned too — for the string.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { ModelError } from "../engine/model";
import { addToQuestionSet, getQuestionSet } from "../eval/question-sets";
import { getEvalCase } from "../eval/run-reads";
import { runEval } from "../eval/service";
import { ScriptedModel } from "../llm/fake-model";
import { templateSpec } from "../pipeline/templates";
import { handleRest } from "../api/rest";
import { appRestEndpoints } from "../api/rest-app";
import { appRouter } from "../api/root";
import { createContext } from "../api/trpc";
import { createTestDb } from "../store/test-db";
import { createApiKey } from "./api-keys";
import { settleBackgroundWork } from "./background";
import { importFile } from "./imports";
import { createPipeline } from "./pipelines";
import { purgeScope, type PurgeResult } from "./purge";
import { runPipeline } from "./runs";
import { signUp } from "./users";

// Letters and digits only: search stores it as one lexeme, and ILIKE finds it in any case.
const TOKEN = `zq${randomBytes(5).toString("hex")}x`;
const CANARY = `PURGE-CANARY-${TOKEN}`;
const VICTIM = "acme:victim";
const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
/** A chat-memory pipeline on the same files: windows, summaries, a fold over the month, the world model. */
let chatPipelineId: string;
let secret: string;
const dir = mkdtempSync(path.join(tmpdir(), "synthex-purge-copies-"));

async function rest(method: "POST", url: string, body: unknown, idempotencyKey?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  const req = new Request(`http://localhost/api/v1${url}`, { method, headers, body: JSON.stringify(body) });
  const res = await handleRest({ router: appRouter, endpoints: appRestEndpoints(), req, path: url, createContext: () => createContext({ db, authorization: headers.authorization }) });
  return { status: res.status, text: await res.text(), replayed: res.headers.get("idempotency-replayed") };
}

/** Every base table of the schema (read from the catalog: new tables are scanned without a change here), with how many of its rows hold `needle`. */
async function tablesHolding(needle: string): Promise<{ scanned: string[]; found: Record<string, number> }> {
  const tables = await db.$queryRawUnsafe<Array<{ name: string }>>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
  );
  const found: Record<string, number> = {};
  for (const { name } of tables) {
    const rows = await db.$queryRawUnsafe<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM "${name.replaceAll('"', '""')}" t WHERE t::text ILIKE $1`, `%${needle}%`);
    if (rows[0]!.n > 0) found[name] = rows[0]!.n;
  }
  return { scanned: tables.map((t) => t.name), found };
}

async function waitForRuns() {
  await settleBackgroundWork();
  for (;;) {
    const active = await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } } });
    if (!active) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "copies@example.com", password: "purge-copies-password" });
  workspaceId = workspace.id;
  secret = (await createApiKey(db, workspaceId, { userId: user.id, role: "owner" }, { name: "agent", role: "admin" })).secret;
  const spec = templateSpec("mem0");
  // A projection of each scope's memories, sent to a webhook (the host never resolves: the delivery stays queued).
  spec.outputs.push({ name: "profile", from: "memories", surface: "projection", webhook: { url: "https://hooks.synthex-test.invalid/profile" } });
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "memory", spec }));
  ({ pipeline: { id: chatPipelineId } } = await createPipeline(db, workspaceId, { name: "chat-memory", spec: templateSpec("chat-memory") }));

  // Other people's conversations (kept), and the victim's own, imported from a file.
  const victimFile = path.join(dir, "victim.jsonl");
  const line = (id: string, text: string) => JSON.stringify({ id, scope: VICTIM, messages: [{ role: "user", content: text }, { role: "assistant", content: "Noted." }] });
  writeFileSync(
    victimFile,
    [
      // Every sentence holds the string: the projection sends the scope's latest memory, whichever it is.
      line("victim-1", `My locker code is ${CANARY}. I keep the ${CANARY} locker key under the blue mat.`),
      line("victim-2", `Remember that my gym badge says ${CANARY} on the back.`),
    ].join("\n"),
  );
  for (const id of [pipelineId, chatPipelineId]) {
    await importFile(db, { workspaceId, pipelineId: id, source: "chats", path: fixture });
    expect((await importFile(db, { workspaceId, pipelineId: id, source: "chats", path: victimFile, format: "jsonl" })).added).toBe(2);
  }
  expect((await runPipeline(db, { workspaceId, pipelineId: chatPipelineId })).status).toBe("completed");

  // A run whose model fails once on the victim's text, quoting it (a run failure with a raw response)...
  let failed = false;
  const model = new ScriptedModel().failWhen(
    (req) => !failed && JSON.stringify(req).includes(CANARY) && (failed = true),
    () => new ModelError(`The reply is not a JSON list: "facts: ${CANARY}"`, { raw: `facts: ${CANARY} (not JSON)` }),
  );
  await runPipeline(db, { workspaceId, pipelineId }, { model });
  expect(await db.runFailure.count({ where: { workspaceId, rawResponse: { contains: CANARY } } })).toBe(1);
  // ...and the next one, which makes what failed (and queues the projection webhooks).
  expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
  await waitForRuns();
  const deliveries = await db.webhookDelivery.findMany({ where: { pipelineId }, select: { payload: true } });
  expect(deliveries.map((d) => JSON.stringify(d.payload)).join("\n"), "a queued projection webhook quotes the victim's memory").toContain(CANARY);
}, 240_000);

afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

describe("purge reaches every copy of the purged text", () => {
  it("a scope purge leaves the planted string in no table; a pre-purge Idempotency-Key replays no purged text; eval cases lose it", async () => {
    // Live ingest and ask over REST, each with an Idempotency-Key (the answers are kept for replays).
    const ingest = await rest("POST", `/pipelines/${pipelineId}/sources/chats/messages`, { sessionId: "victim-live", scope: VICTIM, messages: [{ role: "user", content: `New badge: ${CANARY}` }] }, "ingest-1");
    expect(ingest.status).toBe(200);
    const askBody = { question: "What is my locker code?", scope: VICTIM, mode: "fts", step: "memories" };
    const asked = await rest("POST", `/pipelines/${pipelineId}/ask`, askBody, "ask-1");
    expect(asked.status).toBe(200);
    expect(asked.text).toContain(CANARY);
    expect((await rest("POST", `/pipelines/${pipelineId}/ask`, askBody, "ask-1")).replayed).toBe("true");

    // A team question set on the victim's memory, and its eval (cases keep previews and an answer).
    // A memory itself (the step also writes bookkeeping records, without metadata.memory).
    const lockerRecords = await db.record.findMany({ where: { pipelineId, step: "memories", scope: VICTIM, content: { contains: "locker" } }, orderBy: { id: "asc" } });
    const memory = lockerRecords.find((r) => (r.metadata as { memory?: unknown }).memory)!;
    expect(memory, "the victim has a memory about the locker").toBeTruthy();
    await addToQuestionSet(db, workspaceId, { set: "lockers", question: "What is my locker code?", recordIds: [memory.id] });
    const evalRun = await runEval(db, { workspaceId, pipeline: pipelineId, questionSet: "lockers", mode: "fts" });
    expect(evalRun.status).toBe("completed");
    const evalCase = await db.evalCase.findFirstOrThrow({ where: { evalRunId: evalRun.id } });
    const caseBefore = await getEvalCase(db, workspaceId, evalCase.id);
    expect(JSON.stringify(caseBefore)).toContain(CANARY);
    // The victim's memories the eval retrieved (the extractor may split the locker sentences into several).
    const retrievedVictim = caseBefore.retrieved.map((h) => h.id).filter((id) => lockerRecords.some((r) => r.id === id));
    expect(retrievedVictim.length, "the eval retrieved a memory about the locker").toBeGreaterThan(0);

    // Before: the features did copy it (the scan can find it, and where) — once the run the live
    // ingest asked for has ended, so the snapshot is not taken while it still writes.
    await waitForRuns();
    const before = await tablesHolding(TOKEN);
    expect(before.scanned.length).toBeGreaterThan(25);
    expect(Object.keys(before.found)).toEqual(
      expect.arrayContaining(["Record", "IngestMessage", "IdempotencyKey", "EvalCase", "RunFailure", "WebhookDelivery", "SearchTermStat"]),
    );
    console.log(`[purge copies] before the purge, "${TOKEN}" is in: ${JSON.stringify(before.found)}`);

    // The dry run lists the copies by kind; nothing changes.
    const dry = await purgeScope(db, { workspaceId, actor: "user:test", dryRun: true }, pipelineId, VICTIM);
    expect(dry.copies.idempotencyResponses).toBeGreaterThanOrEqual(2);
    expect(dry.copies.evalCases).toBe(1);
    expect(dry.copies.runFailures).toBe(1);
    expect(dry.copies.webhookDeliveries).toBeGreaterThan(0);
    expect(dry.copies.questions).toBe(1);
    expect(await tablesHolding(TOKEN)).toEqual(before);

    // The purge itself over REST, with a key: its own answer is kept (a retry replays it).
    const purged = await rest("POST", `/pipelines/${pipelineId}/purge`, { scope: VICTIM, dryRun: false }, "purge-1");
    expect(purged.status).toBe(200);
    const real = JSON.parse(purged.text) as PurgeResult;
    expect(real.copies).toEqual(dry.copies);
    expect(await rest("POST", `/pipelines/${pipelineId}/purge`, { scope: VICTIM, dryRun: false }, "purge-1")).toMatchObject({ status: 200, text: purged.text, replayed: "true" });
    // The chat-memory pipeline holds the same conversations: purged on its own.
    const chat = await purgeScope(db, { workspaceId, actor: "user:test", dryRun: false }, chatPipelineId, VICTIM);
    expect(chat.records.length).toBeGreaterThan(2);

    // After: in no table at all.
    const after = await tablesHolding(TOKEN);
    expect(after.found).toEqual({});

    // A replay of a pre-purge key is refused (410): never the purged answer, never run again.
    const replay = await rest("POST", `/pipelines/${pipelineId}/ask`, askBody, "ask-1");
    expect(replay.status).toBe(410);
    expect(replay.text).not.toContain(TOKEN);
    expect(JSON.parse(replay.text)).toMatchObject({ error: { code: "IDEMPOTENCY_ANSWER_PURGED" } });
    const reingest = await rest("POST", `/pipelines/${pipelineId}/sources/chats/messages`, { sessionId: "victim-live", scope: VICTIM, messages: [{ role: "user", content: `New badge: ${CANARY}` }] }, "ingest-1");
    expect(reingest.status).toBe(410);
    expect(await db.ingestMessage.count({ where: { content: { contains: TOKEN } } })).toBe(0);
    // A new key runs a new request.
    expect((await rest("POST", `/pipelines/${pipelineId}/ask`, askBody, "ask-2")).status).toBe(200);

    // The eval case still reads (scores kept), without the purged text.
    const redacted = await getEvalCase(db, workspaceId, evalCase.id);
    expect(JSON.stringify(redacted)).not.toContain(TOKEN);
    expect(redacted.retrieved.map((h) => h.id)).toEqual(caseBefore.retrieved.map((h) => h.id));
    expect(redacted.retrieved.map((h) => h.id)).toEqual(expect.arrayContaining(retrievedVictim));
    // The run failure is still counted, without its text.
    const failure = await db.runFailure.findFirstOrThrow({ where: { workspaceId } });
    expect(failure.rawResponse).toBeNull();

    // The question about the purged memory went with it (its only answer record is gone).
    expect((await getQuestionSet(db, workspaceId, "lockers")).questions).toEqual([]);

    // What was not the victim's stays.
    expect(await db.record.count({ where: { pipelineId: chatPipelineId, step: "summaries" } })).toBeGreaterThan(0);
    expect(await db.record.count({ where: { pipelineId, step: "memories" } })).toBeGreaterThan(0);
  }, 240_000);
});
