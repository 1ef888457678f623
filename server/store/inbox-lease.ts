/**
 * Which server process watches an inbox folder (SourceInbox.watcherId / watchedUntil). Every app
 * server watches the inbox folders (`npm start` on PostgreSQL runs one per core, and `npm run
 * worker` beside them); without a claim each would import every dropped file. A process claims a
 * row (atomically: free, its own, or expired) on each resync, which renews the lease, and releases
 * its rows when it stops. A process that dies stops renewing; once the lease expires another
 * claims the folder and watches it (its first scan imports what arrived meanwhile; content already
 * imported adds nothing). Times are the database's clock, as in run-lease.ts.
 */
import type { DbTx } from "../core/db";

const NOW = `(now() AT TIME ZONE 'UTC')`;

/** Claims for `owner` the inbox rows among `ids` that nobody holds, `owner` holds, or whose lease expired; returns the ids now held. */
export async function claimInboxWatches(db: DbTx, ids: string[], owner: string, ttlMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const held = await db.$queryRawUnsafe<{ id: string }[]>(
    `UPDATE "SourceInbox" SET "watcherId" = $2, "watchedUntil" = ${NOW} + $3 * interval '1 millisecond'
     WHERE id = ANY($1::text[]) AND ("watcherId" IS NULL OR "watcherId" = $2 OR "watchedUntil" < ${NOW})
     RETURNING id`,
    ids,
    owner,
    ttlMs,
  );
  return new Set(held.map((r) => r.id));
}

/** Gives up `owner`'s claims (a stopping server), so another process takes the folders over at its next resync. */
export async function releaseInboxWatches(db: DbTx, owner: string): Promise<number> {
  return db.$executeRawUnsafe(`UPDATE "SourceInbox" SET "watcherId" = NULL, "watchedUntil" = NULL WHERE "watcherId" = $1`, owner);
}
