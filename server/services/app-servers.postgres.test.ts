/**
 * Several app servers on one PostgreSQL (`TEST_DATABASE_URL`), as deployed: one `next build`
 * (standalone output, in a directory of its own), two `next start` processes on different ports,
 * and the standalone `node server.js`.
 *
 * - a session signed in on one server is valid on the other (both behind one public name, as a load
 *   balancer sends them: a session is bound to the Host it was issued for); an API key works on both;
 * - a run started on one executes once and is seen finished from the other; its memory, indexed
 *   after the run, is searched within a scope over REST on both (full text and semantic);
 * - a server SIGKILLed mid-run: the other resumes the run once the lease expires;
 * - with DATABASE_URL and no NEXTAUTH_SECRET a server refuses to start, saying what to set.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../http/testing/free-port";
import { connectRemote, type Connection } from "../cli/api";
import { Pipeline } from "../pipeline/sdk";
import { createTestDb, testDatabaseUrl, type TestDb } from "../store/test-db";
import { createApiKey } from "./api-keys";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { signUp } from "./users";

const adminUrl = testDatabaseUrl();
const ROOT = path.resolve(import.meta.dirname, "../..");
const DIST = ".next/servers-test";
const NEXT = path.join(ROOT, "node_modules/next/dist/bin/next");
const SECRET = "two-servers-test-secret-0123456789abcdef";
const LEASE_MS = 3000;
/** The public name every server is reached by (NEXTAUTH_URL), as behind a load balancer. */
const PUBLIC_HOST = "synthex.internal";

let t: TestDb;
const servers: ChildProcess[] = [];
const logs = new Map<ChildProcess, string[]>();

function serverEnv(port: number, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: "production",
    DATABASE_URL: t.url!,
    NEXTAUTH_SECRET: SECRET,
    NEXTAUTH_URL: `http://${PUBLIC_HOST}`,
    SYNTHEX_DIST_DIR: DIST,
    SYNTHEX_STANDALONE: "1",
    SYNTHEX_RUN_LEASE_MS: String(LEASE_MS),
    SYNTHEX_EXECUTOR: "local",
    SYNTHEX_DATA_DIR: path.join(tmpdir(), "synthex-servers-unused"),
    PORT: String(port),
    HOSTNAME: "127.0.0.1",
    ...extra,
  };
}

function start(args: string[], port: number, extra: Record<string, string | undefined> = {}, cwd = ROOT): ChildProcess {
  const child = spawn(process.execPath, args, { cwd, env: serverEnv(port, extra), stdio: ["ignore", "pipe", "pipe"], detached: true });
  const out: string[] = [];
  child.stdout!.on("data", (d: Buffer) => out.push(d.toString()));
  child.stderr!.on("data", (d: Buffer) => out.push(d.toString()));
  logs.set(child, out);
  servers.push(child);
  return child;
}

