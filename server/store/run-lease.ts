/**
 * Leases on Run (and EvalRun) rows: which process executes a run in-process, so several app servers on one
 * database execute each run exactly once. A process claims the row (atomically: free, its own,
 * or expired), renews the lease with heartbeats while it works, and releases it when done. A
 * server that dies stops renewing; once the lease expires another server claims the run and
 * resumes it (the engine computes only the work items without a record, so nothing is done
 * twice). Times are the database's clock (`now()`), never a server's; `Run.leaseExpiresAt` is a
 * Prisma `timestamp(3)` holding UTC, hence `now() AT TIME ZONE 'UTC'`.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { DbTx } from "../core/db";
import { retryTransient } from "./db-errors";

const ACTIVE = `('queued', 'running')`;
const NOW = `(now() AT TIME ZONE 'UTC')`;
/**
 * An eval's last heartbeat (claim or renewal), kept in its progress JSON as `heartbeatAt` (UTC): a
 * killed eval is reported as "no heartbeat since" then, not since its lease's expiry (a lease
 * length later).
 */
const HEARTBEAT_AT = `jsonb_build_object('heartbeatAt', to_char(${NOW}, 'YYYY-MM-DD HH24:MI:SS.MS'))`;

/** This process, as a lease owner: `host:pid:random`. */
export const processLeaseOwner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

/** How long a lease holds without a heartbeat (`SYNTHEX_RUN_LEASE_MS`, default 60 s). */
export function runLeaseMs(env: Record<string, string | undefined> = process.env): number {
  const n = Number(env.SYNTHEX_RUN_LEASE_MS);
  return Number.isInteger(n) && n >= 500 ? n : 60_000;
}

/** The leased tables: pipeline runs and eval runs (both have status, leaseOwner, leaseExpiresAt). */
type LeasedTable = "Run" | "EvalRun";

/** Claims an active run for `owner` when nobody holds it, `owner` does, or the lease expired. */
export async function claimRunLease(db: DbTx, runId: string, owner: string, ttlMs: number): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE "Run" SET "leaseOwner" = $2, "leaseExpiresAt" = ${NOW} + $3 * interval '1 millisecond'
     WHERE id = $1 AND status IN ${ACTIVE} AND ("leaseOwner" IS NULL OR "leaseOwner" = $2 OR "leaseExpiresAt" < ${NOW})`,
    runId,
    owner,
    ttlMs,
  );
  return n === 1;
}

/** Heartbeat: extends `owner`'s lease; false when another owner now holds the active run (expired and taken over), true when held or the run has ended. */
export async function renewRunLease(db: DbTx, runId: string, owner: string, ttlMs: number, table: LeasedTable = "Run"): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE "${table}" SET "leaseExpiresAt" = ${NOW} + $3 * interval '1 millisecond'${table === "EvalRun" ? `, progress = progress || ${HEARTBEAT_AT}` : ""}
     WHERE id = $1 AND "leaseOwner" = $2`,
    runId,
    owner,
    ttlMs,
  );
  if (n === 1) return true;
  // Not held: lost only if the run is still active under another owner. One that just ended (its
  // final write clears the lease while a heartbeat is in flight) has nothing left to keep.
  const active = await db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM "${table}" WHERE id = $1 AND status IN ${ACTIVE}`, runId);
  return active.length === 0;
}

/**
 * Gives the lease up when `owner` stops executing the run. A run that ended is simply released; one
 * still active (the executor failed: the database went away mid-run) keeps a lease that expires
 * now, so the next recovery sweep of any server resumes it instead of leaving it running forever.
 */
export async function releaseRunLease(db: DbTx, runId: string, owner: string, table: LeasedTable = "Run"): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE "${table}" SET
       "leaseOwner" = CASE WHEN status IN ${ACTIVE} THEN "leaseOwner" END,
       "leaseExpiresAt" = CASE WHEN status IN ${ACTIVE} THEN ${NOW} END
     WHERE id = $1 AND "leaseOwner" = $2`,
    runId,
    owner,
  );
}

/**
 * Active runs nobody executes, oldest first: those whose executor stopped renewing its lease (a
 * killed server), and queued runs never claimed for `unclaimedAfterMs` (their server died between
 * creating and claiming them; a live server claims its run within milliseconds).
 */
