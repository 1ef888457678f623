import { describe, expect, it } from "vitest";
import { isTransientDbError, retryTransient } from "./db-errors";

describe("isTransientDbError", () => {
  it("a lost, refused or timed-out link is transient, by code, message or cause", () => {
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toBe(true);
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "57P01" }))).toBe(true);
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "P1001" }))).toBe(true);
    expect(isTransientDbError(new Error("Raw query failed. Code: `08006`. Message: `authentication timed out`"))).toBe(true);
    expect(isTransientDbError(new Error("Connection terminated unexpectedly"))).toBe(true);
    // Prisma P2028 under load (an eval of six templates at once failed on it).
    expect(isTransientDbError(Object.assign(new Error("Transaction API error: Unable to start a transaction in the given time."), { code: "P2028" }))).toBe(true);
    expect(isTransientDbError(new Error("wrapped", { cause: Object.assign(new Error("inner"), { code: "ECONNREFUSED" }) }))).toBe(true);
  });

  it("errors in the query or the data are not", () => {
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "42601" }))).toBe(false);
    expect(isTransientDbError(new Error("Eval run abc not found."))).toBe(false);
    expect(isTransientDbError(new Error("duplicate key value violates unique constraint"))).toBe(false);
    expect(isTransientDbError(null)).toBe(false);
  });
});

describe("retryTransient", () => {
  it("runs again after a transient error and gives up on others at once", async () => {
    let calls = 0;
    const value = await retryTransient(async () => {
      if (++calls < 3) throw new Error("Transaction API error: Unable to start a transaction in the given time.");
      return "done";
    }, "test", 5, 1);
    expect([value, calls]).toEqual(["done", 3]);
    let other = 0;
    await expect(retryTransient(async () => {
      other++;
      throw new Error("duplicate key value violates unique constraint");
    }, "test", 5, 1)).rejects.toThrow(/duplicate key/);
    expect(other).toBe(1);
    let always = 0;
    await expect(retryTransient(async () => {
      always++;
      throw Object.assign(new Error("x"), { code: "ECONNRESET" });
    }, "test", 3, 1)).rejects.toThrow("x");
    expect(always).toBe(3);
  });
});
