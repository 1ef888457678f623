/**
 * Issue 30, item 2: API keys belong to the member who made them. Over real HTTP (tRPC, REST and MCP
 * served by the app's own handlers, server/api/testing/route-server.ts) on the embedded database:
 * an admin's admin key stops at once when the admin is removed (revoked in the removal, and refused
 * per request when its creator is not a member by any path), acts as a viewer while its creator is
 * a viewer, and works again up to its own role when they are promoted. A key made with a key
 * belongs to the same member. The key list names each key's creator.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolText } from "@/server/api/testing/route-clients";
import type { AppRouter } from "./root";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-key-ownership-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const { createTRPCClient, httpLink, TRPCClientError } = await import("@trpc/client");
const superjson = (await import("superjson")).default;
const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { createCaller } = await import("@/server/api/root");
const { createContext } = await import("@/server/api/trpc");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { signUp } = await import("@/server/services/users");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { importFile } = await import("@/server/services/imports");

const { requestCacheMs } = await import("@/server/core/ttl-cache");
/** Waits out the request caches' lifetime (at most 1 s). */
const cacheBound = () => new Promise((r) => setTimeout(r, requestCacheMs() + 20));
const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");
type Db = Awaited<ReturnType<typeof openMigratedDb>>;
type Person = { userId: string; email: string };

let db: Db;
let server: Awaited<ReturnType<typeof startRouteServer>>;
let workspaceId = "";
let recordId = "";
let owner: Person;

/** A signed-in person's calls (the web app's own procedures, in process). */
const as = async (p: Person) => createCaller(await createContext({ db, session: p }));

/** An agent's three surfaces, over HTTP with its Bearer key. */
function agent(secret: string) {
  const authorization = `Bearer ${secret}`;
  const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${server.url}/api/trpc`, transformer: superjson, headers: { authorization } })] });
  const rest = async (method: "GET" | "POST", url: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/v1${url}`, {
      method,
      headers: { authorization, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } & Record<string, unknown> };
  };
  /** An MCP tool call with the SDK's own client; the HTTP status when the server refuses the key. */
  const mcp = async (name: string, args: Record<string, unknown>): Promise<{ status: number; text: string }> => {
    const client = new Client({ name: "key-ownership-test", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), { requestInit: { headers: { authorization } } }));
      const result = await client.callTool({ name, arguments: args });
      return { status: result.isError ? 400 : 200, text: toolText(result) };
    } catch (err) {
      const status = Number((err as { code?: number }).code ?? /HTTP (\d{3})/.exec(String(err))?.[1] ?? 0);
      return { status, text: String(err) };
    } finally {
      await client.close();
    }
  };
  return { trpc, rest, mcp };
}

/** The tRPC error's code and HTTP status (null when the call succeeded). */
async function refusal(call: Promise<unknown>): Promise<{ code: string; status: number; message: string } | null> {
  try {
    await call;
    return null;
  } catch (err) {
    if (!(err instanceof TRPCClientError)) throw err;
    const data = (err as InstanceType<typeof TRPCClientError>).data as { code: string; httpStatus: number };
    return { code: data.code, status: data.httpStatus, message: err.message };
  }
}

/** The member row of a person in the workspace. */
const memberId = async (p: Person) => (await db.membership.findFirstOrThrow({ where: { workspaceId, userId: p.userId } })).id;

async function newMember(email: string, role: "admin" | "editor" | "viewer"): Promise<Person> {
  const { user } = await signUp(db, { email, password: `${email}-password` });
  const invite = await (await as(owner)).invite.create({ workspaceId, role });
  await (await as({ userId: user.id, email })).invite.accept({ token: invite.token });
  return { userId: user.id, email };
}

beforeAll(async () => {
  db = await openMigratedDb();
  const signed = await signUp(db, { email: "owner@keys.test", password: "owner-password-1" });
  owner = { userId: signed.user.id, email: signed.user.email };
  workspaceId = signed.workspace.id;
  const { pipeline } = await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") });
  await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: fixture });
  recordId = (await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id } })).id;
  server = await startRouteServer();
}, 120_000);

