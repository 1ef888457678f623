/**
 * `npm start`'s app server (scripts/app-server.ts) on PostgreSQL: API-key requests to /api/v1 are
 * answered by the direct path (no Next router), and every one of them is answered exactly as the
 * same request through Next's route (`SYNTHEX_DIRECT_API=off`, the `next start` behaviour): the
 * same status, body and security headers for a good call, an unknown key, a Host that is not the
 * app's, a body over the limit, a read-only key that writes, an unknown endpoint and a key past its
 * rate limit; a malformed Host is left to Next. Which path answered leaves no trace on an answer:
 * the test counts the requests it expects on the direct path and compares that with the count the
 * app server logs when it stops. A key revoked through Next's routes (tRPC) is refused by the
 * direct path on the very next request (the request caches are the process's, not a module copy's).
 * Two real servers started by scripts/start.ts over one test database, real sockets.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../server/http/testing/free-port";
import { Pipeline } from "../server/pipeline/sdk";
import { indexPipeline } from "../server/search/indexing";
import { createApiKey } from "../server/services/api-keys";
import { recordAudit } from "../server/services/audit";
import { appendSourceRecords, createPipeline } from "../server/services/pipelines";
import { runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";
import { createTestDb, testDatabaseUrl, type TestDb } from "../server/store/test-db";

const adminUrl = testDatabaseUrl();
const ROOT = path.resolve(import.meta.dirname, "..");
const RATE_PER_KEY = 4;
const MAX_BODY = 2048;
const SECURITY = ["x-frame-options", "content-security-policy", "x-content-type-options", "referrer-policy"];

let t: TestDb;
const dir = mkdtempSync(path.join(tmpdir(), "synthex-app-server-"));
const servers: Array<{ child: ChildProcess; port: number; log: string[] }> = [];
const keys = { admin: "", search: "", readOnly: "", rateA: "", rateB: "", victim: "", victimId: "", revoker: "", large: "", hosts: [] as string[] };
/** Odd Host headers (each sent with a key of its own: the rate limit is 4 requests a minute). */
const MALFORMED_HOSTS = ["exa mple.com", "localhost:99999", "[::1", "localhost:3000@evil.example", "evil.example/x", "evil.example\\x"];
/** Requests this test sent that the direct path should answer (the app server logs its own count on stop). */
let expectedDirect = 0;
/** A pipeline with searchable records, and how many searches the direct path answered. */
let pipelineId = "";
let directSearches = 0;

async function startServer(direct: boolean) {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    DATABASE_URL: t.url!,
    NEXTAUTH_SECRET: "app-server-test-secret-0123456789abcdef",
    NEXTAUTH_URL: `http://localhost:${port}`,
    SYNTHEX_WORKERS: "1",
    SYNTHEX_DIRECT_API: direct ? "on" : "off",
    SYNTHEX_API_RATE_PER_KEY: String(RATE_PER_KEY),
    SYNTHEX_MAX_BODY_BYTES: String(MAX_BODY),
    SYNTHEX_DATA_DIR: path.join(dir, direct ? "direct" : "next"),
    // On for the direct server, as by default: its inbox watchers open the database from Next's copy
    // of the modules at start-up, so the pool (and its statement names) is made by that copy while the
    // direct path registers its search reads in tsx's copy, as under `npm start` (see the last test).
    SYNTHEX_INBOX_WATCH: direct ? "on" : "off",
  };
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/start.ts")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const log: string[] = [];
  child.stdout!.on("data", (d: Buffer) => log.push(d.toString()));
  child.stderr!.on("data", (d: Buffer) => log.push(d.toString()));
  servers.push({ child, port, log });
  const end = Date.now() + 600_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`).then((r) => r.status === 200, () => false);
    if (up) return port;
    if (Date.now() > end || child.exitCode !== null) throw new Error(`the server did not start:\n${log.join("")}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** One request over a plain socket (node:http, so Host and Content-Length go out as written). */
