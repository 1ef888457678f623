/**
 * Cross-site writes signed in by the session cookie (CSRF) and the Host check, through the app's
 * route handlers called as Next calls them: REST `/api/v1`, the upload route, tRPC and MCP. The
 * session lookup is replaced (there is no Next request scope here); the requests carry the
 * cookie header the guard looks at, as a browser's would.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { TestDb } from "@/server/store/test-db";

const session = vi.hoisted(() => ({ user: null as { userId: string; email: string } | null, db: null as unknown }));
vi.mock("@/server/auth/session", () => ({ getSessionUser: async () => session.user }));
vi.mock("@/server/store/db", () => ({ getDb: async () => session.db }));

const { createTestDb } = await import("@/server/store/test-db");
const { signUp } = await import("@/server/services/users");
const { createPipeline } = await import("@/server/services/pipelines");
const { createApiKey } = await import("@/server/services/api-keys");
const { templateSpec } = await import("@/server/pipeline/templates");
const { crossSiteRefusal, hostRefusal } = await import("./csrf");
const restRoute = await import("@/app/api/v1/[...path]/route");
const uploadRoute = await import("@/app/api/v1/pipelines/[pipelineId]/sources/[source]/upload/route");
const trpcRoute = await import("@/app/api/trpc/[trpc]/route");
const mcpRoute = await import("@/app/api/mcp/route");

const APP = "http://localhost:3123";
const COOKIE = "next-auth.session-token=eyJhbGciOiJkaXIi.test";

describe("cookie-signed writes from other origins", () => {
  let t: TestDb;
  let workspaceId: string;
  let pipelineId: string;
  let apiKey: string;
  let owner: { userId: string; email: string };

  beforeAll(async () => {
    process.env.NEXTAUTH_URL = APP;
    t = await createTestDb();
    session.db = t.db;
    const { user } = await signUp(t.db as never, { email: "owner@example.com", password: "a-long-password-1" } as never);
    owner = { userId: user.id, email: user.email };
    workspaceId = (await t.db.membership.findFirstOrThrow({ where: { userId: user.id } })).workspaceId;
    const created = await createPipeline(t.db as never, workspaceId, { name: "hello", agent: "", description: "", spec: templateSpec("chat-memory"), authorId: user.id } as never);
    pipelineId = created.pipeline.id;
    apiKey = (await createApiKey(t.db as never, workspaceId, { userId: user.id, role: "owner" }, { name: "agent", role: "admin" })).secret;
    session.user = owner;
  });
  afterAll(async () => {
    delete process.env.NEXTAUTH_URL;
    await t?.close();
  });

  const sessions = () => t.db.ingestSession.count({ where: { pipelineId } });

  /** POST /api/v1/pipelines/{id}/sources/chats/messages, a write of a memory. */
  function ingest(headers: Record<string, string>, body: unknown = { workspaceId, pipelineId, sessionId: `s-${Math.random()}`, messages: [{ role: "user", content: "hello" }] }) {
    return restRoute.POST(new Request(`${APP}/api/v1/pipelines/${pipelineId}/sources/chats/messages`, { method: "POST", headers: { host: "localhost:3123", ...headers }, body: JSON.stringify(body) }));
  }

  it("REST: cookie + text/plain (what a form or a no-cors fetch sends) is refused, nothing is written", async () => {
    const before = await sessions();
    // From another port of the same host, as the browser sends it.
    const crossPort = await ingest({ cookie: COOKIE, "content-type": "text/plain", origin: "http://localhost:3304", "sec-fetch-site": "same-site" });
    expect(crossPort.status).toBe(403);
    expect((await crossPort.json()).error).toMatchObject({ code: "CROSS_SITE_REQUEST", message: expect.stringMatching(/same-site request signed in by the session cookie/) });
    // Same origin, but a body type a plain form can send: 415.
    const plain = await ingest({ cookie: COOKIE, "content-type": "text/plain", origin: APP });
    expect(plain.status).toBe(415);
    expect((await plain.json()).error).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", message: expect.stringMatching(/must send its body as application\/json, not "text\/plain"/) });
    const form = await ingest({ cookie: COOKIE, "content-type": "application/x-www-form-urlencoded", origin: APP });
    expect(form.status).toBe(415);
    expect(await sessions()).toBe(before);
  });

  it("REST: cookie + JSON from a foreign Origin is refused with 403 naming the origins", async () => {
    const before = await sessions();
    const res = await ingest({ cookie: COOKIE, "content-type": "application/json", origin: "http://localhost:3304" });
    expect(res.status).toBe(403);
    expect((await res.json()).error.message).toMatch(/from Origin http:\/\/localhost:3304, which is not the app's \(http:\/\/localhost:3123\)/);
    const evil = await ingest({ cookie: COOKIE, "content-type": "application/json", origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    const nullOrigin = await ingest({ cookie: COOKIE, "content-type": "application/json", origin: "null" });
    expect(nullOrigin.status).toBe(403);
    expect(await sessions()).toBe(before);
  });

  it("REST: Sec-Fetch-Site cross-site (or same-site) is refused even without Origin; neither header is refused too", async () => {
    for (const site of ["cross-site", "same-site", "none"]) {
      const res = await ingest({ cookie: COOKIE, "content-type": "application/json", "sec-fetch-site": site });
      expect(res.status, site).toBe(403);
      expect((await res.json()).error.message).toContain(`Sec-Fetch-Site: ${site}`);
    }
    const bare = await ingest({ cookie: COOKIE, "content-type": "application/json" });
    expect(bare.status).toBe(403);
    expect((await bare.json()).error.message).toMatch(/neither an Origin header nor Sec-Fetch-Site: same-origin/);
  });

  it("REST: cookie + JSON from the app's origin is served (by Origin, by Sec-Fetch-Site, or by the request's own Host)", async () => {
    const before = await sessions();
    const byOrigin = await ingest({ cookie: COOKIE, "content-type": "application/json; charset=utf-8", origin: APP, "sec-fetch-site": "same-origin" });
    expect(byOrigin.status, await byOrigin.clone().text()).toBe(200);
    expect(await byOrigin.json()).toMatchObject({ accepted: 1, status: "open" });
    const byFetchSite = await ingest({ cookie: COOKIE, "content-type": "application/json", "sec-fetch-site": "same-origin" });
    expect(byFetchSite.status).toBe(200);
    // Opened as http://127.0.0.1:3123 while NEXTAUTH_URL says localhost: the Origin is the request's own Host.
    const byHost = await ingest({ cookie: COOKIE, "content-type": "application/json", origin: "http://127.0.0.1:3123", host: "127.0.0.1:3123" });
    expect(byHost.status).toBe(200);
    expect(await sessions()).toBe(before + 3);
  });

  it("REST: purge by cookie from another port is refused; with a Bearer key and no Origin it runs", async () => {
    const url = `${APP}/api/v1/pipelines/${pipelineId}/purge`;
    const body = JSON.stringify({ workspaceId, scope: "acme", dryRun: true });
    const cross = await restRoute.POST(new Request(url, { method: "POST", headers: { host: "localhost:3123", cookie: COOKIE, "content-type": "text/plain", origin: "http://localhost:3304" }, body }));
    expect(cross.status).toBe(403);
    const agent = await restRoute.POST(new Request(url, { method: "POST", headers: { host: "localhost:3123", authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body }));
    expect(agent.status, await agent.clone().text()).toBe(200);
    expect(await agent.json()).toMatchObject({ dryRun: true });
  });

  it("REST: a Bearer key with no Origin is unaffected, whatever cookies the client has", async () => {
    const before = await sessions();
    const res = await ingest({ authorization: `Bearer ${apiKey}`, cookie: COOKIE, "content-type": "application/json" });
    expect(res.status, await res.clone().text()).toBe(200);
    const noType = await ingest({ authorization: `Bearer ${apiKey}` });
    expect(noType.status).toBe(200);
    expect(await sessions()).toBe(before + 2);
  });

  it("REST: reads (GET) by cookie are not affected", async () => {
    const res = await restRoute.GET(new Request(`${APP}/api/v1/pipelines?workspaceId=${workspaceId}`, { headers: { host: "localhost:3123", cookie: COOKIE, "sec-fetch-site": "cross-site" } }));
    expect(res.status).toBe(200);
  });

  const uploadUrl = () => `${APP}/api/v1/pipelines/${pipelineId}/sources/chats/upload`;
  const uploadParams = () => ({ params: Promise.resolve({ pipelineId, source: "chats" }) });
  const jsonl = () => {
    const form = new FormData();
    form.set("file", new Blob([JSON.stringify({ id: "c1", messages: [{ role: "user", content: "hi" }] }) + "\n"]), "chats.jsonl");
    return form;
  };

  it("upload: a cookie-signed multipart upload from another port is refused; from the app's page it imports", async () => {
    const imports = await t.db.sourceImport.count();
    const cross = new Request(uploadUrl(), { method: "POST", body: jsonl() });
    cross.headers.set("cookie", COOKIE);
    cross.headers.set("origin", "http://localhost:3304");
    expect((await uploadRoute.POST(cross, uploadParams())).status).toBe(403);
    const plain = await uploadRoute.POST(
      new Request(`${uploadUrl()}?filename=chats.jsonl`, { method: "POST", headers: { cookie: COOKIE, origin: APP, "content-type": "text/plain" }, body: "{}" }),
      uploadParams(),
    );
    expect(plain.status).toBe(415);
    expect(await t.db.sourceImport.count()).toBe(imports);
    const own = new Request(uploadUrl(), { method: "POST", body: jsonl() });
    own.headers.set("cookie", COOKIE);
    own.headers.set("origin", APP);
    const ok = await uploadRoute.POST(own, uploadParams());
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await t.db.sourceImport.count()).toBe(imports + 1);
  });

  it("tRPC: a cookie-signed mutation from another origin is refused before tRPC; the app's own call goes through", async () => {
    const call = (headers: Record<string, string>) =>
      trpcRoute.POST(
        new Request(`${APP}/api/trpc/workspace.rename`, {
          method: "POST",
          headers: { host: "localhost:3123", cookie: COOKIE, "content-type": "application/json", ...headers },
          body: JSON.stringify({ json: { workspaceId, name: "Renamed" } }),
        }),
      );
    const cross = await call({ origin: "http://localhost:3304" });
    expect(cross.status).toBe(403);
    expect(await t.db.workspace.findUniqueOrThrow({ where: { id: workspaceId } })).not.toMatchObject({ name: "Renamed" });
    const own = await call({ origin: APP });
    expect(own.status, await own.clone().text()).toBe(200);
    expect(await t.db.workspace.findUniqueOrThrow({ where: { id: workspaceId } })).toMatchObject({ name: "Renamed" });
  });

  it("MCP: the guard applies too (MCP reads no session cookie at all)", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const cross = await mcpRoute.POST(new Request(`${APP}/api/mcp`, { method: "POST", headers: { host: "localhost:3123", cookie: COOKIE, "content-type": "text/plain", origin: "http://localhost:3304" }, body }));
    expect(cross.status).toBe(403);
    const agent = await mcpRoute.POST(
      new Request(`${APP}/api/mcp`, { method: "POST", headers: { host: "localhost:3123", authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body }),
    );
    expect(agent.status).toBe(200);
  });

  it("Host: a DNS name other than NEXTAUTH_URL's is refused (DNS rebinding); IP literals, localhost and listed names pass", async () => {
    const rebound = await restRoute.GET(new Request(`http://rebind.attacker.test:3123/api/v1/pipelines?workspaceId=${workspaceId}`, { headers: { host: "rebind.attacker.test:3123" } }));
    expect(rebound.status).toBe(400);
    expect((await rebound.json()).error).toMatchObject({ code: "HOST_NOT_ALLOWED", message: expect.stringMatching(/answers to localhost:3123 \(NEXTAUTH_URL\), not to Host "rebind\.attacker\.test"/) });
    const env = { NEXTAUTH_URL: "https://synthex.example.com" };
    const req = (host: string) => new Request("http://x/api/v1/pipelines", { headers: { host } });
    for (const host of ["synthex.example.com", "127.0.0.1:3000", "[::1]:3000", "10.0.0.5", "localhost:3000", "SYNTHEX.example.com"]) expect(hostRefusal(req(host), env), host).toBeNull();
    expect(hostRefusal(req("app:3000"), env)?.status).toBe(400);
    expect(hostRefusal(req("app:3000"), { ...env, SYNTHEX_ALLOWED_HOSTS: "app, other" })).toBeNull();
    // Without NEXTAUTH_URL there is nothing to compare with.
    expect(hostRefusal(req("anything.test"), {})).toBeNull();
  });

  it("the rules in isolation: safe methods and requests without cookies are never refused", () => {
    const env = { NEXTAUTH_URL: APP };
    const r = (method: string, headers: Record<string, string>) => crossSiteRefusal(new Request(`${APP}/api/v1/x`, { method, headers: { host: "localhost:3123", ...headers } }), {}, env);
    expect(r("GET", { cookie: COOKIE, origin: "https://evil.example" })).toBeNull();
    expect(r("POST", { "content-type": "text/plain", origin: "https://evil.example" })).toBeNull(); // no cookie: no session to borrow
    expect(r("DELETE", { cookie: COOKIE, origin: "https://evil.example" })?.status).toBe(403);
    expect(r("DELETE", { cookie: COOKIE, origin: APP })).toBeNull(); // no body: no type needed
  });
});