afterAll(async () => {
  await server?.close();
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("API keys belong to the member who made them", () => {
  it("an admin's admin key: capped while its creator is a viewer, back up to its own role when promoted, dead once they are removed", async () => {
    const ada = await newMember("ada@keys.test", "admin");
    const made = await (await as(ada)).apiKey.create({ workspaceId, name: "ada-admin", role: "admin" });
    const key = agent(made.secret);
    // A key made with Ada's key is Ada's too.
    const child = await key.trpc.apiKey.create.mutate({ name: "ada-child", role: "editor" });
    const childKey = agent(child.secret);

    // As made: the audit log, memory and an admin invite, on every surface.
    expect((await key.rest("GET", "/audit?limit=5")).status).toBe(200);
    expect((await key.trpc.audit.list.query({})).entries.length).toBeGreaterThan(0);
    expect((await key.rest("GET", `/records/${recordId}`)).status).toBe(200);
    expect(await key.mcp("get_record", { id: recordId })).toMatchObject({ status: 200 });
    expect((await key.trpc.invite.create.mutate({ role: "admin" })).role).toBe("admin");

    // The key list names the creator of each key, and what each acts as.
    const listed = async () => (await (await as(owner)).apiKey.list({ workspaceId })).filter((k) => k.name.startsWith("ada-"));
    expect(await listed()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "ada-admin", role: "admin", effectiveRole: "admin", status: "active", createdBy: { id: ada.userId, name: null, email: "ada@keys.test" } }),
        expect.objectContaining({ name: "ada-child", role: "editor", effectiveRole: "editor", status: "active", createdBy: expect.objectContaining({ email: "ada@keys.test" }) }),
      ]),
    );

    // Demoted to viewer: the key reads, and nothing more.
    await (await as(owner)).member.changeRole({ workspaceId, memberId: await memberId(ada), role: "viewer" });
    expect((await key.rest("GET", `/records/${recordId}`)).status).toBe(200);
    expect(await key.mcp("get_record", { id: recordId })).toMatchObject({ status: 200 });
    expect((await key.trpc.pipeline.list.query({})).map((p) => p.name)).toEqual(["memory"]);
    expect(await refusal(key.trpc.audit.list.query({}))).toMatchObject({ code: "FORBIDDEN", status: 403, message: "Your role (viewer) does not allow audit:read." });
    expect(await key.rest("GET", "/audit")).toMatchObject({ status: 403, json: { error: { code: "FORBIDDEN" } } });
    expect(await refusal(key.trpc.invite.create.mutate({ role: "viewer" }))).toMatchObject({ code: "FORBIDDEN", status: 403 });
    expect(await refusal(key.trpc.apiKey.create.mutate({ name: "escape", role: "viewer" }))).toMatchObject({ code: "FORBIDDEN" });
    const write = await key.rest("POST", "/pipelines/memory/sources/chats/messages", { sessionId: "demoted", messages: [{ role: "user", content: "written by a demoted key" }] });
    expect(write).toMatchObject({ status: 403, json: { error: { code: "FORBIDDEN" } } });
    expect((await key.mcp("ingest", { pipeline: "memory", source: "chats", sessionId: "demoted", messages: [{ role: "user", content: "x" }] })).text).toMatch(/^FORBIDDEN: /);
    expect(await refusal(childKey.trpc.run.start.mutate({ pipelineId: "memory" }))).toMatchObject({ code: "FORBIDDEN" });
    expect(await db.ingestSession.count({ where: { sessionId: "demoted" } })).toBe(0);
    expect(await listed()).toEqual(expect.arrayContaining([expect.objectContaining({ name: "ada-admin", role: "admin", effectiveRole: "viewer", status: "active" })]));

    // Promoted to owner: the key works again, up to its own role (admin), never above it.
    await (await as(owner)).member.changeRole({ workspaceId, memberId: await memberId(ada), role: "owner" });
    expect((await key.rest("GET", "/audit")).status).toBe(200);
    expect((await key.trpc.invite.create.mutate({ role: "admin" })).role).toBe("admin");
    expect(await refusal(key.trpc.invite.create.mutate({ role: "owner" }))).toMatchObject({ code: "FORBIDDEN" });
    expect(await refusal(key.trpc.member.changeRole.mutate({ memberId: await memberId(owner), role: "admin" }))).toMatchObject({ code: "FORBIDDEN" });
    await (await as(owner)).member.changeRole({ workspaceId, memberId: await memberId(ada), role: "admin" });

    // Removed: both keys are revoked in the same step, the audit entry says how many, and every surface refuses them.
    const removed = await (await as(owner)).member.remove({ workspaceId, memberId: await memberId(ada) });
    expect(removed.keysRevoked).toBe(2);
    const entry = (await (await as(owner)).audit.list({ workspaceId, action: "member.remove" })).entries[0];
    expect(entry).toMatchObject({ action: "member.remove", summary: { keysRevoked: 2 } });
    for (const k of [key, childKey]) {
      expect(await refusal(k.trpc.audit.list.query({}))).toMatchObject({ code: "UNAUTHORIZED", status: 401, message: "The API key is unknown or has been revoked." });
      expect(await refusal(k.trpc.invite.create.mutate({ role: "admin" }))).toMatchObject({ code: "UNAUTHORIZED", status: 401 });
      expect(await refusal(k.trpc.workspace.current.query())).toMatchObject({ code: "UNAUTHORIZED" });
      expect(await k.rest("GET", "/audit")).toMatchObject({ status: 401, json: { error: { code: "UNAUTHORIZED" } } });
      expect(await k.rest("GET", `/records/${recordId}`)).toMatchObject({ status: 401, json: { error: { code: "UNAUTHORIZED" } } });
      expect((await k.mcp("get_record", { id: recordId })).status).toBe(401);
    }
    expect((await listed()).map((k) => k.status)).toEqual(["revoked", "revoked"]);
  }, 120_000);

  it("a key whose creator is no longer a member is refused per request, even if nothing revoked it", async () => {
    const eve = await newMember("eve@keys.test", "admin");
    const key = agent((await (await as(eve)).apiKey.create({ workspaceId, name: "eve-key", role: "editor" })).secret);
    expect((await key.rest("GET", `/records/${recordId}`)).status).toBe(200);
    const usedAt = (await db.apiKey.findFirstOrThrow({ where: { name: "eve-key" } })).lastUsedAt;
    expect(usedAt).not.toBeNull();

    // The membership goes by a path that revokes nothing (as before this release, or any future one).
    await db.membership.delete({ where: { workspaceId_userId: { workspaceId, userId: eve.userId } } });
    expect((await db.apiKey.findFirstOrThrow({ where: { name: "eve-key" } })).revokedAt).toBeNull();
    // A change behind the services' back is seen once the request caches' bound has passed (server/services/request-context.ts).
    await cacheBound();
    expect(await refusal(key.trpc.pipeline.list.query({}))).toMatchObject({ code: "UNAUTHORIZED", status: 401 });
    expect(await key.rest("GET", `/records/${recordId}`)).toMatchObject({ status: 401 });
    expect((await key.mcp("get_record", { id: recordId })).status).toBe(401);
    // A refused key is not "used".
    expect((await db.apiKey.findFirstOrThrow({ where: { name: "eve-key" } })).lastUsedAt).toEqual(usedAt);
    const listed = (await (await as(owner)).apiKey.list({ workspaceId })).find((k) => k.name === "eve-key");
    expect(listed).toMatchObject({ status: "inactive", effectiveRole: null, createdBy: { email: "eve@keys.test" } });

    // Back in the workspace (as a viewer): the key works again, as a viewer.
    await db.membership.create({ data: { workspaceId, userId: eve.userId, role: "viewer" } });
    await cacheBound();
    expect((await key.rest("GET", `/records/${recordId}`)).status).toBe(200);
    expect(await key.rest("POST", "/pipelines/memory/sources/chats/messages", { sessionId: "eve", messages: [{ role: "user", content: "x" }] })).toMatchObject({ status: 403 });
  }, 60_000);

  it("leaving a workspace revokes the keys one made there, with the count in the audit entry", async () => {
    const max = await newMember("max@keys.test", "admin");
    const made = await (await as(max)).apiKey.create({ workspaceId, name: "max-key", role: "viewer" });
    expect((await agent(made.secret).rest("GET", "/pipelines")).status).toBe(200);
    const members = await (await as(owner)).member.list({ workspaceId });
    expect(members.find((m) => m.user.email === "max@keys.test")).toMatchObject({ apiKeys: 1 });
    expect(await (await as(max)).workspace.leave({ workspaceId })).toEqual({ left: workspaceId, keysRevoked: 1, invitesRevoked: 0 });
    expect((await agent(made.secret).rest("GET", "/pipelines")).status).toBe(401);
    const entry = (await (await as(owner)).audit.list({ workspaceId, action: "member.leave" })).entries[0];
    expect(entry).toMatchObject({ target: `user:${max.userId}`, summary: { keysRevoked: 1 } });
  }, 60_000);
});
