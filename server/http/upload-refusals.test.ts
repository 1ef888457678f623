/**
 * What the upload route refuses, over real HTTP (the route handler behind a Node HTTP server, as
 * `npm start`'s app server hands it requests): a malformed multipart body answers 400 with a plain
 * message (never busboy's words) and keeps nothing; a file whose content contradicts its name and
 * a PDF image bomb answer 400 naming the file (and page), and import nothing.
 */
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { getRequestListener } from "@hono/node-server";
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
const { receiveUpload } = await import("@/server/http/upload-body");
const { imagePdf, textPng } = await import("@/server/importers/testing/media-fixtures");

/** POST raw bytes to the server with the given content type; the answer's status and JSON. */
function post(base: string, urlPath: string, contentType: string, body: Buffer): Promise<{ status: number; json: { error?: { code: string; message: string }; [k: string]: unknown } }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${urlPath}`, { method: "POST", headers: { "content-type": contentType, "content-length": body.length, origin: base } }, async (res) => {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      resolve({ status: res.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const BOUNDARY = "----synthexTestBoundary";
const part = (name: string, filename: string, content: Buffer | string) =>
  Buffer.concat([Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), Buffer.from(content), Buffer.from("\r\n")]);
const form = (...parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)]);
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

describe("upload refusals over HTTP", () => {
  let t: TestDb;
  let server: Server;
  let base: string;
  let pipelineId: string;
  const url = () => `/api/v1/pipelines/${pipelineId}/sources/chats/upload`;
  const counts = async () => ({ imports: await t.db.sourceImport.count({ where: { pipelineId } }), records: await t.db.record.count({ where: { pipelineId } }) });

  beforeAll(async () => {
    t = await createTestDb();
    session.db = t.db;
    const { user } = await signUp(t.db as never, { email: "owner@example.com", password: "a-long-password-1" } as never);
    session.user = { userId: user.id, email: user.email };
    const ws = await t.db.membership.findFirstOrThrow({ where: { userId: user.id } });
    const created = await createPipeline(t.db as never, ws.workspaceId, { name: "hello", agent: "", description: "", spec: templateSpec("chat-memory"), authorId: user.id } as never);
    pipelineId = created.pipeline.id;
    server = createServer(
      getRequestListener((req) => {
        const [, , , , id, , source] = new URL(req.url).pathname.split("/");
        return POST(req, { params: Promise.resolve({ pipelineId: id!, source: source! }) });
      }),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.close();
    await t?.close();
  });

  it("a multipart body that never ends, or has a torn header, answers 400 with a plain message and imports nothing", async () => {
    const before = await counts();
    const unfinished = Buffer.concat([part("file", "chats.jsonl", '{"id":"c1","messages":[{"role":"user","content":"hi"}]}\n').subarray(0, 120)]);
    const torn = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\nthis header line has no colon and never ends`);
    for (const body of [unfinished, torn]) {
      const res = await post(base, url(), MULTIPART, body);
      expect(res.status).toBe(400);
      expect(res.json.error).toEqual({
        code: "BAD_REQUEST",
        message: 'The upload is not a well-formed multipart/form-data body, or it ended early: send the file in a form field named "file" and try again.',
      });
    }
    // A multipart content type without its boundary: busboy refuses to start.
    const noBoundary = await post(base, url(), "multipart/form-data", form(part("file", "a.jsonl", "{}")));
    expect(noBoundary.status).toBe(400);
    expect(noBoundary.json.error!.message).not.toMatch(/boundary not found|Unexpected end|Malformed/i);
    expect(await counts()).toEqual(before);
  });

  it("a .md whose content is a PNG answers 400 naming the file, and imports nothing", async () => {
    const before = await counts();
    const res = await post(base, url(), MULTIPART, form(part("file", "notes.md", await textPng(["Not a note"]))));
    expect(res.status).toBe(400);
    expect(res.json.error!.message).toBe("notes.md is named .md but its content is a PNG image; rename it to match, or choose its format.");
    expect((await counts()).records).toBe(before.records);
  });

  it("a PDF holding an image over the pixel limit answers 400 naming the file and page, quickly, and imports nothing", async () => {
    const before = await counts();
    const started = Date.now();
    const res = await post(base, url(), MULTIPART, form(part("file", "scan.pdf", Buffer.from(await imagePdf({ width: 8000, height: 8000, textPages: 2 })))));
    expect(res.status).toBe(400);
    expect(res.json.error!.message).toBe("scan.pdf, page 3: embedded image 8000×8000 (64 MP) is over the 50 MP limit (SYNTHEX_IMPORT_MAX_PIXELS).");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await counts()).records).toBe(before.records);
  });
});

describe("receiveUpload keeps nothing half-written", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "synthex-upload-test-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const limit = { bytes: 1 << 20, setting: "SYNTHEX_MAX_UPLOAD_BYTES" };
  const streamOf = (...chunks: Buffer[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(new Uint8Array(chunk));
        c.close();
      },
    });

  it("removes the partly written file of a multipart body that breaks off after 64 KB of the file", async () => {
    const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n`);
    await expect(receiveUpload(streamOf(head, Buffer.alloc(64 * 1024, 0x61)), MULTIPART, dir, limit as never)).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await readdir(dir)).toEqual([]);
  });

  it("removes the partly written file of a raw body whose stream fails", async () => {
    let sent = false;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent) return c.error(new Error("socket hang up"));
        sent = true;
        c.enqueue(new Uint8Array(64 * 1024));
      },
    });
    await expect(receiveUpload(failing, "application/octet-stream", dir, limit as never, "raw.jsonl")).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(await readdir(dir)).toEqual([]);
  });
});
