/**
 * A purge removes the question and expected answer of eval cases whose question came from the
 * purged data (server/store/purge-copies.ts): a team question set picked on records of a scope, or
 * labelled from a logged query of it. Before, a scope purge (`POST …/pipelines/{id}/purge`) or a
 * record purge left each case's `question` and `gold` for any viewer to read through `evals.case`.
 * The case row stays (ids, scores: the run's metrics do not move); its text is replaced. The dry
 * run counts exactly the cases the purge rewrites. On the embedded database; the purges go through
 * the REST handler with an admin key, the reads through a viewer's tRPC calls.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { addToQuestionSet, getQuestionSet } from "../eval/question-sets";
import { labelLoggedQuery } from "../eval/replay";
import { runEval } from "../eval/service";
import { handleRest } from "../api/rest";
import { appRestEndpoints } from "../api/rest-app";
import { appRouter, createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import { PURGED_TEXT } from "../store/purge-copies";
import { createTestDb } from "../store/test-db";
import { createApiKey } from "./api-keys";
import { importFile } from "./imports";
import { createPipeline, templateSpec } from "./pipelines";
import { purgeRecord, purgeScope, type PurgeResult } from "./purge";
import { signUp } from "./users";

const TOKEN = `zq${randomBytes(5).toString("hex")}x`;
const dir = mkdtempSync(path.join(tmpdir(), "synthex-purge-eval-questions-"));

let db: Db;
let close: () => Promise<void>;
let workspaceId = "";
let pipelineId = "";
let secret = "";
let viewer: ReturnType<typeof createCaller>;
/** The source record (a conversation) of each id in the imported file. */
const conversation: Record<string, string> = {};

async function purgeOverRest(url: string, body: unknown): Promise<PurgeResult> {
  const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  const req = new Request(`http://localhost/api/v1${url}`, { method: "POST", headers, body: JSON.stringify(body) });
  const res = await handleRest({ router: appRouter, endpoints: appRestEndpoints(), req, path: url, createContext: () => createContext({ db, authorization: headers.authorization }) });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as PurgeResult;
}

/** Scores a question set and returns its cases by question text. */
async function evalCases(set: string) {
  const run = await runEval(db, { workspaceId, pipeline: pipelineId, questionSet: set, mode: "fts" });
  expect(run.status).toBe("completed");
  const cases = await db.evalCase.findMany({ where: { evalRunId: run.id }, orderBy: { position: "asc" } });
  return { runId: run.id, cases };
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "purge-questions@example.com", password: "purge-questions-password" });
  workspaceId = workspace.id;
  secret = (await createApiKey(db, workspaceId, { userId: user.id, role: "owner" }, { name: "agent", role: "admin" })).secret;
  const reader = await signUp(db, { email: "viewer@example.com", password: "purge-questions-viewer" });
  await db.membership.create({ data: { workspaceId, userId: reader.user.id, role: "viewer" } });
  viewer = createCaller(await createContext({ db, session: { userId: reader.user.id, email: reader.user.email } }));
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") }));
  const file = path.join(dir, "people.jsonl");
  const line = (id: string, scope: string, text: string) => JSON.stringify({ id, scope, messages: [{ role: "user", content: text }, { role: "assistant", content: "Noted." }] });
  writeFileSync(
    file,
    [
      line("victim-1", "acme:victim", `My locker is number ${TOKEN}-locker.`),
      line("victim-2", "acme:victim", "I park on level three."),
      line("kept-1", "acme:kept", "The team lunch is on Fridays."),
      line("kept-2", "acme:kept", "The printer is on the second floor."),
      line("logged-1", "acme:logged", "Deliveries arrive at the back door."),
    ].join("\n"),
  );
  expect((await importFile(db, { workspaceId, pipelineId, source: "chats", path: file, format: "jsonl" })).added).toBe(5);
  for (const r of await db.record.findMany({ where: { pipelineId, step: "chats" }, select: { id: true, content: true, scope: true } })) {
    const key = r.content.includes(`${TOKEN}-locker`) ? "victim-1" : r.content.includes("level three") ? "victim-2" : r.content.includes("lunch") ? "kept-1" : r.content.includes("printer") ? "kept-2" : "logged-1";
    conversation[key] = r.id;
  }
  expect(Object.keys(conversation).sort()).toEqual(["kept-1", "kept-2", "logged-1", "victim-1", "victim-2"]);
}, 120_000);

afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

