import { describe, expect, it } from "vitest";
import { narrowsRecords } from "./record-sql";

describe("narrowsRecords", () => {
  it("is true exactly when the filters add a condition on the records", () => {
    expect(narrowsRecords({})).toBe(false);
    // A scope of spaces or colons only names no scope.
    expect(narrowsRecords({ scope: "  " })).toBe(false);
    expect(narrowsRecords({ scope: ":" })).toBe(false);
    expect(narrowsRecords({ scope: "acme:" })).toBe(true);
    expect(narrowsRecords({ from: "2024-03-01" })).toBe(true);
    expect(narrowsRecords({ to: "2024-03-01" })).toBe(true);
    expect(narrowsRecords({ period: "2024-03" })).toBe(true);
    expect(narrowsRecords({ conversationId: "c1" })).toBe(true);
    expect(narrowsRecords({ metadata: {} })).toBe(false);
    expect(narrowsRecords({ metadata: { "custom.topic": "rust" } })).toBe(true);
  });

  it("refuses a bad date as filterConditions does", () => {
    expect(() => narrowsRecords({ from: "yesterday" })).toThrow(/from must be an ISO date/);
  });
});
