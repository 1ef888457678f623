/**
 * `synthex eval … --json` ends by the stored run's status even when the database link drops while
 * it waits: the command talks to the database through a TCP relay this test controls, and the
 * moment the eval is stored as completed the relay cuts every connection and refuses new ones for
 * a while (as an overloaded server whose authentications time out does).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locomoFixture } from "../eval/testing/locomo-fixture";
import { ensureEmbeddedServer, type EmbeddedServer } from "../store/embedded-server";

/** Forwards 127.0.0.1:<port> to the database; `cut(ms)` drops every connection and refuses new ones for ms. */
async function startRelay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let downUntil = 0;
  let refused = 0;
  const server = net.createServer((client) => {
    if (Date.now() < downUntil) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut(ms: number) {
      downUntil = Date.now() + ms;
      for (const s of sockets) s.destroy();
      return sockets.size;
    },
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("synthex eval: the wait survives a dropped database link", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-eval-wait-"));
  let db: EmbeddedServer;
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeAll(async () => {
    db = await ensureEmbeddedServer({ dataDir: path.join(dir, "db") });
  }, 60_000);

  it("the eval completes while the link is down; the command still prints it and exits 0", async () => {
    const file = path.join(dir, "tiny-locomo.json");
    writeFileSync(file, JSON.stringify(locomoFixture()));
    const direct = new URL(db.url);
    const relay = await startRelay({ host: direct.hostname, port: Number(direct.port) });
    const viaRelay = new URL(db.url);
    viaRelay.port = String(relay.port);

    const child = spawn(process.execPath, [path.resolve("bin/synthex.mjs"), "eval", "locomo", "--data", file, "--template", "bm25-windows", "--json"], {
      cwd: process.cwd(),
      env: { ...process.env, SYNTHEX_DATA_DIR: path.join(dir, "cli"), DATABASE_URL: viaRelay.toString(), NEXTAUTH_SECRET: "x".repeat(32), SYNTHEX_EXECUTOR: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

    // Watch the stored run over a link of our own; cut the command's link the moment it completes.
    const watcher = new pg.Client({ connectionString: db.url });
    await watcher.connect();
    let cutAt = 0;
    let running = true;
    void exited.then(() => (running = false));
    try {
      while (running && !cutAt) {
        const { rows } = await watcher.query<{ status: string }>(`SELECT status FROM "EvalRun" ORDER BY "createdAt" DESC LIMIT 1`).catch(() => ({ rows: [] }));
        if (rows[0]?.status === "completed") {
          relay.cut(3_000);
          cutAt = Date.now();
        } else await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await watcher.end();
    }
    const code = await exited;
    await relay.close();
    expect(cutAt, `the eval never completed: ${err}`).toBeGreaterThan(0);
    expect(relay.refused(), "the command did not try to reach the database while the link was down").toBeGreaterThan(0);
    expect(err).not.toMatch(/synthex:/);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ benchmark: "locomo", pipeline: "bm25-windows", questions: 8 });
  }, 240_000);
});