function send(port: number, method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path: url, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const raw = Buffer.concat(chunks);
        const text = (res.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: compared as text
        }
        resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
      });
    });
    // A server may refuse a large body before reading it and close the connection.
    req.on("error", reject);
    req.end(body);
  });
}

let direct = 0;
let viaNext = 0;

beforeAll(async () => {
  if (!adminUrl) return;
  t = await createTestDb();
  const { user, workspace } = await signUp(t.db, { email: "direct@example.com", password: "direct-password-123" });
  const owner = { userId: user.id, role: "owner" as const };
  keys.admin = (await createApiKey(t.db, workspace.id, owner, { name: "admin", role: "admin" })).secret;
  keys.readOnly = (await createApiKey(t.db, workspace.id, owner, { name: "read-only", role: "admin", readOnly: true })).secret;
  keys.rateA = (await createApiKey(t.db, workspace.id, owner, { name: "rate-a", role: "admin" })).secret;
  keys.rateB = (await createApiKey(t.db, workspace.id, owner, { name: "rate-b", role: "admin" })).secret;
  const victim = await createApiKey(t.db, workspace.id, owner, { name: "victim", role: "admin" });
  [keys.victim, keys.victimId] = [victim.secret, victim.id];
  keys.large = (await createApiKey(t.db, workspace.id, owner, { name: "large", role: "admin" })).secret;
  keys.revoker = (await createApiKey(t.db, workspace.id, owner, { name: "revoker", role: "admin" })).secret;
  keys.search = (await createApiKey(t.db, workspace.id, owner, { name: "search", role: "admin" })).secret;
  const spec = new Pipeline("named").source("notes", { format: "jsonl" }).transform("clean", { from: "notes", operator: { kind: "identity" } }).output("search", { from: "clean", surface: "search" }).toSpec();
  ({ pipeline: { id: pipelineId } } = await createPipeline(t.db, workspace.id, { name: "named", spec }));
  await appendSourceRecords(t.db, pipelineId, "notes", [{ externalId: "a", content: "tomato seedlings go out in May" }, { externalId: "b", content: "tomato soup for the team lunch" }]);
  expect((await runPipeline(t.db, { workspaceId: workspace.id, pipelineId })).status).toBe("completed");
  await indexPipeline(t.db, pipelineId);
  for (const host of MALFORMED_HOSTS) keys.hosts.push((await createApiKey(t.db, workspace.id, owner, { name: `host ${host}`, role: "admin" })).secret);
  // A page of the audit log past the 64 KiB under which answers go uncompressed (server/api/rest.ts).
  for (let i = 0; i < 200; i++) await recordAudit(t.db, { workspaceId: workspace.id, actor: `user:${user.id}`, action: "bulk.entry", target: `${i} ${"x".repeat(450)}` });
  [direct, viaNext] = await Promise.all([startServer(true), startServer(false)]);
}, 900_000);

