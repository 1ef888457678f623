/**
 * The webhook delivery queue's one atomic step: claim due deliveries (pending, or a lease that
 * expired because a worker died mid-send) so that two app servers never send the same one.
 */
import type { Db } from "../core/db";

export async function claimDueDeliveries(db: Db, args: { now: Date; leaseUntil: Date; limit: number }): Promise<Array<{ id: string }>> {
  return db.$queryRawUnsafe(
    `UPDATE "WebhookDelivery" SET status = 'sending', "nextAttemptAt" = $1
     WHERE id IN (SELECT id FROM "WebhookDelivery" WHERE status IN ('pending', 'sending') AND "nextAttemptAt" <= $2
                  ORDER BY "nextAttemptAt", id LIMIT $3 FOR UPDATE SKIP LOCKED)
     RETURNING id`,
    args.leaseUntil,
    args.now,
    args.limit,
  );
}
