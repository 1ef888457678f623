/**
 * What every long-lived app server process does besides answering requests (started from
 * instrumentation.ts, once per `next start`): refuse to start without the secrets a shared
 * database needs, and — with the local executor — resume runs whose server died mid-run (their
 * lease expired), so several app servers on one database keep every run going — and watch the
 * sources' inbox folders (Settings → Sources; source-inbox.ts) — and on a normal stop (SIGTERM,
 * SIGINT: Next closes its server, then exits) write the query log's buffered entries at once.
 */
import { requireEnvironmentSecrets } from "../auth/local-secret";
import { getDb } from "../store/db";
import { executorKind } from "./executor";
import { privateStagingDir } from "./inbox-roots";
import { flushQueryLogOnStop } from "./query-log";
import { startRunRecovery } from "./run-recovery";
import { startInboxWatchers } from "./source-inbox";

export function startAppServer(env: Record<string, string | undefined> = process.env): { stop(): void } {
  requireEnvironmentSecrets(env);
  const stopRecovery = executorKind(env) === "local" ? startRunRecovery(getDb) : () => {};
  // Uploads and inbox files are staged in a private folder outside every inbox root: said at once when none is usable.
  void privateStagingDir(env).catch((err: unknown) => console.error(`[synthex] ${(err as Error).message}`));
  const inboxes = env.SYNTHEX_INBOX_WATCH === "off" ? null : startInboxWatchers(getDb);
  const flushLog = () => void flushQueryLogOnStop();
  process.once("SIGTERM", flushLog);
  process.once("SIGINT", flushLog);
  return {
    stop: () => {
      stopRecovery();
      void inboxes?.stop();
      process.off("SIGTERM", flushLog);
      process.off("SIGINT", flushLog);
    },
  };
}
