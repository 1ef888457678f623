/**
 * `npm run worker` on a real PostgreSQL (`TEST_DATABASE_URL`): it migrates, then keeps running;
 * without NEXTAUTH_SECRET it refuses to start and says what to set. Run as package.json runs it,
 * `node --import tsx` (one process): tsx's CLI would relay a SIGTERM to a child process and, when
 * the child has not answered within 30 ms (a loaded machine), SIGKILL it and exit 143 — the
 * worker's graceful stop (close the database, write the query log) would never run.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDatabaseUrl, type TestDatabase } from "../server/store/test-db";

const adminUrl = testDatabaseUrl();
/** The worker's arguments to node, as package.json's "worker" script gives them. */
const workerScript = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts.worker!;
const [node, ...WORKER] = workerScript.split(" ");
let database: TestDatabase | undefined;
afterAll(async () => database?.drop());

describe.skipIf(!adminUrl)("npm run worker", () => {
  it("is one node process (no tsx CLI relaying signals to a child)", () => {
    expect(node).toBe("node");
    expect(WORKER).toEqual(["--import", "tsx", "scripts/worker.ts"]);
  });

  it("refuses to start without NEXTAUTH_SECRET", { timeout: 120_000 }, () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: adminUrl! };
    delete env.NEXTAUTH_SECRET;
    delete env.AUTH_SECRET;
    const res = spawnSync(process.execPath, WORKER, { env, encoding: "utf8", timeout: 110_000 });
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(/could not start: DATABASE_URL is set.*set NEXTAUTH_SECRET/);
  });

  it("migrates an empty database and keeps running until stopped", { timeout: 180_000 }, async () => {
    database = await createTestDatabase(adminUrl!, { empty: true });
    const child = spawn(process.execPath, WORKER, {
      env: { ...process.env, DATABASE_URL: database.url, NEXTAUTH_SECRET: "worker-test-secret" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const until = Date.now() + 150_000;
    while (!out.includes("delivering webhooks") && child.exitCode === null && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    expect(out).toContain("[synthex worker] delivering webhooks and resuming interrupted runs");
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const pg = await import("pg");
    const client = new pg.default.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`);
    await client.end();
    expect(rows[0].n).toBeGreaterThan(0);
  });
});
