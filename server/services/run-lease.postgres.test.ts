/**
 * Several app servers on one PostgreSQL (`TEST_DATABASE_URL`): a run executes exactly once when two
 * processes try to execute it, and a run whose server was killed mid-run (SIGKILL, no clean-up) is
 * resumed by another after its lease expires, ending with exactly the records of an uninterrupted run;
 * webhook deliveries sent by two servers' workers at once reach the receiver once each.
 */
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatgptExport } from "../cli/cli-fixtures";
import type { ModelProvider } from "../engine/model";
import { OfflineModel } from "../llm/offline-model";
import { Pipeline } from "../pipeline/sdk";
import { createTestDb, testDatabaseUrl, type TestDb } from "../store/test-db";
import { settleBackgroundWork } from "./background";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { resumeExpiredRuns } from "./run-recovery";
import { createRun, executeRunRow } from "./runs";
import { signUp } from "./users";
import { deliverPending } from "./webhooks";

const adminUrl = testDatabaseUrl();
const dir = mkdtempSync(path.join(tmpdir(), "synthex-lease-"));
let a: TestDb;
let b: TestDb;

beforeAll(async () => {
  if (!adminUrl) return;
  a = await createTestDb();
  // The second "server": its own connection pool on the same database.
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const { PrismaClient } = await import("../generated/prisma/client");
  const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: a.url! }) });
  b = { ...a, db, close: () => db.$disconnect() };
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Counts model calls per input, to see whether any item was computed twice. */
function countingModel(calls: Map<string, number>): ModelProvider {
  const offline = new OfflineModel();
  return {
    complete: async (req) => {
      const key = JSON.stringify(req);
      calls.set(key, (calls.get(key) ?? 0) + 1);
      return offline.complete(req);
    },
  };
}

describe.skipIf(!adminUrl)("runs on several app servers", () => {
  it("two servers executing the same run: it executes once", { timeout: 300_000 }, async () => {
    const { workspace } = await signUp(a.db, { email: "lease@example.com", password: "lease-password-1" });
    const spec = new Pipeline("twice", { agent: "t" })
      .source("notes", { format: "jsonl" })
      .transform("summaries", { from: "notes", prompt: "Summarize: {{ record.content }}" })
      .toSpec();
    const { pipeline } = await createPipeline(a.db, workspace.id, { name: "twice", spec });
    await appendSourceRecords(
      a.db,
      pipeline.id,
      "notes",
      Array.from({ length: 40 }, (_, i) => ({ externalId: `n${i}`, content: `Note ${i}: the meeting about budget ${i} moved to Friday.`, metadata: {} })),
    );
    const run = await createRun(a.db, { workspaceId: workspace.id, pipelineId: pipeline.id });
    const calls = new Map<string, number>();
    const model = countingModel(calls);
    const [first, second] = await Promise.all([
      executeRunRow(a.db, run.id, { model, lease: { owner: "server-a" }, runOptions: { batchSize: 5 } }),
      executeRunRow(b.db, run.id, { model, lease: { owner: "server-b" }, runOptions: { batchSize: 5 } }),
    ]);
    const final = await a.db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(final.status).toBe("completed");
    expect([first.status, second.status].filter((s) => s === "completed").length).toBeGreaterThanOrEqual(1);
    expect(calls.size).toBe(40);
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
    expect(final.leaseOwner).toBeNull();
  });

  it("a server killed mid-run leaves a run that another resumes after the lease expires", { timeout: 900_000 }, async () => {
    const file = path.join(dir, "conversations.json");
    writeFileSync(file, JSON.stringify(chatgptExport(400)));
    const env = { ...process.env, DATABASE_URL: a.url!, SYNTHEX_DATA_DIR: path.join(dir, "data"), SYNTHEX_RUN_LEASE_MS: "2000" };
    const cli = path.resolve("bin/synthex.mjs");
    const init = spawnSync(process.execPath, [cli, "init", "memory", "--from", file], { env, encoding: "utf8", timeout: 300_000 });
    expect(init.stderr).toBe("");
    expect(init.status).toBe(0);

    // Server 1: `synthex run` executes in its own process; SIGKILL it once the run has made records.
    const child = spawn(process.execPath, [cli, "run"], { env, stdio: "ignore", detached: true });
    const pipeline = await a.db.pipeline.findFirstOrThrow({ where: { name: "memory" } });
    let runId = "";
    let made = 0;
    for (let i = 0; i < 3000 && !runId; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const run = await a.db.run.findFirst({ where: { pipelineId: pipeline.id, status: "running", leaseOwner: { not: null } } });
      if (!run) continue;
      made = await a.db.record.count({ where: { runId: run.id } });
      if (made > 0) runId = run.id;
    }
    expect(runId).not.toBe("");
    // bin/synthex.mjs starts the CLI as a child: kill the whole process group, as a crash would.
    process.kill(-child.pid!, "SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const killed = await a.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(killed.status).toBe("running");
    const partial = await a.db.record.count({ where: { runId } });
    expect(partial).toBeGreaterThan(0);

    // Server 2 sweeps: nothing to resume while the lease holds, then the run once it expired.
    expect(await resumeExpiredRuns(b.db, { lease: { owner: "server-2", ttlMs: 2000 } })).not.toContain(runId);
    const expires = killed.leaseExpiresAt!.getTime();
    await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now()) + 2500));
    expect(await resumeExpiredRuns(b.db, { lease: { owner: "server-2", ttlMs: 2000 } })).toEqual([runId]);
    await settleBackgroundWork();

    const resumed = await a.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(resumed.status).toBe("completed");
    expect(resumed.leaseOwner).toBeNull();
    // Exactly the records of an uninterrupted run: nothing left to do, one transcript per conversation.
    const again = spawnSync(process.execPath, [cli, "run", "--json"], { env, encoding: "utf8", timeout: 300_000 });
    expect(again.status).toBe(0);
    const steps = JSON.parse(again.stdout).stats.steps as Array<{ step: string; output: number }>;
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.filter((s) => s.output > 0)).toEqual([]);
    const transcripts = await a.db.record.count({ where: { step: "transcripts" } });
    expect(transcripts).toBe(403);
  });
});

