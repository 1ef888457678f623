/**
 * `npm start` / `npm run dev`: everything a fresh machine needs to serve Synthex.
 * Owns the embedded database (unless DATABASE_URL is set), applies migrations,
 * builds once if there is no build, then runs Next with DATABASE_URL pointing at the owner.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { startIdleSessionSweeper } from "../server/services/ingest";
import { startWebhookWorker } from "../server/services/webhooks";
import { getDb } from "../server/store/db";
import { prepareRuntimeEnv } from "../server/store/runtime-env";

const dev = process.argv.includes("--dev");
const port = process.env.PORT ?? "3000";
// The embedded defaults are a single-machine setup: only this machine reaches the app unless HOST says otherwise.
const host = process.env.HOST?.trim() || "127.0.0.1";

async function main() {
  const runtime = await prepareRuntimeEnv();
  // Projection webhooks that failed are retried from here, the long-lived process next to the app.
  const stopWebhooks = startWebhookWorker(await getDb());
  // Live sessions that went quiet become records (and runs) even when no further message arrives.
  const stopSweeper = startIdleSessionSweeper(await getDb());
  process.env.NEXTAUTH_URL ??= `http://localhost:${port}`;
  const nextBin = "node_modules/next/dist/bin/next";
  if (!dev && (!existsSync(".next/BUILD_ID") || process.env.SYNTHEX_REBUILD === "1")) {
    console.log("[synthex] no production build yet: running next build (once: a few minutes on 2 quiet cores, 15+ min when the machine is busy)");
    const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit", env: process.env });
    if (build.status !== 0) {
      await runtime.close();
      process.exit(build.status ?? 1);
    }
  }
  const child = spawn(process.execPath, [nextBin, dev ? "dev" : "start", "-p", port, "-H", host], { stdio: "inherit", env: process.env });
  const stop = () => child.kill("SIGTERM");
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  child.on("exit", async (code) => {
    stopWebhooks();
    stopSweeper();
    await runtime.close();
    process.exit(code ?? 0);
  });
  console.log(`[synthex] listening on ${host}:${port}; open http://localhost:${port}`);
}

main().catch((err) => {
  console.error("[synthex] could not start:", err instanceof Error ? err.message : err);
  process.exit(1);
});
