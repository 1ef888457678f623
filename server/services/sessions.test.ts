/**
 * The session checks of server/services/sessions.ts on a real (embedded) database: what every
 * session read asks, sign-out of one token, "sign out everywhere", the Host binding, and pruning of
 * sign-out records past their expiry. The end-to-end path (next-auth, cookies, real HTTP) is in
 * server/auth/sessions.test.ts; the cookie names in server/auth/cookies.ts are checked here too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authCookies, sessionCookieName } from "../auth/cookies";
import type { Db } from "../core/db";
import { createTestDb } from "../store/test-db";
import { checkSession, issueSessionClaims, SessionRefusedError, signOutEverywhere, signOutSession } from "./sessions";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let userId = "";

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  userId = (await signUp(db, { email: "s@example.com", password: "a-long-password-1" })).user.id;
});
afterAll(async () => close());

const HOST = "localhost:3123";
async function issue(host = HOST) {
  return { sub: userId, ...(await issueSessionClaims(db, userId, host)) };
}
async function refusal(token: object, host: string | null = HOST): Promise<string | null> {
  return checkSession(db, token, host).then(
    () => null,
    (err: unknown) => {
      if (err instanceof SessionRefusedError) return err.message;
      throw err;
    },
  );
}

describe("session checks", () => {
  it("a fresh token passes; after its sign-out it is refused and another token of the user is not", async () => {
    const a = await issue();
    const b = await issue();
    expect(a.sid).not.toBe(b.sid);
    expect(await refusal(a)).toBeNull();
    await signOutSession(db, a, 3600);
    expect(await refusal(a)).toMatch(/signed-out/);
    expect(await refusal(b)).toBeNull();
    await signOutSession(db, a, 3600); // twice: no error
  });

  it("sign out everywhere refuses every token issued before it; one issued after passes", async () => {
    const before = await issue();
    await signOutEverywhere(db, userId);
    expect(await refusal(before)).toMatch(/signed out everywhere/);
    expect(await refusal(await issue())).toBeNull();
  });

  it("a token is refused at another Host (another port, another name); the Host compares case-insensitively", async () => {
    const t = await issue("LocalHost:3123");
    expect(await refusal(t, "localhost:3123")).toBeNull();
    expect(await refusal(t, "localhost:4000")).toMatch(/issued for Host localhost:3123, presented to Host localhost:4000/);
    expect(await refusal(t, "127.0.0.1:3123")).toMatch(/presented to Host 127\.0\.0\.1:3123/);
    expect(await refusal(t, null)).toMatch(/presented to Host \(none\)/);
    await expect(issueSessionClaims(db, userId, null)).rejects.toThrow(SessionRefusedError);
  });

  it("tokens without the claims (issued before this check existed) and tokens of deleted users are refused", async () => {
    expect(await refusal({ sub: userId })).toMatch(/without the claims/);
    expect(await refusal({ ...(await issue()), sub: "no-such-user" })).toMatch(/no longer exists/);
  });

  it("a sign-out record is kept until its expiry, then deleted by the next sign-out", async () => {
    // A record from a sign-out 30 days ago: every copy of that token has expired by now.
    await db.revokedSession.create({ data: { jti: "expired-sid", userId, expiresAt: new Date(Date.now() - 1000) } });
    const fresh = await issue();
    await signOutSession(db, fresh, 3600);
    expect(await db.revokedSession.count({ where: { jti: "expired-sid" } })).toBe(0);
    expect(await db.revokedSession.count({ where: { jti: fresh.sid } })).toBe(1);
    expect(await db.revokedSession.count({ where: { expiresAt: { lt: new Date() } } })).toBe(0);
  });
});

describe("session cookie names", () => {
  it("__Host- over HTTPS (Secure, Path=/), the port in the name over http", () => {
    expect(sessionCookieName("https://synthex.example.com")).toBe("__Host-synthex.session-token");
    const https = authCookies("https://synthex.example.com");
    for (const c of Object.values(https)) {
      expect(c.name.startsWith("__Host-")).toBe(true);
      expect(c.options).toMatchObject({ secure: true, path: "/", httpOnly: true });
      expect(c.options).not.toHaveProperty("domain");
    }
    expect(sessionCookieName("http://localhost:3123")).toBe("synthex-3123.session-token");
    expect(authCookies("http://localhost:3123").csrfToken).toMatchObject({ name: "synthex-3123.csrf-token", options: { secure: false } });
    expect(sessionCookieName("http://synthex.lan")).toBe("synthex-80.session-token");
    // next-auth reads every cookie whose name starts with the session cookie's as a chunk of it: ports must not prefix each other.
    expect(sessionCookieName("http://localhost:31234").startsWith(sessionCookieName("http://localhost:3123"))).toBe(false);
  });
});
