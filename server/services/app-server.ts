/**
 * What every long-lived app server process does besides answering requests (started from
 * instrumentation.ts, once per `next start`): refuse to start without the secrets a shared
 * database needs, and — with the local executor — resume runs whose server died mid-run (their
 * lease expired), so several app servers on one database keep every run going — and watch the
 * sources' inbox folders (Settings → Sources; source-inbox.ts).
 */
import { requireEnvironmentSecrets } from "../auth/local-secret";
import { getDb } from "../store/db";
import { executorKind } from "./executor";
import { startRunRecovery } from "./run-recovery";
import { startInboxWatchers } from "./source-inbox";

export function startAppServer(env: Record<string, string | undefined> = process.env): { stop(): void } {
  requireEnvironmentSecrets(env);
  const stopRecovery = executorKind(env) === "local" ? startRunRecovery(getDb) : () => {};
  const inboxes = env.SYNTHEX_INBOX_WATCH === "off" ? null : startInboxWatchers(getDb);
  return {
    stop: () => {
      stopRecovery();
      void inboxes?.stop();
    },
  };
}
