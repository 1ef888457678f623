/**
 * The request caches' bound (server/services/request-context.ts), on two app servers sharing one
 * PostgreSQL (`TEST_DATABASE_URL`): two processes, each the app's route handlers over real HTTP.
 * While both serve a key continuously (caches warm), a third process — this test — revokes the
 * key, removes its creator's membership behind the services' back, or saves a new spec version.
 * Neither server hears of it; every request either starts after the change plus the bound
 * (SYNTHEX_AUTH_CACHE_MS, 1 s) must see it, on both servers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Pipeline } from "../pipeline/sdk";
import { createTestDb, testDatabaseUrl, type TestDb } from "../store/test-db";
import { createApiKey, revokeApiKey } from "./api-keys";
import { ingestMessages } from "./ingest";
import { createPipeline, saveVersion } from "./pipelines";
import { signUp } from "./users";

const BOUND_MS = 1000;
const ROOT = path.resolve(import.meta.dirname, "../..");
let t: TestDb;
const children: ChildProcess[] = [];
const servers: string[] = [];

function startServer(url: string): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "server/api/testing/route-server-main.ts")], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, NEXTAUTH_SECRET: "request-cache-test-secret-0123456789", SYNTHEX_API_RATE_PER_KEY: "100000000", SYNTHEX_API_RATE_PER_WORKSPACE: "100000000", SYNTHEX_AUTH_CACHE_MS: String(BOUND_MS) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let log = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      log += d.toString();
      const m = /LISTENING (\S+)/.exec(log);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
    child.on("exit", (code) => reject(new Error(`the app server exited (${code}): ${log}`)));
  });
}

interface Sample {
  start: number;
  status: number;
}

/**
 * Sends `request` to both servers back to back from before `change` until the bound has long
 * passed; returns the samples per server and when the change had committed.
 */
async function around(request: (base: string, n: number) => Promise<number>, before: number, change: () => Promise<void>) {
  let stop = false;
  const samples = servers.map(() => [] as Sample[]);
  const loops = servers.map(async (base, i) => {
    for (let n = 0; !stop; n++) {
      const start = performance.now();
      samples[i]!.push({ start, status: await request(base, n) });
    }
  });
  // Warm: both servers have answered as before several times (their caches hold the lookups).
  while (samples.some((s) => s.filter((x) => x.status === before).length < 5)) await new Promise((r) => setTimeout(r, 20));
  const changing = performance.now();
  await change();
  const committed = performance.now();
  await new Promise((r) => setTimeout(r, BOUND_MS + 2000));
  stop = true;
  await Promise.all(loops);
  return { samples, changing, committed };
}

/** Before the change each server answered `before`; every request started later than the bound after it answered `after`. */
function expectWithinBound(run: Awaited<ReturnType<typeof around>>, before: number, after: number) {
  run.samples.forEach((s, i) => {
    const warm = s.filter((x) => x.start < run.changing);
    expect(warm.length, `server ${i + 1}: requests before the change`).toBeGreaterThan(2);
    expect(warm.every((x) => x.status === before), `server ${i + 1}: answers before the change ${warm.map((x) => x.status)}`).toBe(true);
    const late = s.filter((x) => x.start > run.committed + BOUND_MS);
    expect(late.length, `server ${i + 1}: requests after the bound`).toBeGreaterThan(1);
    const stale = late.filter((x) => x.status !== after);
    expect(stale.map((x) => `${x.status} at +${Math.round(x.start - run.committed)} ms`), `server ${i + 1}: stale answers after the ${BOUND_MS} ms bound`).toEqual([]);
  });
}

describe.skipIf(!testDatabaseUrl())("request caches on two app servers sharing PostgreSQL", () => {
  let workspaceId = "";
  let owner = { userId: "", role: "owner" as const };

  beforeAll(async () => {
    t = await createTestDb();
    const signed = await signUp(t.db, { email: "cache-owner@example.com", password: "cache-password-1" });
    workspaceId = signed.workspace.id;
    owner = { userId: signed.user.id, role: "owner" };
    const { pipeline } = await createPipeline(t.db, workspaceId, { name: "p", spec: new Pipeline("p").source("chats", { format: "chatgpt-export" }).toSpec() });
    await ingestMessages(t.db, { workspaceId, pipelineId: pipeline.id, source: "chats" }, { sessionId: "open-one", messages: [{ role: "user", content: "hello" }] });
    servers.push(...(await Promise.all([startServer(t.url!), startServer(t.url!)])));
  }, 120_000);

  afterAll(async () => {
    for (const c of children) c.kill("SIGKILL");
    await t?.close();
  });

  // A read through the whole request path: key, workspace, pipeline, branch and spec.
  const get = (key: string) => async (base: string) => (await fetch(`${base}/api/v1/pipelines/p/sources/chats/sessions/open-one`, { headers: { authorization: `Bearer ${key}` } })).status;

  it("a revoked key is refused by both servers within the bound", async () => {
    const key = await createApiKey(t.db, workspaceId, owner, { name: "to-revoke", role: "editor" });
    const run = await around(get(key.secret), 200, async () => void (await revokeApiKey(t.db, workspaceId, key.id)));
    expectWithinBound(run, 200, 401);
  }, 60_000);

  it("a member removed (nothing revoked) loses their key's access on both servers within the bound", async () => {
    const mia = await signUp(t.db, { email: "cache-mia@example.com", password: "cache-password-2" });
    await t.db.membership.create({ data: { workspaceId, userId: mia.user.id, role: "admin" } });
    const key = await createApiKey(t.db, workspaceId, { userId: mia.user.id, role: "admin" }, { name: "mia", role: "editor" });
    const run = await around(get(key.secret), 200, async () => void (await t.db.membership.delete({ where: { workspaceId_userId: { workspaceId, userId: mia.user.id } } })));
    expectWithinBound(run, 200, 401);
  }, 60_000);

  it("a new spec version is served by both servers within the bound", async () => {
    const key = (await createApiKey(t.db, workspaceId, owner, { name: "spec", role: "editor" })).secret;
    const pipeline = await t.db.pipeline.findFirstOrThrow({ where: { workspaceId, name: "p" } });
    // The source "notes" exists only in the new version: ingest into it is 404, then 200.
    const ingest = async (base: string, n: number) =>
      (
        await fetch(`${base}/api/v1/pipelines/p/sources/notes/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ sessionId: `s-${n % 5}`, messages: [{ role: "user", content: `note ${n}` }] }),
        })
      ).status;
    const next = new Pipeline("p").source("chats", { format: "chatgpt-export" }).source("notes", { format: "chatgpt-export" }).toSpec();
    const run = await around(ingest, 404, async () => void (await saveVersion(t.db, pipeline.id, { spec: next, message: "add notes" })));
    expectWithinBound(run, 404, 200);
  }, 60_000);
});