export async function expiredRunLeases(db: DbTx, limit = 10, unclaimedAfterMs = 60_000): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT id FROM "Run"
     WHERE (status IN ${ACTIVE} AND "leaseExpiresAt" < ${NOW})
        OR (status = 'queued' AND "leaseOwner" IS NULL AND "createdAt" < ${NOW} - $2 * interval '1 millisecond')
     ORDER BY COALESCE("leaseExpiresAt", "createdAt") LIMIT $1`,
    limit,
    unclaimedAfterMs,
  );
  return rows.map((r) => r.id);
}

// ---------------------------------------------------------------------------------------------
// Eval runs: the same lease, but an eval whose process died is ended, not resumed (an eval is
// cheap to run again: its pipeline build is incremental, and its scores are stored all at once).

/**
 * Starts a queued eval for `owner` (status running, a lease of `ttlMs`), or takes back a running
 * one `owner` already holds (an Inngest step retried). False when it is not queued (cancelled,
 * ended, or another process started it).
 */
export async function claimEvalLease(db: DbTx, evalRunId: string, owner: string, ttlMs: number): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE "EvalRun" SET status = 'running', "startedAt" = COALESCE("startedAt", ${NOW}), "leaseOwner" = $2,
       "leaseExpiresAt" = ${NOW} + $3 * interval '1 millisecond', progress = progress || ${HEARTBEAT_AT}
     WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND "leaseOwner" = $2))`,
    evalRunId,
    owner,
    ttlMs,
  );
  return n === 1;
}

/**
 * Ends the evals nobody executes any more — running ones whose process stopped renewing its lease
 * (a crash, a restart, a database outage that outlasted it), and queued ones never started within
 * `unclaimedAfterMs` — as cancelled (when a cancel was asked for) or failed, with the reason.
 * Nothing of theirs was stored (an eval stores its cases with its final status, in one
 * transaction). Returns the ended runs.
 */
export async function endExpiredEvalRuns(db: DbTx, unclaimedAfterMs: number): Promise<Array<{ id: string; status: string }>> {
  const rows = await db.$queryRawUnsafe<Array<{ id: string; status: string }>>(
    `UPDATE "EvalRun" SET
       status = CASE WHEN "cancelRequested" THEN 'cancelled' ELSE 'failed' END,
       error = CASE
         WHEN "cancelRequested" THEN 'Cancelled before it finished: no results were stored.'
         WHEN status = 'running' THEN 'The process running this eval stopped (no heartbeat since ' || to_char(COALESCE((progress->>'heartbeatAt')::timestamp, "leaseExpiresAt"), 'YYYY-MM-DD HH24:MI:SS') || ' UTC, e.g. a server restart, crash or database outage): no results were stored. Run it again.'
         ELSE 'The server that queued this eval stopped before starting it: nothing was run. Run it again.'
       END,
       "finishedAt" = ${NOW}, "leaseOwner" = NULL, "leaseExpiresAt" = NULL
     WHERE (status IN ${ACTIVE} AND "leaseExpiresAt" < ${NOW})
        OR (status = 'queued' AND "leaseOwner" IS NULL AND "createdAt" < ${NOW} - $1 * interval '1 millisecond')
     RETURNING id, status`,
    unclaimedAfterMs,
  );
  return rows;
}

/** Writes an eval's progress (while `owner` holds it), keeping its last heartbeat time. */
export async function writeEvalProgress(db: DbTx, evalRunId: string, owner: string, progress: object): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE "EvalRun" SET progress = $3::jsonb || jsonb_strip_nulls(jsonb_build_object('heartbeatAt', progress->'heartbeatAt'))
     WHERE id = $1 AND "leaseOwner" = $2`,
    evalRunId,
    owner,
    JSON.stringify(progress),
  );
}

/**
 * Heartbeats for a lease this process holds: `renew` every third of the lease. A renewal that
 * fails transiently (the database busy or briefly away) is retried within the beat, with short
 * pauses, before the beat is given up; the lease is only lost when it expires unrenewed or another
 * owner took it (then `renew` answers false, logged). Returns the stop function.
 */
export function keepLeaseAlive(renew: () => Promise<boolean>, ttlMs: number, label: string): () => void {
  let stopped = false;
  let beating = false;
  const beat = async () => {
    if (beating || stopped) return;
    beating = true;
    try {
      const held = await retryTransient(renew, `heartbeat of ${label}`, 4, Math.max(50, Math.min(500, Math.floor(ttlMs / 20))));
      if (!held && !stopped) console.error(`[synthex runs] lost the lease on ${label}: another server resumed it`);
    } catch (err) {
      if (!stopped) console.error(`[synthex runs] heartbeat for ${label} failed:`, err instanceof Error ? err.message : String(err));
    } finally {
      beating = false;
    }
  };
  const timer = setInterval(() => void beat(), Math.max(100, Math.floor(ttlMs / 3)));
  timer.unref?.();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
