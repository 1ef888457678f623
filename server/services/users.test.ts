import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SignInLimitedError, SignInLimiter } from "../auth/sign-in-limiter";
import { createTestDb } from "../store/test-db";
import type { Db } from "../core/db";
import { authenticatePassword, signInWithPassword, signUp } from "./users";

let db: Db;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  await signUp(db, { email: "known@example.com", password: "the right password" });
});
afterAll(async () => close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function refusal(promise: Promise<unknown>): Promise<SignInLimitedError | null> {
  return promise.then(
    () => null,
    (err: unknown) => {
      if (err instanceof SignInLimitedError) return err;
      throw err;
    },
  );
}

describe("password sign-in", () => {
  it("an unknown email costs a bcrypt comparison of the same cost as a real one", async () => {
    const compare = vi.spyOn(bcrypt, "compare");
    try {
      expect(await authenticatePassword(db, "nobody@example.com", "whatever pass")).toBeNull();
      expect(await authenticatePassword(db, "known@example.com", "wrong password")).toBeNull();
      expect(compare).toHaveBeenCalledTimes(2);
      const [unknownHash, knownHash] = compare.mock.calls.map((c) => String(c[1]));
      expect(unknownHash).toMatch(/^\$2[aby]\$10\$/);
      expect(unknownHash!.slice(0, 7)).toBe(knownHash!.slice(0, 7)); // same algorithm and cost
    } finally {
      compare.mockRestore();
    }
    expect(await authenticatePassword(db, "known@example.com", "the right password")).toMatchObject({ email: "known@example.com" });
  });

  it("delays an email from one address after repeated failures, with a growing delay and a clear message", async () => {
    const limiter = new SignInLimiter({ freeFailuresPerEmailAndAddress: 3, freeFailuresPerAddress: 100, firstDelaySeconds: 1 });
    const attempt = (password: string, address = "10.0.0.1") => signInWithPassword(db, { email: "known@example.com", password, address }, limiter);
    for (let i = 0; i < 3; i++) expect(await attempt("wrong password")).toBeNull();
    const first = await refusal(attempt("the right password"));
    expect(first?.message).toBe("Too many failed sign-in attempts for this email from your network. Try again in 1 second.");
    await sleep(1100);
    expect(await attempt("wrong password")).toBeNull(); // allowed again, and fails: the delay doubles
    const second = await refusal(attempt("the right password"));
    expect(second?.retryAfterSeconds).toBe(2);
    expect(second?.message).toMatch(/Try again in 2 seconds\.$/);
    await sleep(2100);
    expect(await attempt("the right password")).toMatchObject({ email: "known@example.com" });
    // A success clears the count: the next failure is free again.
    expect(await attempt("wrong password")).toBeNull();
    expect(await attempt("the right password")).toMatchObject({ email: "known@example.com" });
  });

  it("a victim's right password signs in after an attacker's failures: no one can lock another out", async () => {
    // The production defaults (5 free failures per email and address, 50 per email before it is suspicious).
    const limiter = new SignInLimiter();
    const attempt = (password: string, address: string) => signInWithPassword(db, { email: "known@example.com", password, address }, limiter);
    // An attacker fails from one address until delayed, then from 60 more (a distributed guess).
    for (let i = 0; i < 5; i++) expect(await attempt(`guess ${i} guess`, "203.0.113.66")).toBeNull();
    expect(await refusal(attempt("another guess", "203.0.113.66"))).toMatchObject({ scope: "email" });
    for (let i = 0; i < 60; i++) expect(await attempt(`guess ${i} guess`, `198.51.100.${i}`)).toBeNull();
    // The victim, from their own address, gets in at once.
    expect(await attempt("the right password", "192.0.2.7")).toMatchObject({ email: "known@example.com" });
    // The email is now suspicious: a victim's typo delays their address from the first failure, for a
    // bounded time (1 s here, doubling per further typo), after which the right password gets in.
    expect(await attempt("typo password", "192.0.2.8")).toBeNull();
    const wait = await refusal(attempt("the right password", "192.0.2.8"));
    expect(wait?.retryAfterSeconds).toBe(1);
    await sleep(1100);
    expect(await attempt("the right password", "192.0.2.8")).toMatchObject({ email: "known@example.com" });
  });

  it("locks an address that tries many emails, unknown ones included", async () => {
    const limiter = new SignInLimiter({ freeFailuresPerEmailAndAddress: 100, freeFailuresPerAddress: 4, firstDelaySeconds: 60 });
    for (let i = 0; i < 4; i++) {
      expect(await signInWithPassword(db, { email: `guess${i}@example.com`, password: "guess guess", address: "203.0.113.9" }, limiter)).toBeNull();
    }
    const locked = await refusal(signInWithPassword(db, { email: "known@example.com", password: "the right password", address: "203.0.113.9" }, limiter));
    expect(locked?.scope).toBe("address");
    expect(locked?.message).toBe("Too many failed sign-in attempts from your network. Try again in 60 seconds.");
    // Another address is not affected.
    expect(await signInWithPassword(db, { email: "known@example.com", password: "the right password", address: "203.0.113.10" }, limiter)).not.toBeNull();
  });
});
