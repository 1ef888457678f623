import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureEmbeddedServer, readOwnerLock, type EmbeddedServer } from "./embedded-server";

const FIXTURE = path.join(import.meta.dirname, "embedded-server.fixture.ts");

interface ChildAnswer {
  owned?: boolean;
  url?: string;
  pid?: number;
  [key: string]: unknown;
}

function startChild(args: string[]): { child: ChildProcess; firstLine: Promise<ChildAnswer>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SYNTHEX_DB_PORT: "" },
  });
  let out = "";
  let err = "";
  const firstLine = new Promise<ChildAnswer>((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const nl = out.indexOf("\n");
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.once("exit", (code) => reject(new Error(`child ${args[0]} exited ${code} before answering: ${out}${err}`)));
  });
  child.stderr!.on("data", (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, firstLine, exited };
}

async function count(url: string, sql: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0].c;
  } finally {
    await client.end();
  }
}

describe("embedded server", () => {
  let dataDir: string;
  let first: EmbeddedServer;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "synthex-embedded-"));
  });
  afterAll(async () => {
    await first?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the first call owns the directory; a second call finds the owner", async () => {
    first = await ensureEmbeddedServer({ dataDir });
    expect(first.owned).toBe(true);
    expect(first.url).toMatch(/^postgresql:\/\/postgres:postgres@127\.0\.0\.1:\d+\/postgres$/);
    const lock = readOwnerLock(dataDir);
    expect(lock).toMatchObject({ pid: process.pid, state: "ready" });
    expect(first.url).toContain(`:${lock!.port}/`);

    const second = await ensureEmbeddedServer({ dataDir });
    expect(second).toMatchObject({ owned: false, url: first.url });
    await second.close(); // a non-owner's close does nothing
    expect(await count(first.url, "SELECT 1 AS c")).toBe(1);
  });

  it("a second process finds the owner instead of opening the directory", async () => {
    const { firstLine, exited } = startChild(["find", dataDir]);
    const answer = await firstLine;
    expect(answer).toMatchObject({ owned: false, url: first.url });
    expect(await exited).toBe(0);
  });

  it("two client processes write 200 rows each concurrently, in transactions", async () => {
    const client = new pg.Client({ connectionString: first.url });
    await client.connect();
    await client.query("CREATE TABLE rows (id serial PRIMARY KEY, tag text NOT NULL, n int NOT NULL, UNIQUE (tag, n))");
    await client.end();

    const a = startChild(["write", dataDir, "a", "200"]);
    const b = startChild(["write", dataDir, "b", "200"]);
    const [ra, rb] = await Promise.all([a.firstLine, b.firstLine]);
    for (const r of [ra, rb]) expect(r).toEqual({ owned: false, mismatches: 0, failures: [], failed: 0 });
    expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0]);
    expect(await count(first.url, "SELECT count(*)::int AS c FROM rows")).toBe(400);
    expect(await count(first.url, "SELECT count(DISTINCT (tag, n))::int AS c FROM rows")).toBe(400);
  });

  it("a client that dies inside a transaction is rolled back and does not block others", async () => {
    const dying = new pg.Client({ connectionString: first.url });
    await dying.connect();
    dying.on("error", () => {});
    await dying.query("BEGIN");
    await dying.query("INSERT INTO rows (tag, n) VALUES ($1, $2)", ["dead", 1]);
    // Abrupt disconnect, no ROLLBACK sent.
    (dying as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect(await count(first.url, "SELECT count(*)::int AS c FROM rows WHERE tag = 'dead'")).toBe(0);
    expect(await count(first.url, "SELECT count(*)::int AS c FROM rows")).toBe(400);
  });

  it("after the owner closes, the lock is gone and the directory reopens cleanly", async () => {
    await first.close();
    expect(readOwnerLock(dataDir)).toBeNull();
    first = await ensureEmbeddedServer({ dataDir, idleInTransactionTimeoutMs: 300 });
    expect(first.owned).toBe(true);
    expect(await count(first.url, "SELECT count(*)::int AS c FROM rows")).toBe(400);
  });

  it("a client idle inside a transaction while others wait is disconnected and rolled back", async () => {
    const idle = new pg.Client({ connectionString: first.url });
    await idle.connect();
    idle.on("error", () => {});
    await idle.query("BEGIN");
    await idle.query("INSERT INTO rows (tag, n) VALUES ($1, $2)", ["idle", 1]);
    const started = Date.now();
    expect(await count(first.url, "SELECT count(*)::int AS c FROM rows WHERE tag = 'idle'")).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250); // waited for the idle transaction first
    await idle.end().catch(() => {});
    await first.close();
  });

  it("a lock left by a killed owner (dead pid) is taken over; its data survived", async () => {
    const owner = startChild(["own", dataDir]);
    const answer = await owner.firstLine;
    expect(answer.owned).toBe(true);
    expect(readOwnerLock(dataDir)).toMatchObject({ pid: answer.pid, state: "ready" });
    owner.child.kill("SIGKILL");
    await owner.exited;
    expect(readOwnerLock(dataDir)?.pid).toBe(answer.pid); // stale lock still there

    first = await ensureEmbeddedServer({ dataDir });
    expect(first.owned).toBe(true);
    expect(readOwnerLock(dataDir)?.pid).toBe(process.pid);
    expect(await count(first.url, `SELECT count(*)::int AS c FROM marker WHERE pid = ${answer.pid}`)).toBe(1);
    expect(await count(first.url, "SELECT count(*)::int AS c FROM rows")).toBe(400);
    await first.close();
  });

  it("a lock whose pid is dead but never wrote a port is taken over too", async () => {
    writeFileSync(path.join(dataDir, "owner.json"), JSON.stringify({ pid: 2 ** 22 + 7, state: "starting", startedAt: "x" }));
    first = await ensureEmbeddedServer({ dataDir });
    expect(first.owned).toBe(true);
    await first.close();
    expect(existsSync(path.join(dataDir, "owner.json"))).toBe(false);
  });

  it("SIGTERM makes an owner close the database and remove its lock", async () => {
    const owner = startChild(["own", dataDir]);
    const answer = await owner.firstLine;
    expect(answer.owned).toBe(true);
    owner.child.kill("SIGTERM");
    await owner.exited;
    expect(readOwnerLock(dataDir)).toBeNull();
  });
});
