import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWireServer, type WireServer } from "./pglite-wire-server";

/**
 * The idle-in-transaction limit of the embedded database's wire server cuts a client that holds the
 * one session and sends nothing while others wait. The CLI runs builds and evals in the process
 * that owns the database: a long CPU task there blocks the event loop, and a client whose next
 * statement was sent meanwhile is not stuck, only unheard. The limit here is 300 ms instead of 60 s.
 */
describe("wire server: idle-in-transaction limit", () => {
  let db: PGlite;
  let server: WireServer;
  const errors: string[] = [];
  const password = "idle-test";
  const client = async () => {
    const c = new pg.Client({ host: server.host, port: server.port, user: "u", password, database: "postgres" });
    c.on("error", () => {});
    await c.connect();
    return c;
  };

  beforeAll(async () => {
    db = new PGlite();
    server = await startWireServer(db, { password, idleInTransactionTimeoutMs: 300, onError: (e) => errors.push(e instanceof Error ? e.message : String(e)) });
    const c = await client();
    await c.query("CREATE TABLE t (tag text)");
    await c.end();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.close();
  });

  it("does not cut a client whose next statement waited behind a CPU-bound task of the owner's process", async () => {
    errors.length = 0;
    const [a, b] = [await client(), await client()];
    await a.query("BEGIN");
    await a.query("INSERT INTO t VALUES ('busy')");
    const waiting = b.query<{ c: number }>("SELECT count(*)::int AS c FROM t WHERE tag = 'busy'");
    await new Promise((r) => setTimeout(r, 50)); // b's query is at the server, waiting for a's transaction
    // Another task of this process computes for a second without yielding (4 × the limit).
    const until = Date.now() + 1200;
    while (Date.now() < until);
    const committed = a.query("COMMIT"); // sent at once; the server reads it once the loop is free
    await expect(committed).resolves.toBeDefined();
    expect((await waiting).rows[0]!.c).toBe(1);
    expect(errors).toEqual([]);
    await Promise.all([a.end(), b.end()]);
  });

  it("still cuts a client that holds a transaction and sends nothing while the loop is free", async () => {
    errors.length = 0;
    const [a, b] = [await client(), await client()];
    await a.query("BEGIN");
    await a.query("INSERT INTO t VALUES ('idle')");
    const started = Date.now();
    const { rows } = await b.query<{ c: number }>("SELECT count(*)::int AS c FROM t WHERE tag = 'idle'");
    expect(rows[0]!.c).toBe(0); // rolled back
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(errors).toEqual(["disconnecting a client idle in a transaction for over 300 ms while others wait"]);
    await Promise.all([a.end().catch(() => {}), b.end()]);
  });
});
