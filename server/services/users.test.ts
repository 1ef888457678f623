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

  it("locks an email after repeated failures, with a growing delay and a clear message, even for the right password", async () => {
    const limiter = new SignInLimiter({ freeFailuresPerEmail: 3, freeFailuresPerAddress: 100, firstDelaySeconds: 1 });
    const attempt = (password: string, address = "10.0.0.1") => signInWithPassword(db, { email: "known@example.com", password, address }, limiter);
    for (let i = 0; i < 3; i++) expect(await attempt("wrong password")).toBeNull();
    const first = await refusal(attempt("the right password"));
    expect(first?.message).toBe("Too many failed sign-in attempts for this email. Try again in 1 second.");
    await sleep(1100);
    expect(await attempt("wrong password")).toBeNull(); // allowed again, and fails: the delay doubles
    const second = await refusal(attempt("the right password", "10.0.0.2"));
    expect(second?.retryAfterSeconds).toBe(2);
    expect(second?.message).toMatch(/Try again in 2 seconds\.$/);
    await sleep(2100);
    expect(await attempt("the right password")).toMatchObject({ email: "known@example.com" });
    // A success clears the count: the next failure is free again.
    expect(await attempt("wrong password")).toBeNull();
    expect(await attempt("the right password")).toMatchObject({ email: "known@example.com" });
  });

  it("locks an address that tries many emails, unknown ones included", async () => {
    const limiter = new SignInLimiter({ freeFailuresPerEmail: 100, freeFailuresPerAddress: 4, firstDelaySeconds: 60 });
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
