/**
 * Quick add (issue 35): `POST /api/v1/pipelines/{pipelineId}/sources/{source}/items` through the
 * real REST route handler on a real embedded database. A note is stored as a source item, the
 * incremental run it requests makes it findable; the same note twice adds nothing; a scope-limited
 * key adds only inside its scope; a read-only key is refused; bad input says what is wrong; the
 * audit entry holds no content; the MCP `add_note` tool adds one too.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, mcpClient, restCaller, toolText } from "@/server/api/testing/route-clients";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-quick-add-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;
delete process.env.SYNTHEX_EXECUTOR;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline } = await import("@/server/services/pipelines");
const { templateSpec } = await import("@/server/pipeline/templates");
const { settleBackgroundWork } = await import("@/server/services/background");
const restRoute = await import("@/app/api/v1/[...path]/route");
const mcpRoute = await import("@/app/api/mcp/route");

type Db = Awaited<ReturnType<typeof openMigratedDb>>;

const call = restCaller(restRoute);

const NOTE = "The quokka-7 vault code is kept in the blue binder on the third shelf.";

describe("quick add over REST", () => {
  let db: Db;
  let workspaceId = "";
  let userId = "";
  let pipelineId = "";
  let owner = "";
  const add = (key: string, body: unknown, pipeline = pipelineId) => call("POST", `/pipelines/${pipeline}/sources/chats/items`, key, body);
  const notes = () => db.record.count({ where: { pipelineId, step: "chats", metadata: { path: ["kind"], equals: "note" } } });

  async function runsSettled() {
    await settleBackgroundWork();
    const deadline = Date.now() + 120_000;
    while (await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } } })) {
      if (Date.now() > deadline) throw new Error("the requested run did not finish in 120 s");
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  beforeAll(async () => {
    db = await openMigratedDb();
    const { user, workspace } = await signUp(db, { email: "quick@example.com", password: "a-long-password-1" });
    workspaceId = workspace.id;
    userId = user.id;
    pipelineId = (await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") })).pipeline.id;
    await createPipeline(db, workspaceId, { name: "other", spec: templateSpec("chat-memory") });
    owner = (await createApiKey(db, workspaceId, { userId, role: "owner" }, { name: "owner agent", role: "admin" })).secret;
  }, 120_000);

  afterAll(async () => {
    await settleBackgroundWork();
    await closeDb();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("adds a note as a source item, the run it requests makes it findable, and the same note twice adds nothing", async () => {
    const first = await add(owner, { text: `  ${NOTE}\n`, title: "Vault", url: "https://wiki.example.com/vault" });
    expect(first).toMatchObject({ status: 200, json: { added: true, runRequested: true, scope: "", source: "chats", pipelineId } });
    const record = await db.record.findUniqueOrThrow({ where: { id: first.json.recordId as string } });
    expect(record.content).toBe(`# Vault\n\nhttps://wiki.example.com/vault\n\n${NOTE}`);
    expect(record.metadata).toMatchObject({ modality: "text", kind: "note", chat: { title: "Vault" }, source: { type: "note", path: expect.stringMatching(/^note:[0-9a-f]{12}$/), url: "https://wiki.example.com/vault" } });
    await runsSettled();
    expect((await db.run.findFirstOrThrow({ where: { pipelineId }, orderBy: { createdAt: "desc" } })).status).toBe("completed");

    const found = await call("POST", `/pipelines/${pipelineId}/search`, owner, { query: "quokka-7 vault code", mode: "fts" });
    expect(found.status).toBe(200);
    const hits = found.json.hits as Array<{ content: string; step: string }>;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.some((h) => h.content.includes("quokka-7"))).toBe(true);

    const again = await add(owner, { text: NOTE, title: "Vault", url: "https://wiki.example.com/vault" });
    expect(again).toMatchObject({ status: 200, json: { added: false, runRequested: false, recordId: first.json.recordId } });
    expect(await notes()).toBe(1);
    expect(await db.run.count({ where: { pipelineId } })).toBe(1);

    // The audit entry names the record and counts, never the note's text, title or url.
    const entries = await db.auditEvent.findMany({ where: { workspaceId, action: "source.addNote" } });
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ target: `pipeline:${pipelineId}/source:chats` });
    const logged = JSON.stringify(entries);
    for (const secret of ["quokka", "Vault", "wiki.example.com"]) expect(logged).not.toContain(secret);
  }, 180_000);

  it("says what is wrong with bad input, and stores nothing", async () => {
    const before = await notes();
    expect(await add(owner, { text: "   \n " })).toMatchObject({ status: 400, json: { error: { code: "BAD_REQUEST", path: "text", message: expect.stringMatching(/note is empty/) } } });
    expect(await add(owner, { text: "x".repeat(100_001) })).toMatchObject({ status: 400, json: { error: { path: "text", message: expect.stringMatching(/at most 100,000 characters/) } } });
    expect(await add(owner, { text: "fine", url: "javascript:alert(1)" })).toMatchObject({ status: 400, json: { error: { path: "url" } } });
    expect(await call("POST", `/pipelines/${pipelineId}/sources/nope/items`, owner, { text: "fine" })).toMatchObject({ status: 404, json: { error: { message: expect.stringMatching(/Source "nope" is not in this pipeline/) } } });
    expect(await notes()).toBe(before);
  });

  it("a scope-limited key adds only inside its scope and pipelines; a read-only key is refused", async () => {
    const scoped = (await createApiKey(db, workspaceId, { userId, role: "owner" }, { name: "eng", role: "admin", pipelines: ["memory"], scopePrefix: "acme:eng" })).secret;
    const inPrefix = await add(scoped, { text: "Eng note: the deploy window is Tuesday." });
    expect(inPrefix).toMatchObject({ status: 200, json: { added: true, scope: "acme:eng" } });
    expect((await db.record.findUniqueOrThrow({ where: { id: inPrefix.json.recordId as string } })).scope).toBe("acme:eng");
    expect(await add(scoped, { text: "Eng team note.", scope: "acme:eng:team-a" })).toMatchObject({ status: 200, json: { scope: "acme:eng:team-a" } });
    const outside = await add(scoped, { text: "Sales note.", scope: "acme:sales" });
    expect(outside).toMatchObject({ status: 403, json: { error: { message: expect.stringMatching(/limited to scope "acme:eng".*"acme:sales" is outside it/) } } });
    expect(await add(scoped, { text: "Elsewhere." }, "other")).toMatchObject({ status: 404 });

    const reader = (await createApiKey(db, workspaceId, { userId, role: "owner" }, { name: "reader", role: "admin", readOnly: true })).secret;
    expect(await add(reader, { text: "A reader's note." })).toMatchObject({ status: 403, json: { error: { message: expect.stringMatching(/read-only: ingest\.addItem needs pipelines:write/) } } });
    const stored = await db.record.findMany({ where: { step: "chats", metadata: { path: ["kind"], equals: "note" } }, select: { content: true, scope: true, pipelineId: true } });
    expect(stored.map((r) => r.content)).not.toEqual(expect.arrayContaining([expect.stringMatching(/Sales note|Elsewhere|reader's note/)]));
    await runsSettled();
  }, 180_000);

  it("the MCP add_note tool adds a note with the caller's key", async () => {
    const client = await mcpClient(mcpRoute, owner, "test-agent");
    const result = await client.callTool({ name: "add_note", arguments: { pipeline: "memory", source: "chats", text: "Via MCP: the standup moved to 9:30.", title: "Standup" } });
    expect(result.isError).toBeFalsy();
    const out = JSON.parse(toolText(result)) as Json;
    expect(out).toMatchObject({ added: true });
    expect((await db.record.findUniqueOrThrow({ where: { id: out.recordId as string } })).content).toContain("standup moved to 9:30");
    await client.close();
    await runsSettled();
  }, 120_000);
});
