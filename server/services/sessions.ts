/**
 * Server-side control over next-auth's JWT sessions (the token itself is a sealed cookie, valid for
 * 30 days after its last refresh). A token issued at sign-in carries three claims besides next-auth's:
 *
 * - `sid`: a random id of its own, kept when next-auth refreshes the token (next-auth's `jti` is new
 *   on every refresh, so it cannot name the session). Signing out records it (`RevokedSession`).
 * - `gen`: the user's session generation at sign-in. "Sign out everywhere" adds one to it.
 * - `host`: the Host the sign-in was sent to (`name:port`). A token presented with another Host
 *   (another port of the same machine, another name) is refused: a session cookie planted by a page
 *   on another localhost port, carrying a token that was issued there, does not sign anyone in here.
 *
 * `checkSession` runs on every session read (next-auth's `jwt` callback: `getServerSession` in pages,
 * route handlers and tRPC, and `/api/auth/session`): exact, no cache: one statement that probes a
 * primary key in `User` and one in `RevokedSession` (server/store/sessions.ts). A refused token
 * reads as signed out, and next-auth clears the cookie.
 */
import { randomBytes } from "node:crypto";
import type { Db } from "../core/db";
import { bumpSessionGeneration, revokeSessionToken, sessionGenerationOf, sessionStanding } from "../store/sessions";

export interface SessionClaims {
  sid: string;
  gen: number;
  host: string;
}

/** Why a session token was refused (a sign-out, "sign out everywhere", another Host, …). */
export class SessionRefusedError extends Error {
  override name = "SessionRefusedError";
}

/** A Host header as sessions compare it: trimmed, lower-case, with its port. */
export function normalizeHost(host: string | null | undefined): string | null {
  const h = host?.trim().toLowerCase();
  return h ? h : null;
}

/** The claims of a token issued now to `userId` at `host`. */
export async function issueSessionClaims(db: Db, userId: string, host: string | null | undefined): Promise<SessionClaims> {
  const bound = normalizeHost(host);
  if (!bound) throw new SessionRefusedError("no Host header on the sign-in request");
  const gen = await sessionGenerationOf(db, userId);
  if (gen === null) throw new SessionRefusedError("no such user");
  return { sid: randomBytes(18).toString("base64url"), gen, host: bound };
}

type TokenLike = { sub?: unknown; sid?: unknown; gen?: unknown; host?: unknown };

/** Throws SessionRefusedError unless the token may sign a request to `host` in (see the file comment). */
export async function checkSession(db: Db, token: TokenLike, host: string | null | undefined): Promise<void> {
  const { sub, sid, gen } = token;
  // Tokens issued before sessions could be signed out have no sid: they cannot be revoked, so they are refused.
  if (typeof sub !== "string" || typeof sid !== "string" || typeof gen !== "number" || typeof token.host !== "string") {
    throw new SessionRefusedError("a session token without the claims this server issues");
  }
  const presented = normalizeHost(host);
  if (presented !== token.host) {
    throw new SessionRefusedError(`a session token issued for Host ${token.host}, presented to Host ${presented ?? "(none)"}`);
  }
  const standing = await sessionStanding(db, sub, sid);
  if (standing.revoked) throw new SessionRefusedError("a signed-out session token");
  if (standing.generation === null) throw new SessionRefusedError("a session token of a user that no longer exists");
  if (standing.generation !== gen) throw new SessionRefusedError("a session token issued before its user signed out everywhere");
}

/**
 * Sign-out: the token is refused from now on. The record is kept for `maxAgeSeconds` (the session
 * lifetime), after which every copy of the token, however recently refreshed, has expired.
 */
export async function signOutSession(db: Db, token: TokenLike | null | undefined, maxAgeSeconds: number): Promise<void> {
  if (!token || typeof token.sid !== "string" || typeof token.sub !== "string") return;
  await revokeSessionToken(db, { jti: token.sid, userId: token.sub, expiresAt: new Date(Date.now() + maxAgeSeconds * 1000) });
}

/** Every session of the user, on every device, is refused from now on (this one too: sign in again). */
export async function signOutEverywhere(db: Db, userId: string): Promise<void> {
  await bumpSessionGeneration(db, userId);
}
