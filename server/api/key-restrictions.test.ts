/**
 * API key restrictions, enforced by every procedure: each procedure of the app router is called
 * with a read-only key and with a key limited to a pipeline and a scope, and must refuse what the
 * key does not allow; the procedures that honour the limits answer inside them only. Real
 * database, real run, the procedures as an agent reaches them (the same context REST and MCP use).
 */
import path from "node:path";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isReadPermission } from "../auth/permissions";
import type { Db } from "../core/db";
import { createApiKey } from "../services/api-keys";
import { settleBackgroundWork } from "../services/background";
import { importFile } from "../services/imports";
import { ingestMessages } from "../services/ingest";
import { createPipeline, templateSpec } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { appRouter, createCaller } from "./root";
import { createContext, type ProcedureMeta } from "./trpc";

const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");
let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let userId: string;
let memoryId: string;
let otherId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "keys@example.com", password: "keys-password-1" });
  workspaceId = workspace.id;
  userId = user.id;
  ({ pipeline: { id: memoryId } } = await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") }));
  ({ pipeline: { id: otherId } } = await createPipeline(db, workspaceId, { name: "other", spec: templateSpec("chat-memory") }));
  await importFile(db, { workspaceId, pipelineId: memoryId, source: "chats", path: fixture });
  for (const [session, scope, text] of [
    ["eng-1", "acme:eng", "The eng team chose Postgres for the billing ledger."],
    ["sales-1", "acme:sales", "The sales team closed the Postgres migration deal with Initech."],
  ] as const) {
    await ingestMessages(db, { workspaceId, pipelineId: memoryId, source: "chats" }, { sessionId: session, scope, messages: [{ role: "user", content: text }], close: true });
  }
  await settleBackgroundWork();
  for (;;) {
    if (!(await db.run.findFirst({ where: { pipelineId: memoryId, status: { in: ["queued", "running"] } } }))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect((await runPipeline(db, { workspaceId, pipelineId: memoryId })).status).toBe("completed");
  await settleBackgroundWork();
}, 180_000);
afterAll(async () => close());

async function keyCaller(input: Parameters<typeof createApiKey>[3]) {
  const key = await createApiKey(db, workspaceId, { userId, role: "owner" }, { role: "admin", ...input });
  return { key, caller: createCaller(await createContext({ db, authorization: `Bearer ${key.secret}` })) };
}

async function failure(promise: Promise<unknown>): Promise<TRPCError | null> {
  return promise.then(
    () => null,
    (e: unknown) => (e instanceof TRPCError ? e : new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: String(e) })),
  );
}

type Procedures = Record<string, { _def: { type: string; meta?: ProcedureMeta } }>;
const procedures = Object.entries(appRouter._def.procedures as unknown as Procedures).filter(([, p]) => p._def.meta?.permission);

/** Calls a procedure by its dotted name with `{}` (the restriction checks run before the procedure's own input). */
function callByName(caller: ReturnType<typeof createCaller>, name: string) {
  const fn = name.split(".").reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], caller) as (input: unknown) => Promise<unknown>;
  return fn({});
}

