/**
 * Issue 49: every `/compat/*` and `/api/v1/*` path answers with and without a trailing slash, never
 * with a redirect. Two halves:
 * - Next's side: next.config.ts turns Next's own 308 off (`skipTrailingSlashRedirect`), and proxy.ts
 *   keeps that 308 for every other path (pages, next-auth) while letting the agent APIs through,
 *   after its Host check.
 * - The handlers' side, over real HTTP with the route server the other compat tests use: an httpx
 *   client configured exactly as Python's `mem0ai` MemoryClient configures its own (base_url, Token
 *   and Mem0-User-ID headers, timeout 300, follow_redirects left False: a 308 would stay a 308) calls
 *   Mem0, Zep and REST paths both ways and gets the same 200s. Needs Debian's python3-httpx (.ci/run
 *   installs it); skipped, saying so, when it is missing.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("trailing-slash");

const { NextRequest } = await import("next/server");
const { proxy } = await import("@/proxy");
const nextConfig = (await import("@/next.config")).default;
const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { mem0Route } = await import("@/server/compat/mem0");
const { zepRoute } = await import("@/server/compat/zep");

const PYTHON = "/usr/bin/python3";
const hasHttpx = spawnSync(PYTHON, ["-c", "import httpx"]).status === 0;

describe("Next: no 308 for the agent APIs, the old 308 elsewhere", () => {
  const at = (p: string, host = "localhost:3000") => proxy(new NextRequest(`http://${host}${p}`, { headers: { host } }));

  it("next.config.ts skips Next's trailing-slash redirect", () => {
    expect(nextConfig.skipTrailingSlashRedirect).toBe(true);
  });

  it("lets /compat/* and /api/v1/* through with a trailing slash", () => {
    for (const p of ["/compat/mem0/v1/memories/", "/compat/mem0/v3/memories/add/", "/compat/zep/users/", "/api/v1/pipelines/", "/compat/mem0/p/abc/v1/ping/"]) {
      const res = at(p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get("x-middleware-next"), p).toBe("1");
      expect(res.headers.get("location"), p).toBeNull();
    }
  });

  it("keeps a 308 to the path without the slash for pages and next-auth", () => {
    for (const [p, to] of [["/signin/", "/signin"], ["/api/auth/session/", "/api/auth/session"], ["/pipelines/x/?tab=runs", "/pipelines/x?tab=runs"]] as const) {
      const res = at(p);
      expect(res.status, p).toBe(308);
      expect(new URL(res.headers.get("location")!).pathname + new URL(res.headers.get("location")!).search).toBe(to);
    }
    expect(at("/").headers.get("x-middleware-next")).toBe("1");
  });

  it("runs the Host check first", () => {
    const prev = process.env.NEXTAUTH_URL;
    process.env.NEXTAUTH_URL = "http://app.example.com";
    try {
      expect(at("/compat/mem0/v1/ping/", "rebound.example.net").status).toBe(400);
      expect(at("/signin/", "rebound.example.net").status).toBe(400);
    } finally {
      if (prev === undefined) delete process.env.NEXTAUTH_URL;
      else process.env.NEXTAUTH_URL = prev;
    }
  });
});

describe.skipIf(!hasHttpx)("a Python httpx client configured as mem0ai's (python3-httpx)", () => {
  let server: Awaited<ReturnType<typeof startRouteServer>>;
  let key = "";
  let pipelineId = "";

  beforeAll(async () => {
    const db = await openMigratedDb();
    const { user, workspace } = await signUp(db, { email: "slash@example.com", password: "slash-password-1" });
    const { pipeline } = await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
    pipelineId = pipeline.id;
    key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "py", role: "admin", pipelines: [pipeline.id] })).secret;
    server = await startRouteServer([
      [/^\/compat\/mem0(\/|$)/, mem0Route],
      [/^\/compat\/zep(\/|$)/, zepRoute],
    ]);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await settleBackgroundWork();
    await closeDb();
    await testEnv.cleanup();
  });

  it("gets the same 200s with and without the trailing slash, and no redirect", async () => {
    const { spawn } = await import("node:child_process");
    const script = path.join(import.meta.dirname, "testing", "mem0_httpx_probe.py");
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(PYTHON, [script, server.url, key, pipelineId]);
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`python exited ${code}: ${stderr}`))));
    });
    const statuses = JSON.parse(out) as Record<string, number>;
    expect(Object.keys(statuses).length).toBe(12);
    for (const [call, status] of Object.entries(statuses)) expect(status, call).toBe(200);
  }, 60_000);
});

if (!hasHttpx) {
  describe("a Python httpx client configured as mem0ai's", () => {
    it.skip(`skipped: ${PYTHON} cannot import httpx (install Debian's python3-httpx; .ci/run does)`, () => {});
  });
}
