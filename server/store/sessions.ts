/**
 * Session tokens are next-auth JWTs (nothing is stored when one is issued). What the database keeps
 * is how to refuse one before it expires: a signed-out token's id (`RevokedSession`, until the
 * token would have expired anyway) and each user's session generation ("sign out everywhere" adds
 * one; a token carries the generation it was issued at). Every session read asks `sessionStanding`:
 * one statement, a primary-key probe on each table.
 */
import type { DbTx } from "../core/db";

export interface SessionStanding {
  /** The user's session generation now; null when there is no such user (deleted). */
  generation: number | null;
  /** Whether this token id was signed out. */
  revoked: boolean;
}

export async function sessionStanding(db: DbTx, userId: string, jti: string): Promise<SessionStanding> {
  const rows = await db.$queryRawUnsafe<Array<{ generation: number | null; revoked: boolean }>>(
    `SELECT (SELECT u."sessionGeneration" FROM "User" AS u WHERE u.id = $1) AS generation,
            EXISTS (SELECT 1 FROM "RevokedSession" AS r WHERE r.jti = $2) AS revoked`,
    userId,
    jti,
  );
  const row = rows[0];
  return { generation: row?.generation ?? null, revoked: row?.revoked ?? false };
}

/** The user's session generation (what a token issued now carries); null when there is no such user. */
export async function sessionGenerationOf(db: DbTx, userId: string): Promise<number | null> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { sessionGeneration: true } });
  return user?.sessionGeneration ?? null;
}

/**
 * Records a signed-out token (again is a no-op) and deletes the records of tokens that have expired
 * by now: the table holds only tokens that could still be presented.
 */
export async function revokeSessionToken(db: DbTx, input: { jti: string; userId: string; expiresAt: Date }): Promise<void> {
  await db.revokedSession.upsert({ where: { jti: input.jti }, create: input, update: {} });
  await db.revokedSession.deleteMany({ where: { expiresAt: { lt: new Date() } } });
}

/** "Sign out everywhere": every token issued to the user so far is refused from now on. Returns the new generation. */
export async function bumpSessionGeneration(db: DbTx, userId: string): Promise<number> {
  const user = await db.user.update({ where: { id: userId }, data: { sessionGeneration: { increment: 1 } }, select: { sessionGeneration: true } });
  return user.sessionGeneration;
}