describe("purge removes the question and expected answer of eval cases about the purged data", () => {
  it("a scope purge (REST): the case picked on the scope's records loses question and gold to a viewer's evals.case; the dry run counts it; other cases stay", async () => {
    await addToQuestionSet(db, workspaceId, { set: "lockers", question: `Which locker is ${TOKEN}-question?`, answer: `${TOKEN}-gold`, recordIds: [conversation["victim-1"]!] });
    await addToQuestionSet(db, workspaceId, { set: "lockers", question: "When is the team lunch?", answer: "Fridays", recordIds: [conversation["kept-1"]!] });
    const { runId, cases } = await evalCases("lockers");
    const victimCase = cases.find((c) => c.question.includes(TOKEN))!;
    const keptCase = cases.find((c) => c.question === "When is the team lunch?")!;
    const before = await viewer.evals.case({ workspaceId, id: victimCase.id });
    expect(before).toMatchObject({ question: `Which locker is ${TOKEN}-question?`, gold: `${TOKEN}-gold` });

    const dry = await purgeScope(db, { workspaceId, actor: "user:test", dryRun: true }, pipelineId, "acme:victim");
    const purged = await purgeOverRest(`/pipelines/${pipelineId}/purge`, { scope: "acme:victim", dryRun: false });

    const after = await viewer.evals.case({ workspaceId, id: victimCase.id });
    expect(JSON.stringify(after)).not.toContain(TOKEN);
    expect(after).toMatchObject({ question: PURGED_TEXT, gold: PURGED_TEXT, scores: before.scores, questionId: before.questionId });
    // The dry run counted that case, and the purge rewrote what the dry run counted.
    expect(dry.copies.evalCases).toBe(1);
    expect(purged.copies).toEqual(dry.copies);
    // The other scope's case is as it was, and the run keeps every case (its metrics do not move).
    expect(await viewer.evals.case({ workspaceId, id: keptCase.id })).toMatchObject({ question: "When is the team lunch?", gold: "Fridays" });
    expect(await db.evalCase.count({ where: { evalRunId: runId } })).toBe(2);
    // Nothing is left to redact: a second dry run counts no case.
    expect((await purgeScope(db, { workspaceId, actor: "user:test", dryRun: true }, pipelineId, "acme:victim")).copies.evalCases).toBe(0);
    expect(await db.evalCase.count({ where: { workspaceId, OR: [{ question: { contains: TOKEN } }, { gold: { contains: TOKEN } }] } })).toBe(0);
  }, 120_000);

  it("a record purge (REST): the case whose picked record is purged loses question and gold", async () => {
    await addToQuestionSet(db, workspaceId, { set: "printers", question: `Where is the ${TOKEN}-printer?`, answer: `${TOKEN}-second-floor`, recordIds: [conversation["kept-2"]!] });
    const { cases } = await evalCases("printers");
    const id = cases[0]!.id;
    expect((await viewer.evals.case({ workspaceId, id })).gold).toBe(`${TOKEN}-second-floor`);

    const dry = await purgeRecord(db, { workspaceId, actor: "user:test", dryRun: true }, conversation["kept-2"]!);
    const purged = await purgeOverRest(`/records/${conversation["kept-2"]}/purge`, {});
    const after = await viewer.evals.case({ workspaceId, id });
    expect(JSON.stringify(after)).not.toContain(TOKEN);
    expect(after).toMatchObject({ question: PURGED_TEXT, gold: PURGED_TEXT });
    expect(dry.copies.evalCases).toBe(1);
    expect(purged.copies).toEqual(dry.copies);
  }, 120_000);

  it("a question labelled from a logged query of the purged scope (its label in another scope) leaves the set, and its cases lose question and gold", async () => {
    await db.queryLogConfig.create({ data: { workspaceId, pipelineId, enabled: true } });
    const entry = await db.queryLogEntry.create({
      data: { workspaceId, pipelineId, surface: "rest", kind: "search", caller: "user:x", scope: "acme:logged", query: ` Where do ${TOKEN}-deliveries arrive? `, branch: "main", latencyMs: 1, recordIds: [], cited: [] },
    });
    // The record that should have come first is in another scope (the scope purge does not take it).
    await labelLoggedQuery(db, workspaceId, { pipelineId, entryId: entry.id, recordId: conversation["kept-1"]!, set: "deliveries" });
    await addToQuestionSet(db, workspaceId, { set: "deliveries", question: "When is lunch?", recordIds: [conversation["kept-1"]!] });
    const { cases } = await evalCases("deliveries");
    const logged = cases.find((c) => c.question.includes(TOKEN))!;
    expect(logged).toBeTruthy();

    const dry = await purgeScope(db, { workspaceId, actor: "user:test", dryRun: true }, pipelineId, "acme:logged");
    const purged = await purgeOverRest(`/pipelines/${pipelineId}/purge`, { scope: "acme:logged", dryRun: false });
    expect(await db.queryLogEntry.count({ where: { id: entry.id } })).toBe(0);

    const after = await viewer.evals.case({ workspaceId, id: logged.id });
    expect(JSON.stringify(after)).not.toContain(TOKEN);
    expect(after.question).toBe(PURGED_TEXT);
    // The set keeps the question a person typed, not the purged logged one.
    expect((await getQuestionSet(db, workspaceId, "deliveries")).questions.map((q) => q.question)).toEqual(["When is lunch?"]);
    expect(dry.copies).toMatchObject({ evalCases: 1, questions: 1 });
    expect(purged.copies).toEqual(dry.copies);
    expect(await db.evalCase.count({ where: { workspaceId, question: "When is lunch?" } })).toBe(1);
  }, 120_000);
});