describe.skipIf(!adminUrl)("webhooks with several app servers", () => {
  it("two servers delivering at once send each webhook once", { timeout: 120_000 }, async () => {
    const received: number[] = [];
    const receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        received.push((JSON.parse(body) as { n: number }).n);
        // A slow receiver widens the window in which both workers are sending.
        setTimeout(() => res.writeHead(200).end("ok"), 20);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const { workspace } = await signUp(a.db, { email: "hooks@example.com", password: "hooks-password-1" });
      const n = 60;
      await a.db.webhookDelivery.createMany({
        data: Array.from({ length: n }, (_, i) => ({ workspaceId: workspace.id, pipelineId: "p", output: "context", url, payload: { n: i }, status: "pending" })),
      });
      // Each server's worker ticks a few times, concurrently with the other's.
      const worker = (db: typeof a.db) => (async () => {
        for (let i = 0; i < 4; i++) await deliverPending(db, { limit: 10 });
      })();
      await Promise.all([worker(a.db), worker(b.db), worker(a.db), worker(b.db)]);
      expect(received.length).toBe(n);
      expect(new Set(received).size).toBe(n);
      expect(await a.db.webhookDelivery.count({ where: { status: "delivered", attempts: 1 } })).toBe(n);
    } finally {
      receiver.close();
    }
  });
});

describe.skipIf(!adminUrl)("the database going away mid-run", () => {
  it("connections cut mid-run: the run ends failed or completed, never half-committed; a re-run completes it", { timeout: 300_000 }, async () => {
    const { workspace } = await signUp(a.db, { email: "outage@example.com", password: "outage-password-1" });
    const spec = new Pipeline("outage", { agent: "t" })
      .source("notes", { format: "jsonl" })
      .transform("summaries", { from: "notes", prompt: "Summarize: {{ record.content }}" })
      .toSpec();
    const { pipeline } = await createPipeline(a.db, workspace.id, { name: "outage", spec });
    const n = 400;
    await appendSourceRecords(
      a.db,
      pipeline.id,
      "notes",
      Array.from({ length: n }, (_, i) => ({ externalId: `o${i}`, content: `Note ${i}: the supplier call about order ${i} moved.`, metadata: {} })),
    );
    const run = await createRun(a.db, { workspaceId: workspace.id, pipelineId: pipeline.id });
    const running = executeRunRow(a.db, run.id, { model: new OfflineModel(), runOptions: { batchSize: 10, maxAttempts: 1 } }).catch((e: Error) => e);
    while ((await b.db.record.count({ where: { runId: run.id } })) === 0) await new Promise((r) => setTimeout(r, 50));
    // The server ends every session of server A's pool, mid-batch, as a failover or restart would.
    const dbName = new URL(a.url!).pathname.slice(1);
    await b.db.$executeRawUnsafe(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName);
    await running;
    const after = await b.db.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(["failed", "completed", "running"]).toContain(after.status);
    // Never half-committed: every summary has its provenance edge and its branch pointer.
    const orphans = await b.db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM "Record" r WHERE r."pipelineId" = $1 AND r.step = 'summaries'
         AND (NOT EXISTS (SELECT 1 FROM "RecordEdge" e WHERE e."childId" = r.id)
              OR NOT EXISTS (SELECT 1 FROM "BranchPointer" p WHERE p."recordId" = r.id))`,
      pipeline.id,
    );
    expect(orphans[0]!.n).toBe(0);
    // What was not finished is finished by running again (or by the lease sweep if it was left running).
    if (after.status === "running") {
      // Left active by a failed executor: its lease expired at once, so the next sweep resumes it.
      expect(await resumeExpiredRuns(b.db, { model: new OfflineModel(), lease: { owner: "server-2" } })).toEqual([run.id]);
      await settleBackgroundWork();
      expect((await b.db.run.findUniqueOrThrow({ where: { id: run.id } })).status).toBe("completed");
    } else {
      const again = await createRun(b.db, { workspaceId: workspace.id, pipelineId: pipeline.id });
      await executeRunRow(b.db, again.id, { model: new OfflineModel() });
    }
    expect(await b.db.record.count({ where: { pipelineId: pipeline.id, step: "summaries" } })).toBe(n);
  });
});