describe("API key restrictions", () => {
  it("a read-only key is refused by every procedure that writes, and by none that reads", async () => {
    const { caller } = await keyCaller({ name: "reader", readOnly: true });
    expect(procedures.length).toBeGreaterThan(40);
    const refused: string[] = [];
    for (const [name, proc] of procedures) {
      const err = await failure(callByName(caller, name));
      const readOnlyRefusal = err?.code === "FORBIDDEN" && /read-only/.test(err.message);
      expect({ name, refused: readOnlyRefusal }).toEqual({ name, refused: !isReadPermission(proc._def.meta!.permission!) });
      if (readOnlyRefusal) refused.push(name);
    }
    expect(refused).toEqual(expect.arrayContaining(["ingest.messages", "run.start", "pipeline.create", "record.purge", "apiKey.create"]));
    // What it may do, it does.
    const found = await caller.search.search({ pipelineId: "memory", query: "lighthouse key", mode: "fts" });
    expect(found.hits.length).toBeGreaterThan(0);
    const err = await failure(caller.ingest.messages({ pipelineId: "memory", source: "chats", sessionId: "x", messages: [{ role: "user", content: "hi" }] }));
    expect(err).toMatchObject({ code: "FORBIDDEN", message: expect.stringMatching(/read-only: ingest\.messages needs pipelines:write/) });
    expect(await db.ingestSession.count({ where: { sessionId: "x" } })).toBe(0);
  });

  it("a key limited to a pipeline and a scope: procedures that do not honour the limits refuse it; those that do stay inside them", async () => {
    const { caller } = await keyCaller({ name: "eng-agent", pipelines: ["memory"], scopePrefix: "acme:eng" });
    for (const [name, proc] of procedures) {
      const err = await failure(callByName(caller, name));
      const limited = err?.code === "FORBIDDEN" && /limited to some pipelines or a scope/.test(err.message);
      expect({ name, limited }).toEqual({ name, limited: proc._def.meta!.keyRestrictions !== "enforced" });
    }

    // Pipelines: only the allowed one is listed or reachable.
    expect((await caller.pipeline.list({})).map((p) => p.name)).toEqual(["memory"]);
    // A pipeline outside the list answers exactly like one that does not exist (issue 30, item 7).
    const unknown = await failure(caller.search.search({ pipelineId: "no-such-pipeline", query: "x" }));
    const elsewhere = await failure(caller.search.search({ pipelineId: "other", query: "x" }));
    expect(elsewhere).toMatchObject({ code: "NOT_FOUND", message: unknown!.message.replace("no-such-pipeline", "other") });
    expect(await failure(caller.run.start({ pipelineId: otherId }))).toMatchObject({ code: "NOT_FOUND", message: `Pipeline "${otherId}" not found in this workspace.` });
    const otherRun = await runPipeline(db, { workspaceId, pipelineId: otherId });
    const runRefusal = await failure(caller.run.get({ runId: otherRun.id }));
    expect(runRefusal).toMatchObject({ code: "NOT_FOUND", message: `Run ${otherRun.id} not found.` });
    expect(runRefusal!.message).not.toContain("other");

    // Scope: search and ask answer from acme:eng only; acme:sales is refused by name.
    const hits = (await caller.search.search({ pipelineId: "memory", query: "Postgres team", mode: "fts" })).hits;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.scope === "acme:eng" || h.scope.startsWith("acme:eng:"))).toBe(true);
    expect(await failure(caller.search.search({ pipelineId: "memory", query: "Postgres", scope: "acme:sales" }))).toMatchObject({
      code: "FORBIDDEN",
      message: expect.stringMatching(/limited to scope "acme:eng".*"acme:sales" is outside it/),
    });
    // A prefix that merely starts with the same letters is another scope.
    expect(await failure(caller.search.search({ pipelineId: "memory", query: "Postgres", scope: "acme:engineering" }))).toMatchObject({ code: "FORBIDDEN" });
    const packet = await caller.search.ask({ pipelineId: "memory", question: "Which database did the team choose?" });
    expect(packet.evidence.every((e) => e.scope.startsWith("acme:eng"))).toBe(true);
    expect(await failure(caller.search.brief({ pipelineId: "memory", scope: "acme:sales" }))).toMatchObject({ code: "FORBIDDEN" });

    // Records outside the scope answer "not found", like another workspace's.
    const sales = await db.record.findFirstOrThrow({ where: { pipelineId: memoryId, scope: "acme:sales" } });
    const eng = await db.record.findFirstOrThrow({ where: { pipelineId: memoryId, scope: "acme:eng" } });
    for (const read of [caller.record.get, caller.record.sources, caller.record.leaves, caller.record.lineage]) {
      expect(await failure(read({ id: sales.id }))).toMatchObject({ code: "NOT_FOUND" });
    }
    expect((await caller.record.get({ id: eng.id })).scope).toBe("acme:eng");
    const outside = await db.record.findFirstOrThrow({ where: { pipelineId: memoryId, scope: "" } });
    expect(await failure(caller.record.get({ id: outside.id }))).toMatchObject({ code: "NOT_FOUND" });

    // Ingest: a new session lands in the key's scope; an existing session of another scope is refused.
    const ingested = await caller.ingest.messages({ pipelineId: "memory", source: "chats", sessionId: "eng-2", messages: [{ role: "user", content: "standup notes" }] });
    expect(ingested.status).toBe("open");
    expect((await db.ingestSession.findFirstOrThrow({ where: { sessionId: "eng-2" } })).scope).toBe("acme:eng");
    await ingestMessages(db, { workspaceId, pipelineId: memoryId, source: "chats" }, { sessionId: "sales-2", scope: "acme:sales", messages: [{ role: "user", content: "pipeline review" }] });
    // Refused like an id another scope uses in any source (one answer, naming nothing of acme:sales).
    expect(await failure(caller.ingest.messages({ pipelineId: "memory", source: "chats", sessionId: "sales-2", messages: [{ role: "user", content: "x" }] }))).toMatchObject({ code: "FORBIDDEN", message: expect.not.stringContaining("acme:sales") });
    expect(await failure(caller.ingest.session({ pipelineId: "memory", source: "chats", sessionId: "sales-2" }))).toMatchObject({ code: "NOT_FOUND" });
    expect(await db.ingestMessage.count({ where: { content: "x" } })).toBe(0);
  }, 60_000);

  it("creation checks the pipelines named; the list shows every restriction", async () => {
    const owner = createCaller(await createContext({ db, session: { userId, email: "keys@example.com" } }));
    expect(await failure(owner.apiKey.create({ workspaceId, name: "bad", pipelines: ["nope"] }))).toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/no pipeline "nope"/) });
    await owner.apiKey.create({ workspaceId, name: "listed", readOnly: true, pipelines: ["other"], scopePrefix: "acme:ops:" });
    const listed = (await owner.apiKey.list({ workspaceId })).find((k) => k.name === "listed")!;
    expect(listed).toMatchObject({ readOnly: true, pipelines: ["other"], scopePrefix: "acme:ops" });
  });
});