async function ready(port: number, child: ChildProcess, timeoutMs = 180_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server on ${port} exited: ${logs.get(child)?.join("")}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/signin`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`server on ${port} not ready: ${logs.get(child)?.join("")}`);
}

function kill(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM") {
  if (child.exitCode === null && child.pid) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  }
}

/** A request to one server with the public Host, as the load balancer forwards it (fetch cannot set Host). */
function viaBalancer(port: number, method: string, url: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; body: string; setCookies: string[] }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path: url, headers: { host: PUBLIC_HOST, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), setCookies: res.headers["set-cookie"] ?? [] }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Credentials sign-in through next-auth on one server: the session cookie it sets. */
async function signIn(port: number, email: string, password: string): Promise<string> {
  const csrf = await viaBalancer(port, "GET", "/api/auth/csrf");
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  const cookies = csrf.setCookies.map((c) => c.split(";")[0]).join("; ");
  const res = await viaBalancer(
    port,
    "POST",
    "/api/auth/callback/credentials",
    { "content-type": "application/x-www-form-urlencoded", cookie: cookies },
    new URLSearchParams({ csrfToken, email, password, json: "true" }).toString(),
  );
  const session = res.setCookies.find((c) => c.includes("session-token="));
  if (!session) throw new Error(`no session cookie from ${port} (HTTP ${res.status})`);
  return session.split(";")[0]!;
}

async function waitForRun(api: Connection, runId: string, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = await api.api.run.get.query({ workspaceId: api.workspaceId, runId });
    if (!["queued", "running"].includes(run.status) || Date.now() > until) return run;
    await new Promise((r) => setTimeout(r, 500));
  }
}

let ports: number[] = [];
let apiKey = "";
let workspaceId = "";

beforeAll(async () => {
  if (!adminUrl) return;
  t = await createTestDb();
  const user = await signUp(t.db, { email: "ops@example.com", password: "ops-password-123" });
  workspaceId = user.workspace.id;
  apiKey = (await createApiKey(t.db, workspaceId, { userId: user.user.id, role: "owner" }, { name: "servers", role: "editor" })).secret;

  // One build for every server of this file, beside the usual .next (standalone output on).
  const build = spawnSync(process.execPath, [NEXT, "build"], {
    cwd: ROOT,
    env: { ...process.env, SYNTHEX_STANDALONE: "1", SYNTHEX_DIST_DIR: DIST, NEXT_TELEMETRY_DISABLED: "1" },
    encoding: "utf8",
    timeout: 900_000,
  });
  if (build.status !== 0) throw new Error(`next build failed:\n${build.stdout}\n${build.stderr}`);
  ports = [await freePort(), await freePort()];
  const [a, b] = ports.map((port) => start([NEXT, "start", "-p", String(port), "-H", "127.0.0.1"], port));
  await Promise.all([ready(ports[0]!, a!), ready(ports[1]!, b!)]);
}, 1_200_000);

afterAll(async () => {
  for (const s of servers) kill(s, "SIGKILL");
  await t?.close();
});

describe.skipIf(!adminUrl)("two app servers on one PostgreSQL", () => {
  it("a session from one server is valid on the other; an API key works on both", { timeout: 120_000 }, async () => {
    const cookie = await signIn(ports[0]!, "ops@example.com", "ops-password-123");
    for (const port of ports) {
      const res = await viaBalancer(port, "GET", "/api/auth/session", { cookie });
      expect((JSON.parse(res.body) as { user?: { email?: string } }).user?.email).toBe("ops@example.com");
    }
    for (const port of ports) {
      const api = await connectRemote(`http://127.0.0.1:${port}`, apiKey);
      expect(api.workspaceId).toBe(workspaceId);
    }
  });

  it("a run started on one server executes once and is seen finished from the other", { timeout: 300_000 }, async () => {
    const spec = new Pipeline("notes", { agent: "ops" })
      .source("notes", { format: "jsonl" })
      .transform("summaries", { from: "notes", prompt: "Summarize: {{ record.content }}", model: "offline/extractive" })
      .output("search", { from: "summaries", surface: "search" })
      .toSpec();
    const { pipeline } = await createPipeline(t.db, workspaceId, { name: "notes", spec });
    const team = (i: number) => (i % 3 === 0 ? "acme:ops" : "acme:sales");
    await appendSourceRecords(
      t.db,
      pipeline.id,
      "notes",
      Array.from({ length: 30 }, (_, i) => ({ externalId: `n${i}`, content: `Note ${i} about the quarterly budget review.`, scope: team(i), metadata: {} })),
    );
    const [a, b] = await Promise.all(ports.map((p) => connectRemote(`http://127.0.0.1:${p}`, apiKey)));
    const run = await a!.api.run.start.mutate({ workspaceId, pipelineId: pipeline.id, options: {} });
    const done = await waitForRun(b!, run.id, 240_000);
    expect(done.status).toBe("completed");
    expect(done.stats.steps.find((s) => s.step === "summaries")).toMatchObject({ input: 30, output: 30 });
    // Executed once: one summary per note, and the run ended with its lease released — after its
    // after-run work (indexing, webhooks), which follows the status change: so polled, not read once.
    expect(await t.db.record.count({ where: { pipelineId: pipeline.id, step: "summaries" } })).toBe(30);
    await expect.poll(async () => (await t.db.run.findUniqueOrThrow({ where: { id: run.id } })).leaseOwner, { timeout: 60_000, interval: 500 }).toBeNull();

    // Its memory over REST, within one team's scope, the same from either server.
    for (const mode of ["fts", "semantic"]) {
      const answers: string[][] = [];
      for (const port of ports) {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/pipelines/${pipeline.id}/search?query=quarterly%20budget&mode=${mode}&scope=acme:ops&limit=50`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        expect(res.status).toBe(200);
        const { hits } = (await res.json()) as { hits: Array<{ id: string; scope: string; step: string }> };
        expect(hits.map((h) => h.scope)).toEqual(Array(10).fill("acme:ops"));
        expect(new Set(hits.map((h) => h.step))).toEqual(new Set(["summaries"]));
        answers.push(hits.map((h) => h.id).sort());
      }
      expect(answers[1]).toEqual(answers[0]);
    }
  });

  it("a server killed mid-run: the other resumes the run after the lease expires", { timeout: 600_000 }, async () => {
    const spec = new Pipeline("big", { agent: "ops" })
      .source("notes", { format: "jsonl" })
      .transform("summaries", { from: "notes", prompt: "Summarize: {{ record.content }}", model: "offline/extractive" })
      .transform("facts", { from: "summaries", prompt: "Facts: {{ record.content }}", model: "offline/extractive" })
      .toSpec();
    const { pipeline } = await createPipeline(t.db, workspaceId, { name: "big", spec });
    const n = 1500;
    await appendSourceRecords(
      t.db,
      pipeline.id,
      "notes",
      Array.from({ length: n }, (_, i) => ({ externalId: `b${i}`, content: `Entry ${i}: the team met about project ${i % 17} and agreed on next steps for week ${i % 52}.`, metadata: {} })),
    );
    const [a, b] = await Promise.all(ports.map((p) => connectRemote(`http://127.0.0.1:${p}`, apiKey)));
    const run = await a!.api.run.start.mutate({ workspaceId, pipelineId: pipeline.id, options: {} });
    // Wait until server A has committed some of the work, then kill it without any clean-up.
    for (let i = 0; i < 1200; i++) {
      if ((await t.db.record.count({ where: { runId: run.id } })) > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    kill(servers[0]!, "SIGKILL");
    const interrupted = await t.db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(interrupted.status).toBe("running");
    const partial = await t.db.record.count({ where: { runId: run.id } });
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(2 * n);

    const done = await waitForRun(b!, run.id, 480_000);
    expect(done.status).toBe("completed");
    expect(await t.db.record.count({ where: { pipelineId: pipeline.id, step: "summaries" } })).toBe(n);
    expect(await t.db.record.count({ where: { pipelineId: pipeline.id, step: "facts" } })).toBe(n);
    const row = await t.db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(row.leaseOwner).toBeNull();
    // Resumed by the other server's sweep (one sweep may resume other expired runs beside it). On a
    // failure, both servers' last output says who did what.
    const log = logs.get(servers[1]!)!.join("");
    const tail = (s: ChildProcess) => logs.get(s)!.join("").slice(-3000);
    expect(log, `server B:\n${tail(servers[1]!)}\n\nserver A:\n${tail(servers[0]!)}`).toMatch(new RegExp(`resuming \\d+ run\\(s\\) whose server stopped: [^\\n]*${run.id}`));
  });

  it("without NEXTAUTH_SECRET a server on DATABASE_URL refuses to start, saying what to set", { timeout: 180_000 }, async () => {
    const port = await freePort();
    const child = start([NEXT, "start", "-p", String(port), "-H", "127.0.0.1"], port, { NEXTAUTH_SECRET: undefined, AUTH_SECRET: undefined });
    const code = await new Promise<number | null>((resolve) => {
      child.once("exit", (c) => resolve(c));
      setTimeout(() => resolve(null), 120_000);
    });
    expect(code).not.toBe(0);
    expect(logs.get(child)!.join("")).toMatch(/DATABASE_URL is set.*set NEXTAUTH_SECRET/s);
  });

  it("the standalone build starts with `node server.js`", { timeout: 180_000 }, async () => {
    const standalone = path.join(ROOT, DIST, "standalone");
    expect(existsSync(path.join(standalone, "server.js"))).toBe(true);
    // As the Dockerfile lays it out: the static files beside the traced server.
    const copy = mkdtempSync(path.join(tmpdir(), "synthex-standalone-"));
    try {
      cpSync(standalone, copy, { recursive: true, verbatimSymlinks: true });
      cpSync(path.join(ROOT, DIST, "static"), path.join(copy, DIST, "static"), { recursive: true });
      const port = await freePort();
      const child = start(["server.js"], port, {}, copy);
      await ready(port, child);
      const api = await connectRemote(`http://127.0.0.1:${port}`, apiKey);
      expect(api.workspaceId).toBe(workspaceId);
      kill(child);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
