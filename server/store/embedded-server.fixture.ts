/**
 * Child process for embedded-server.test.ts (run with `node --import tsx`). Prints one JSON line.
 *   find  <dataDir>              ensureEmbeddedServer and report (must not own)
 *   write <dataDir> <tag> <n>    find the owner, then write n rows in n concurrent transactions
 *   own   <dataDir>              own the directory, write a marker row, report, wait for a signal
 */
import pg from "pg";
import { ensureEmbeddedServer } from "./embedded-server";

const [mode, dataDir, tag = "x", count = "200"] = process.argv.slice(2);
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function main() {
  const server = await ensureEmbeddedServer({ dataDir, waitMs: 20_000 });
  if (mode === "find") {
    print({ owned: server.owned, url: server.url, pid: process.pid });
    await server.close();
    return;
  }
  if (mode === "own") {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query("CREATE TABLE IF NOT EXISTS marker (pid int, at timestamptz default now())");
    await client.query("INSERT INTO marker (pid) VALUES ($1)", [process.pid]);
    await client.end();
    print({ owned: server.owned, url: server.url, pid: process.pid });
    setInterval(() => {}, 1 << 30); // until SIGTERM / SIGKILL
    return;
  }
  if (mode === "write") {
    if (server.owned) {
      await server.close();
      throw new Error("writer unexpectedly owns the database");
    }
    const pool = new pg.Pool({ connectionString: server.url, max: 4 });
    let mismatches = 0;
    const jobs = Array.from({ length: Number(count) }, async (_, i) => {
      // A parameterized query outside a transaction (extended protocol, unnamed portal) ...
      const echo = await pool.query("SELECT $1::text AS tag, $2::int AS n", [tag, i]);
      if (echo.rows[0].tag !== tag || echo.rows[0].n !== i) mismatches++;
      // ... and a transaction that reads its own write.
      const c = await pool.connect();
      try {
        await c.query("BEGIN");
        await c.query("INSERT INTO rows (tag, n) VALUES ($1, $2)", [tag, i]);
        const seen = await c.query("SELECT count(*)::int AS c FROM rows WHERE tag = $1 AND n = $2", [tag, i]);
        if (seen.rows[0].c !== 1) mismatches++;
        await c.query("COMMIT");
      } catch (err) {
        await c.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        c.release();
      }
    });
    const results = await Promise.allSettled(jobs);
    await pool.end();
    const failures = results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason));
    print({ owned: server.owned, mismatches, failures: failures.slice(0, 3), failed: failures.length });
    return;
  }
  throw new Error(`unknown mode ${mode}`);
}

main().catch((err) => {
  print({ error: err instanceof Error ? err.message : String(err) });
  process.exit(1);
});
