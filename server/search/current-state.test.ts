import { describe, expect, it } from "vitest";
import { askedSlot } from "./current-state";
import { recencyClock } from "./recency";

describe("now questions and recency (issue 47)", () => {
  it("recency counts age from the question's time, else the newest record ranked, never the wall clock when records are dated", () => {
    const times = ["2024-03-01T00:00:00Z", null, "2024-10-01T00:00:00Z", "2024-06-15T00:00:00Z"];
    expect(recencyClock(times, null)).toBe(Date.parse("2024-10-01T00:00:00Z"));
    expect(recencyClock(times, Date.parse("2024-12-01T00:00:00Z"))).toBe(Date.parse("2024-12-01T00:00:00Z"));
    expect(Math.abs(recencyClock([null], null) - Date.now())).toBeLessThan(5_000);
  });
  it("only a question about the present that names a slot is re-ranked", () => {
    expect(askedSlot("Who is the user's partner now?")).toBe("partner");
    expect(askedSlot("Who is the user's partner?")).toBeNull();
  });
});
