/**
 * Body limits and authentication order on the app's route handlers, called as Next calls them
 * (a web Request in, a Response out): tRPC, next-auth and the upload route.
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
const trpcRoute = await import("@/app/api/trpc/[trpc]/route");
const authRoute = await import("@/app/api/auth/[...nextauth]/route");
const uploadRoute = await import("@/app/api/v1/pipelines/[pipelineId]/sources/[source]/upload/route");

const MiB = 1024 * 1024;
const fixture = readFileSync(path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json"));

/** A body of `size` bytes sent in 64 KiB chunks with no Content-Length; `pulled()` says whether anyone read it. */
function streamedBody(size: number) {
  let sent = 0;
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      if (sent >= size) return controller.close();
      const n = Math.min(64 * 1024, size - sent);
      sent += n;
      controller.enqueue(new Uint8Array(n).fill(0x61));
    },
  }, { highWaterMark: 0 }); // nothing is produced until someone reads
  return { stream, pulled: () => pulls > 0, sent: () => sent };
}

function signUpRequest(body: BodyInit, headers: Record<string, string> = {}) {
  return new Request("http://localhost/api/trpc/user.signUp", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
    duplex: "half",
  } as RequestInit);
}

describe("request body limits", () => {
  let t: TestDb;
  let pipelineId: string;
  let owner: { userId: string; email: string };

  beforeAll(async () => {
    process.env.SYNTHEX_MAX_UPLOAD_BYTES = String(256 * 1024);
    t = await createTestDb();
    session.db = t.db;
    const { user } = await signUp(t.db as never, { email: "owner@example.com", password: "a-long-password-1" } as never);
    owner = { userId: user.id, email: user.email };
    const ws = await t.db.membership.findFirstOrThrow({ where: { userId: user.id } });
    const created = await createPipeline(t.db as never, ws.workspaceId, {
      name: "hello",
      agent: "",
      description: "",
      spec: templateSpec("chat-memory"),
      authorId: user.id,
    } as never);
    pipelineId = created.pipeline.id;
  });
  afterAll(async () => {
    delete process.env.SYNTHEX_MAX_UPLOAD_BYTES;
    await t?.close();
  });

  it("tRPC: a small request still works", async () => {
    const res = await trpcRoute.POST(signUpRequest(JSON.stringify({ json: { email: "new@example.com", password: "a-long-password-2" } })));
    expect(res.status).toBe(200);
    expect((await res.json()).result.data.json.message).toMatch(/your account is ready/);
  });

  it("tRPC: a declared 50 MB body is refused with 413 before it is read", async () => {
    const body = streamedBody(50 * MiB);
    const res = await trpcRoute.POST(signUpRequest(body.stream, { "content-length": String(50 * MiB) }));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: "The request body is larger than the limit of 1 MiB (SYNTHEX_MAX_BODY_BYTES).",
      code: "PAYLOAD_TOO_LARGE",
      limitBytes: MiB,
      setting: "SYNTHEX_MAX_BODY_BYTES",
    });
    expect(body.pulled()).toBe(false);
  });

  it("tRPC: an undeclared (chunked) body is cut off at the limit while streaming", async () => {
    const body = streamedBody(50 * MiB);
    const users = await t.db.user.count();
    const res = await trpcRoute.POST(signUpRequest(body.stream));
    expect(res.status).toBe(413);
    expect((await res.json()).error).toMatch(/limit of 1 MiB/);
    expect(body.sent()).toBeLessThanOrEqual(MiB + 2 * 64 * 1024); // stopped reading just past the limit
    expect(await t.db.user.count()).toBe(users);
  });

  it("auth (next-auth): an oversized sign-in body gets 413", async () => {
    const body = streamedBody(2 * MiB);
    const req = new Request("http://localhost/api/auth/callback/credentials", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: body.stream,
      duplex: "half",
    } as RequestInit);
    const res = await authRoute.POST(req as never, { params: Promise.resolve({ nextauth: ["callback", "credentials"] }) });
    expect(res.status).toBe(413);
    expect((await res.json()).setting).toBe("SYNTHEX_MAX_BODY_BYTES");
  });

  const uploadUrl = () => `http://localhost/api/v1/pipelines/${pipelineId}/sources/chats/upload`;
  const uploadParams = () => ({ params: Promise.resolve({ pipelineId, source: "chats" }) });

  it("upload: an unauthenticated request is refused before its body is read", async () => {
    session.user = null;
    const body = streamedBody(10 * MiB);
    const res = await uploadRoute.POST(new Request(uploadUrl(), { method: "POST", body: body.stream, duplex: "half" } as RequestInit), uploadParams());
    expect(res.status).toBe(401);
    expect(body.pulled()).toBe(false);
  });

  it("upload: a declared oversized body gets 413 before it is read", async () => {
    session.user = owner;
    const body = streamedBody(10 * MiB);
    const res = await uploadRoute.POST(
      new Request(`${uploadUrl()}?filename=big.jsonl`, { method: "POST", headers: { "content-length": String(10 * MiB) }, body: body.stream, duplex: "half" } as RequestInit),
      uploadParams(),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE", message: "The request body is larger than the limit of 256 KiB (SYNTHEX_MAX_UPLOAD_BYTES)." } });
    expect(body.pulled()).toBe(false);
  });

  it("upload: a streamed multipart file over the limit gets 413 and imports nothing; one under it imports", async () => {
    session.user = owner;
    const big = new FormData();
    big.set("file", new Blob([new Uint8Array(400 * 1024).fill(0x61)]), "conversations.json");
    const form = new Request(uploadUrl(), { method: "POST", body: big });
    // Re-send the multipart body as a stream with no Content-Length (chunked).
    const chunked = new Request(uploadUrl(), { method: "POST", headers: { "content-type": form.headers.get("content-type")! }, body: form.body, duplex: "half" } as RequestInit);
    const res = await uploadRoute.POST(chunked, uploadParams());
    expect(res.status).toBe(413);
    // The agent API's error shape.
    expect(await res.json()).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE", message: expect.stringMatching(/limit of 256 KiB/), limitBytes: 256 * 1024 } });
    expect(await t.db.sourceImport.count()).toBe(0);

    const small = new FormData();
    small.set("file", new Blob([fixture]), "conversations.json");
    const ok = await uploadRoute.POST(new Request(uploadUrl(), { method: "POST", body: small }), uploadParams());
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ format: "chatgpt-export", added: 5 });
  });
});
