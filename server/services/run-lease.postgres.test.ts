/**
 * Several app servers on one PostgreSQL (`TEST_DATABASE_URL`): a run executes exactly once when two
 * processes try to execute it, and a run whose server was killed mid-run (SIGKILL, no clean-up) is
 * resumed by another after its lease expires, ending with exactly the records of an uninterrupted run.
 */
import { spawn, spawnSync } from "node:child_process";
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
import { createRun, executeRunRow, resumeExpiredRuns } from "./runs";
import { signUp } from "./users";

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
