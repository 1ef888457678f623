import { describe, expect, it } from "vitest";
import { isTransientDbError } from "./db-errors";

describe("isTransientDbError", () => {
  it("a lost, refused or timed-out link is transient, by code, message or cause", () => {
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toBe(true);
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "57P01" }))).toBe(true);
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "P1001" }))).toBe(true);
    expect(isTransientDbError(new Error("Raw query failed. Code: `08006`. Message: `authentication timed out`"))).toBe(true);
    expect(isTransientDbError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isTransientDbError(new Error("wrapped", { cause: Object.assign(new Error("inner"), { code: "ECONNREFUSED" }) }))).toBe(true);
  });

  it("errors in the query or the data are not", () => {
    expect(isTransientDbError(Object.assign(new Error("x"), { code: "42601" }))).toBe(false);
    expect(isTransientDbError(new Error("Eval run abc not found."))).toBe(false);
    expect(isTransientDbError(new Error("duplicate key value violates unique constraint"))).toBe(false);
    expect(isTransientDbError(null)).toBe(false);
  });
});
