import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
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
    expect(first.url).toMatch(/^postgresql:\/\/postgres:[0-9a-f]{64}@127\.0\.0\.1:\d+\/postgres$/);
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

/** Every path under `dir` with its permission bits. */
function modes(dir: string): Array<{ path: string; mode: number; dir: boolean }> {
  const out = [{ path: dir, mode: statSync(dir).mode & 0o777, dir: true }];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isSymbolicLink()) continue;
    out.push({ path: full, mode: statSync(full).mode & 0o777, dir: entry.isDirectory() });
  }
  return out;
}

/** A raw client: startup message, then whatever `after` sends; resolves with everything the server said. */
function rawSession(port: number, after: (socket: net.Socket) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks)));
    socket.on("connect", () => {
      const params = Buffer.from("user\0postgres\0database\0postgres\0\0");
      const startup = Buffer.alloc(8 + params.length);
      startup.writeInt32BE(8 + params.length, 0);
      startup.writeInt32BE(196608, 4);
      params.copy(startup, 8);
      socket.write(startup);
      after(socket);
    });
  });
}

describe("embedded server: only this OS user gets in", () => {
  let dataDir: string;
  let server: EmbeddedServer;
  let port: number;
  const withPassword = (password: string) => server.url.replace(/postgres:[^@]+@/, `postgres:${password}@`);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "synthex-embedded-auth-"));
    server = await ensureEmbeddedServer({ dataDir });
    port = readOwnerLock(dataDir)!.port!;
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("the right password (from the 0600 db-password file) works", async () => {
    const password = readFileSync(path.join(dataDir, "db-password"), "utf8").trim();
    expect(password).toMatch(/^[0-9a-f]{64}$/);
    expect(server.url).toContain(`:${password}@`);
    expect(await count(server.url, "SELECT 1 AS c")).toBe(1);
  });

  it("a wrong password and no password are refused with 28P01", async () => {
    for (const url of [withPassword("postgres"), withPassword(""), withPassword("0".repeat(64))]) {
      const client = new pg.Client({ connectionString: url });
      const err = await client.connect().then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
      await client.end().catch(() => {});
      expect(err, url).not.toBeNull();
      // pg refuses an empty password itself before asking the server; otherwise the server's answer.
      if (!url.includes("postgres:@")) expect(err!.code).toBe("28P01");
    }
  });

  it("a client that skips authentication and sends a query gets an error and no data", async () => {
    const said = await rawSession(port, (socket) => {
      const sql = Buffer.from("SELECT 'leaked' AS secret\0");
      const q = Buffer.alloc(5 + sql.length);
      q.write("Q", 0);
      q.writeInt32BE(4 + sql.length, 1);
      sql.copy(q, 5);
      socket.write(q);
    });
    expect(said[0]).toBe("R".charCodeAt(0)); // AuthenticationSASL: the server asks for SCRAM
    expect(said.readInt32BE(5)).toBe(10);
    expect(said.toString("latin1")).toContain("SCRAM-SHA-256");
    expect(said.toString("latin1")).toContain("28P01");
    expect(said.toString("latin1")).not.toContain("leaked");
    expect(said.toString("latin1")).not.toMatch(/Z\0\0\0\x05/); // never ReadyForQuery
  });

  it("every file in the data directory is 0600 and every directory 0700, owner.json included", async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query("CREATE TABLE IF NOT EXISTS t (x int)");
    await client.end();
    const open = modes(dataDir);
    expect(open.find((m) => m.path.endsWith("owner.json"))?.mode).toBe(0o600);
    expect(open.find((m) => m.path.endsWith("db-password"))?.mode).toBe(0o600);
    expect(open[0]!.mode).toBe(0o700);
    await server.close();
    const closed = modes(dataDir);
    expect(closed.length).toBeGreaterThan(100); // the PGlite files are in there
    expect(closed.filter((m) => m.mode !== (m.dir ? 0o700 : 0o600))).toEqual([]);
    server = await ensureEmbeddedServer({ dataDir });
    expect(modes(dataDir).filter((m) => m.mode !== (m.dir ? 0o700 : 0o600))).toEqual([]);
  });
});
