/**
 * `npm run worker`: the background work of a production deployment, beside app servers that run
 * `node server.js` (the Docker image) and so have no `npm start` parent process: projection
 * webhook retries, closing idle live sessions, and — with the local executor — resuming runs whose server died (every app
 * server also sweeps, see instrumentation.ts; a claim makes each resume happen once).
 * Needs DATABASE_URL and NEXTAUTH_SECRET; migrates first, like `npm start`.
 */
import { requireEnvironmentSecrets } from "../server/auth/local-secret";
import { startAppServer } from "../server/services/app-server";
import { startIdleSessionSweeper } from "../server/services/ingest";
import { startWebhookWorker } from "../server/services/webhooks";
import { closeDb } from "../server/store/db";
import { openMigratedDb } from "../server/store/runtime-env";

async function main() {
  if (!process.env.DATABASE_URL?.trim()) throw new Error("DATABASE_URL is not set: the worker serves a shared database.");
  requireEnvironmentSecrets(); // before touching the database
  const db = await openMigratedDb();
  const app = startAppServer();
  const stopWebhooks = startWebhookWorker(db);
  const stopSessions = startIdleSessionSweeper(db);
  console.log("[synthex worker] delivering webhooks and resuming interrupted runs");
  const stop = async () => {
    stopWebhooks();
    stopSessions();
    app.stop();
    await closeDb();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  setInterval(() => {}, 1 << 30); // stay alive: the work is on timers that do not hold the process
}

main().catch((err) => {
  console.error("[synthex worker] could not start:", err instanceof Error ? err.message : err);
  process.exit(1);
});
