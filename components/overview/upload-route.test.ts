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
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { POST } = await import("@/app/api/v1/pipelines/[pipelineId]/sources/[source]/upload/route");

const fixture = readFileSync(path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json"));

function upload(pipelineId: string, source = "chats", name = "conversations.json") {
  const body = new FormData();
  body.set("file", new Blob([fixture]), name);
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
    expect((await res.json()).error).toMatch(/pipelines:write/);
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
    expect((await res.json()).error).toMatch(/Sources: chats/);
  });
});