afterAll(async () => {
  for (const s of servers) if (s.child.pid && s.child.exitCode === null) process.kill(-s.child.pid, "SIGTERM");
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Headers that say how the bytes travel, not what the answer is (Node and Next frame a body their own way). */
const FRAMING = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);
const answerHeaders = (r: Answer) => Object.fromEntries(Object.entries(r.headers).filter(([name]) => !FRAMING.has(name)));

/** A request to the direct server that its direct path should answer (counted, see `expectedDirect`). */
function sendDirect(method: string, url: string, headers: Record<string, string>, body?: string) {
  expectedDirect++;
  return send(direct, method, url, headers, body);
}

/**
 * The same request to both servers: on one the direct path answers (or Next, `path: "next"`), on
 * the other Next's route, alike: status, body and every header but the framing ones.
 */
async function both(method: string, url: string, headers: Record<string, string>, body?: string, path: "direct" | "next" = "direct") {
  const a = path === "direct" ? await sendDirect(method, url, headers, body) : await send(direct, method, url, headers, body);
  const b = await send(viaNext, method, url, headers, body);
  // The servers differ only in their port (NEXTAUTH_URL is named in the Host refusal).
  const same = (r: Answer, port: number) => ({
    status: r.status,
    body: JSON.parse(JSON.stringify(r.body).replaceAll(`localhost:${port}`, "localhost:PORT")) as unknown,
    headers: answerHeaders(r),
  });
  expect(same(a, direct)).toEqual(same(b, viaNext));
  return a;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe.skipIf(!adminUrl)("npm start: /api/v1 without Next's router, refused and answered as through Next", () => {
  it("answers a good call", async () => {
    const a = await both("GET", "/api/v1/audit?limit=5", bearer(keys.admin));
    expect(a.status).toBe(200);
    for (const name of SECURITY) expect(a.headers[name], name).toBeTruthy();
  });

  it("refuses an unknown key (401)", async () => {
    expect((await both("GET", "/api/v1/audit", bearer("sx_not-a-key"))).status).toBe(401);
  });

  it("refuses a Host that is not the app's (400), before anything else", async () => {
    const a = await both("GET", "/api/v1/audit", { ...bearer(keys.admin), host: "rebind.example.com" });
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ error: { code: "HOST_NOT_ALLOWED" } });
  });

  it("refuses a body over SYNTHEX_MAX_BODY_BYTES (413), declared or streamed", async () => {
    const body = JSON.stringify({ messages: [{ role: "user", content: "x".repeat(MAX_BODY) }] });
    const url = "/api/v1/pipelines/p/sources/chat/sessions/s/messages";
    const declared = await both("POST", url, { ...bearer(keys.admin), "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }, body);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE", limitBytes: MAX_BODY } });
    const chunked = await both("POST", url, { ...bearer(keys.admin), "content-type": "application/json", "transfer-encoding": "chunked" }, body);
    expect(chunked.status).toBe(413);
  });

  it("refuses a write with a read-only key (403) and names an unknown endpoint (404)", async () => {
    const write = await both("POST", "/api/v1/pipelines/p/log/config", { ...bearer(keys.readOnly), "content-type": "application/json" }, JSON.stringify({ enabled: true }));
    expect(write.status).toBe(403);
    expect((await both("GET", "/api/v1/no/such/endpoint", bearer(keys.admin))).status).toBe(404);
  });

  it("counts a key's rate limit (429 with Retry-After past SYNTHEX_API_RATE_PER_KEY)", async () => {
    // One key per server: each app server has its own budget (server/http/api-rate-limit.ts).
    const statuses = async (port: number, key: string) => {
      const out: Answer[] = [];
      for (let i = 0; i <= RATE_PER_KEY; i++) out.push(await send(port, "GET", "/api/v1/audit?limit=1", bearer(key)));
      return out;
    };
    const [a, b] = [await statuses(direct, keys.rateA), await statuses(viaNext, keys.rateB)];
    expectedDirect += a.length;
    expect(a.map((r) => r.status)).toEqual([...Array(RATE_PER_KEY).fill(200), 429]);
    expect(a.map((r) => r.status)).toEqual(b.map((r) => r.status));
    expect(a.at(-1)!.headers["retry-after"]).toBeTruthy();
    expect(answerHeaders(a.at(-1)!)).toEqual(answerHeaders(b.at(-1)!));
    expect((a.at(-1)!.body as { error: { code: string } }).error.code).toBe((b.at(-1)!.body as { error: { code: string } }).error.code);
    // The budget is the process's, shared with the surfaces Next still serves: tRPC is refused too.
    const trpc = await send(direct, "GET", `/api/trpc/audit.list?input=${encodeURIComponent(JSON.stringify({ json: {} }))}`, bearer(keys.rateA));
    expect(trpc.status, JSON.stringify(trpc.body).slice(0, 300)).toBe(429);
  });

  it("compresses a large answer as Next does, for a client that accepts gzip only", async () => {
    const url = "/api/v1/audit?limit=200&action=bulk.";
    const plain = await both("GET", url, bearer(keys.large));
    expect(Buffer.byteLength(JSON.stringify(plain.body))).toBeGreaterThan(64 * 1024);
    expect(plain.headers["cache-control"]).toBe("no-store");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const gzipped = await both("GET", url, { ...bearer(keys.large), "accept-encoding": "gzip" });
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gzipped.body).toEqual(plain.body);
    // A small answer is marked no-transform and goes as it is.
    const small = await both("GET", "/api/v1/audit?limit=1", { ...bearer(keys.large), "accept-encoding": "gzip" });
    expect(small.headers["cache-control"]).toBe("no-store, no-transform");
    expect(small.headers["content-encoding"]).toBeUndefined();
  });

  it("leaves to Next what is Next's: requests without a key, openapi.json, a trailing slash", async () => {
    for (const [url, headers] of [
      ["/api/v1/audit", {}],
      ["/api/v1/openapi.json", bearer(keys.admin)],
      ["/api/v1/audit/", bearer(keys.admin)],
    ] as const) {
      const a = await send(direct, "GET", url, headers);
      expect(a.status, url).toBe((await send(viaNext, "GET", url, headers)).status);
    }
  });

  it("answers a malformed Host as Next does (Next answers it)", async () => {
    for (const [i, host] of MALFORMED_HOSTS.entries()) await both("GET", "/api/v1/audit?limit=1", { ...bearer(keys.hosts[i]!), host }, undefined, "next");
  });

  it("refuses a key revoked through Next's routes on the direct path's very next request", async () => {
    // Warm: the direct path has the key in its cache (kept up to 1 s, SYNTHEX_AUTH_CACHE_MS).
    expect((await sendDirect("GET", "/api/v1/audit?limit=1", bearer(keys.victim))).status).toBe(200);
    const warmAt = performance.now();
    // Revoked in the same process through tRPC, which Next serves (its own copy of the services).
    const revoke = await send(direct, "POST", "/api/trpc/apiKey.revoke", { ...bearer(keys.revoker), "content-type": "application/json" }, JSON.stringify({ json: { keyId: keys.victimId } }));
    expect(revoke.status, JSON.stringify(revoke.body)).toBe(200);
    const after = await sendDirect("GET", "/api/v1/audit?limit=1", bearer(keys.victim));
    const elapsed = performance.now() - warmAt;
    expect(after.status, `the revoked key still served ${Math.round(elapsed)} ms after its cache entry was loaded`).toBe(401);
  });

  it("searches on the direct path (their reads go out as named statements: counted below)", async () => {
    for (const q of ["tomato seedlings", "tomato soup", "lunch", "seedlings in May"]) {
      const a = await sendDirect("GET", `/api/v1/pipelines/${pipelineId}/search?query=${encodeURIComponent(q)}&mode=fts`, bearer(keys.search));
      expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
      expect(JSON.stringify(a.body)).toContain("tomato");
      directSearches++;
    }
  });

  // Last: stops the direct server.
  it("answered on the direct path exactly the requests meant for it (its count, logged on stop)", async () => {
    const server = servers.find((s) => s.port === direct)!;
    const exited = new Promise((resolve) => server.child.once("exit", resolve));
    process.kill(server.child.pid!, "SIGTERM");
    await exited;
    const line = /(\d+) \/api\/v1 requests answered directly, (\d+) requests through Next, (\d+) queries sent as named statements/.exec(server.log.join(""));
    expect(line, server.log.join("")).not.toBeNull();
    console.log(`[app-server test] ${line![0]}`);
    expect(Number(line![1])).toBe(expectedDirect);
    expect(Number(line![2])).toBeGreaterThan(0);
    // The direct path registers its search reads in tsx's copy of the modules; the pool's adapter
    // was made by Next's copy. Named only if both copies share one registry (process-state.ts).
    expect(directSearches).toBe(4);
    expect(Number(line![3]), "the direct path's search reads went out unnamed: parsed and planned on every call").toBeGreaterThanOrEqual(directSearches);
  });
});
