/**
 * `npm start` / `npm run dev`: everything a fresh machine needs to serve Synthex.
 * Owns the embedded database (unless DATABASE_URL is set), applies migrations,
 * builds once if there is no build, then runs the app server (scripts/app-server.ts: Next, plus the
 * agent API straight from the HTTP listener; `--dev`: `next dev`) with DATABASE_URL pointing at the owner.
 *
 * Workers: on PostgreSQL, SYNTHEX_WORKERS app servers (default: one per core) share the port
 * through Node's cluster module, so a request uses whichever core is free; a worker that dies is
 * started again. On the embedded database the default is one: PGlite is a single-threaded
 * database inside this process (the owner), so more app processes only queue on it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import cluster, { type Worker } from "node:cluster";
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { startIdleSessionSweeper } from "../server/services/ingest";
import { startWebhookWorker } from "../server/services/webhooks";
import { getDb } from "../server/store/db";
import { prepareRuntimeEnv } from "../server/store/runtime-env";
import { privateByDefault } from "./start-env";

const dev = process.argv.includes("--dev");
const port = process.env.PORT ?? "3000";
// The embedded defaults are a single-machine setup: only this machine reaches the app unless HOST says otherwise.
const host = process.env.HOST?.trim() || "127.0.0.1";
const nextBin = "node_modules/next/dist/bin/next";

/** How many Next servers: SYNTHEX_WORKERS, else one per core on PostgreSQL and one on the embedded database. */
function workerCount(env: NodeJS.ProcessEnv, cores: number): number {
  const raw = env.SYNTHEX_WORKERS?.trim();
  const shared = Boolean(env.DATABASE_URL?.trim());
  if (!raw) return shared ? Math.max(1, cores) : 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`SYNTHEX_WORKERS must be a whole number from 1 to 64 (got "${raw}").`);
  return n;
}

/**
 * The production app server: scripts/app-server.ts (Next as a custom server, answering API-key
 * requests to /api/v1 without Next's router), run through tsx like this script.
 */
const appServer = path.resolve(import.meta.dirname, "app-server.ts");
/**
 * V8's young generation for the app servers: a semi-space of 64 MB instead of Node 20's 16 MB. A
 * REST call leaves tens of kilobytes of short-lived objects (the parsed request, database rows, the
 * answer and its JSON); at 20 clients the default space filled several times a second and
 * scavenges took 12% of an app server's CPU, 4% with 64 MB (profiled, REST search). Costs up to
 * ~100 MB more memory per app server. A --max-semi-space-size of your own (NODE_OPTIONS) wins.
 */
const APP_SERVER_V8_FLAGS = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((a) => a.startsWith("--max-semi-space-size")) ? [] : ["--max-semi-space-size=64"];
const tsxArgv = [...(process.execArgv.some((a) => a.includes("tsx")) ? process.execArgv : [...process.execArgv, "--import", "tsx"]), ...APP_SERVER_V8_FLAGS];
const serverEnv = (): NodeJS.ProcessEnv => ({ ...process.env, NODE_ENV: "production", PORT: port, HOST: host });
/** SYNTHEX_DIRECT_API=off: plain `next start`, every request through Next's router (as before the app server). */
const production =
  process.env.SYNTHEX_DIRECT_API?.trim().toLowerCase() === "off"
    ? { exec: path.resolve(nextBin), args: ["start", "-p", port, "-H", host], execArgv: [...process.execArgv, ...APP_SERVER_V8_FLAGS] }
    : { exec: appServer, args: [], execArgv: tsxArgv };

/** Several app servers on one port (cluster: the primary hands out connections). */
function startWorkers(n: number, onAllExited: (code: number) => void): () => void {
  let stopping = false;
  cluster.setupPrimary(production);
  const fork = () => cluster.fork(serverEnv());
  const workers = new Set<Worker>();
  const add = () => {
    const w = fork();
    workers.add(w);
    w.on("exit", (code, signal) => {
      workers.delete(w);
      if (!stopping) {
        console.error(`[synthex] worker ${w.process.pid} exited (${signal ?? code}); starting another`);
        setTimeout(add, 1000);
      } else if (workers.size === 0) onAllExited(0);
    });
  };
  for (let i = 0; i < n; i++) add();
  return () => {
    stopping = true;
    if (workers.size === 0) onAllExited(0);
    for (const w of workers) w.process.kill("SIGTERM");
  };
}

async function main() {
  const workers = dev ? 1 : workerCount(process.env, availableParallelism());
  const runtime = await prepareRuntimeEnv();
  // Projection webhooks that failed are retried from here, the long-lived process next to the app.
  const stopWebhooks = startWebhookWorker(await getDb());
  // Live sessions that went quiet become records (and runs) even when no further message arrives.
  const stopSweeper = startIdleSessionSweeper(await getDb());
  process.env.NEXTAUTH_URL ??= `http://localhost:${port}`;
  // Private by default: Next.js's anonymous usage telemetry stays off unless the operator sets NEXT_TELEMETRY_DISABLED=0.
  privateByDefault(process.env);
  if (!dev && (!existsSync(".next/BUILD_ID") || process.env.SYNTHEX_REBUILD === "1")) {
    console.log("[synthex] no production build yet: running next build (once: a few minutes on 2 quiet cores, 15+ min when the machine is busy)");
    const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit", env: process.env });
    if (build.status !== 0) {
      await runtime.close();
      process.exit(build.status ?? 1);
    }
  }
  const exit = async (code: number) => {
    stopWebhooks();
    stopSweeper();
    await runtime.close();
    process.exit(code);
  };
  let stop: () => void;
  if (workers > 1) {
    stop = startWorkers(workers, (code) => void exit(code));
  } else {
    const child: ChildProcess = dev
      ? spawn(process.execPath, [nextBin, "dev", "-p", port, "-H", host], { stdio: "inherit", env: process.env })
      : spawn(process.execPath, [...production.execArgv, production.exec, ...production.args], { stdio: "inherit", env: serverEnv() });
    stop = () => child.kill("SIGTERM");
    child.on("exit", (code) => void exit(code ?? 0));
  }
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  console.log(`[synthex] listening on ${host}:${port}${workers > 1 ? ` (${workers} workers)` : ""}; open http://localhost:${port}`);
}

main().catch((err) => {
  console.error("[synthex] could not start:", err instanceof Error ? err.message : err);
  process.exit(1);
});
