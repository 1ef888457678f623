/**
 * The upload route handler (app/api/v1/pipelines/[pipelineId]/sources/[source]/upload): session
 * auth, membership and `pipelines:write`, multipart streaming into `importFile`, idempotence.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { TestDb } from "@/server/store/test-db";

const session = vi.hoisted(() => ({ user: null as { userId: string; email: string } | null, db: null as unknown }));
vi.mock("@/server/auth/session", () => ({ getSessionUser: async () => session.user }));
vi.mock("@/server/store/db", () => ({ getDb: async () => session.db }));

const { createTestDb } = await import("@/server/store/test-db");
const { signUp } = await import("@/server/services/users");
const { createPipeline } = await import("@/server/services/pipelines");
const { templateSpec } = await import("@/server/pipeline/templates");
const { POST } = await import("@/app/api/v1/pipelines/[pipelineId]/sources/[source]/upload/route");

const fixture = readFileSync(path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json"));

function upload(pipelineId: string, source = "chats", name = "conversations.json", content: BlobPart = fixture, format?: string) {
  const body = new FormData();
  body.set("file", new Blob([content]), name);
  if (format) body.set("format", format);
  const req = new Request(`http://localhost/api/v1/pipelines/${pipelineId}/sources/${source}/upload`, { method: "POST", body });
  return POST(req, { params: Promise.resolve({ pipelineId, source }) });
}

describe("upload route", () => {
  let t: TestDb;
  let pipelineId: string;
  const users: Record<string, { userId: string; email: string }> = {};

  beforeAll(async () => {
    t = await createTestDb();
    session.db = t.db;
    for (const name of ["owner", "viewer", "stranger"]) {
      const { user } = await signUp(t.db as never, { email: `${name}@example.com`, password: "a-long-password-1" } as never);
      users[name] = { userId: user.id, email: user.email };
    }
    const ws = await t.db.membership.findFirstOrThrow({ where: { userId: users.owner!.userId } });
    await t.db.membership.create({ data: { workspaceId: ws.workspaceId, userId: users.viewer!.userId, role: "viewer" } });
    const created = await createPipeline(t.db as never, ws.workspaceId, {
      name: "hello",
      agent: "",
      description: "",
      spec: templateSpec("chat-memory"),
      authorId: users.owner!.userId,
    } as never);
    pipelineId = created.pipeline.id;
  });
  afterAll(() => t?.close());

  it("needs a session or an API key", async () => {
    session.user = null;
    expect((await upload(pipelineId)).status).toBe(401);
  });

  it("hides pipelines of other workspaces and refuses viewers", async () => {
    session.user = users.stranger!;
    expect((await upload(pipelineId)).status).toBe(404);
    session.user = users.viewer!;
    const res = await upload(pipelineId);
    expect(res.status).toBe(403);
    expect((await res.json()).error.message).toMatch(/pipelines:write/);
  });

  it("a key limited to other pipelines gets the answer of a missing pipeline; a key capped at its creator's viewer role is refused", async () => {
    const { createApiKey } = await import("@/server/services/api-keys");
    const ws = await t.db.membership.findFirstOrThrow({ where: { userId: users.owner!.userId } });
    const other = await createPipeline(t.db as never, ws.workspaceId, { name: "elsewhere", spec: templateSpec("chat-memory") } as never);
    const viaKey = async (key: { secret: string }, ref: string) => {
      const body = new FormData();
      body.set("file", new Blob([fixture]), "conversations.json");
      const req = new Request(`http://localhost/api/v1/pipelines/${ref}/sources/chats/upload`, { method: "POST", body, headers: { authorization: `Bearer ${key.secret}` } });
      const res = await POST(req, { params: Promise.resolve({ pipelineId: ref, source: "chats" }) });
      return { status: res.status, body: (await res.json()) as { error: { message: string } } };
    };
    session.user = null;
    const limited = await createApiKey(t.db as never, ws.workspaceId, { userId: users.owner!.userId, role: "owner" }, { name: "limited", pipelines: ["elsewhere"] });
    const missing = await viaKey(limited, "no-such-pipeline");
    expect(missing.status).toBe(404);
    expect(await viaKey(limited, "hello")).toEqual(missing);
    expect(await viaKey(limited, pipelineId)).toEqual(missing);
    expect(await t.db.record.count({ where: { pipelineId: other.pipeline.id } })).toBe(0);
    // The viewer's editor key acts as a viewer.
    const capped = await createApiKey(t.db as never, ws.workspaceId, { userId: users.viewer!.userId, role: "owner" }, { name: "capped", role: "editor" });
    expect(await viaKey(capped, pipelineId)).toMatchObject({ status: 403, body: { error: { message: expect.stringMatching(/viewer.*pipelines:write/) } } });
  });

  it("imports the file, then adds nothing on a second upload", async () => {
    session.user = users.owner!;
    const first = await upload(pipelineId);
    expect(first.status).toBe(200);
    const report = await first.json();
    expect(report).toMatchObject({ format: "chatgpt-export", received: 5, added: 5, skipped: 0 });
    const again = await (await upload(pipelineId)).json();
    expect(again).toMatchObject({ received: 5, added: 0, unchanged: 5 });
  });

  it("names the sources when the source is unknown", async () => {
    session.user = users.owner!;
    const res = await upload(pipelineId, "nope");
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toMatch(/Sources: chats/);
  });

  it("labels untitled conversations and errors with the uploaded file's name, never the server temp path", async () => {
    session.user = users.owner!;
    const untitled = [
      { id: "untitled-1", title: "", create_time: 1718000000, current_node: "m1", mapping: { m1: { id: "m1", parent: null, children: [], message: { author: { role: "user" }, content: { content_type: "text", parts: ["no title here"] } } } } },
    ];
    const res = await upload(pipelineId, "chats", "my-export.json", JSON.stringify(untitled));
    expect(res.status).toBe(200);
    const record = await t.db.record.findFirstOrThrow({ where: { pipelineId, content: { contains: "no title here" } } });
    expect((record.metadata as { source: { path: string } }).source.path).toBe("my-export.json");
    expect(JSON.stringify(record)).not.toMatch(/synthex-upload|\/tmp\//);

    const bad = await upload(pipelineId, "chats", "broken.json", '[{"mapping": {}, "id": "x"');
    expect(bad.status).toBe(400);
    const { error: { message: error } } = (await bad.json()) as { error: { message: string } };
    expect(error).toMatch(/^broken\.json /);
    expect(error).not.toMatch(/synthex-upload|\/tmp\//);
    const row = await t.db.sourceImport.findFirstOrThrow({ where: { pipelineId, fileName: "broken.json" } });
    expect(row.error).not.toMatch(/synthex-upload|\/tmp\//);
  });

  it("reports an empty .json as empty, not as markdown, and honours a chosen format", async () => {
    session.user = users.owner!;
    const empty = await upload(pipelineId, "chats", "conversations.json", "");
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.message).toMatch(/conversations\.json is empty: expected a ChatGPT or Claude export/);
    const notJson = await upload(pipelineId, "chats", "notes.json", "# just markdown");
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.message).toMatch(/notes\.json is named \.json but is not JSON.*Format menu/);
    // The format picker's choice overrides detection.
    const chosen = await upload(pipelineId, "chats", "notes.json", "# A note\n\nuser: hello from a picked format", "markdown");
    expect(chosen.status).toBe(200);
    expect(await chosen.json()).toMatchObject({ format: "markdown", added: 1 });
  });

  it("refuses an unknown format by name, listing the formats, before anything is stored", async () => {
    session.user = users.owner!;
    const before = await t.db.sourceImport.count({ where: { pipelineId } });
    const res = await upload(pipelineId, "chats", "conversations.json", fixture, "chatgpt-xml");
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toMatch(/Unknown format "chatgpt-xml"\. Formats: chatgpt-export, claude-export,/);
    expect(await t.db.sourceImport.count({ where: { pipelineId } })).toBe(before);
  });
});
