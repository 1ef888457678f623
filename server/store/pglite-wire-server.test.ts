import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureEmbeddedServer, type EmbeddedServer } from "./embedded-server";

/**
 * PGlite hands each chunk of a result to the wire server as a view into its WASM memory, valid
 * only during the callback. A socket that cannot take a chunk at once keeps a reference to it,
 * so the server must copy: otherwise later chunks overwrite the queued bytes (a corrupt result)
 * and a WASM memory growth detaches them (an uncaught RangeError that kills the process).
 */
describe("wire server: large results", () => {
  let dataDir: string;
  let server: EmbeddedServer;
  const errors: unknown[] = [];
  const onUncaught = (err: unknown) => errors.push(err);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "synthex-wire-large-"));
    process.on("uncaughtException", onUncaught);
    server = await ensureEmbeddedServer({ dataDir });
  }, 60_000);
  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const md5 = (s: string) => createHash("md5").update(s).digest("hex");

  it("a 72 MB result arrives whole and byte-exact, and the link keeps working", async () => {
    const rows = 70_000; // 70,000 rows x 1,024 characters of text = 72 MB of DataRow messages
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const result = await client.query<{ i: number; pad: string }>(
        "SELECT i, repeat(md5(i::text), 32) AS pad FROM generate_series(1, $1::int) AS i ORDER BY i",
        [rows],
      );
      expect(result.rows).toHaveLength(rows);
      let bytes = 0;
      let wrong = 0;
      for (const [k, row] of result.rows.entries()) {
        bytes += row.pad.length;
        if (row.i !== k + 1 || row.pad !== md5(String(k + 1)).repeat(32)) wrong++;
      }
      expect(bytes).toBeGreaterThanOrEqual(64 * 1024 * 1024);
      expect(wrong).toBe(0);
      // The same connection, and a new one, still answer.
      expect((await client.query("SELECT 41 + 1 AS n")).rows[0].n).toBe(42);
    } finally {
      await client.end();
    }
    const other = new pg.Client({ connectionString: server.url });
    await other.connect();
    expect((await other.query("SELECT count(*)::int AS c FROM generate_series(1, 10)")).rows[0].c).toBe(10);
    await other.end();
    expect(errors).toEqual([]);
  }, 180_000);
});
