import { describe, expect, it } from "vitest";
import { inRange, parseDateRange } from "./dates";

describe("parseDateRange", () => {
  it("reads months, days and years named in a question", () => {
    expect(parseDateRange("What did she paint in May 2023?")).toMatchObject({ from: "2023-05-01T00:00:00.000Z", to: "2023-05-31T23:59:59.999Z" });
    expect(parseDateRange("meetings on 8 May, 2023")).toMatchObject({ from: "2023-05-08T00:00:00.000Z", to: "2023-05-08T23:59:59.999Z" });
    expect(parseDateRange("plans for March 3rd, 2024")).toMatchObject({ from: "2024-03-03T00:00:00.000Z" });
    expect(parseDateRange("the 2023-02 report")).toMatchObject({ from: "2023-02-01T00:00:00.000Z", to: "2023-02-28T23:59:59.999Z" });
    expect(parseDateRange("what changed in 2022")).toMatchObject({ from: "2022-01-01T00:00:00.000Z", to: "2022-12-31T23:59:59.999Z" });
  });

  it("ignores questions without an explicit calendar date, and impossible dates", () => {
    expect(parseDateRange("When did Caroline go to the support group?")).toBeNull();
    expect(parseDateRange("she may go there last week")).toBeNull();
    expect(parseDateRange("the 2023 numbers")).toBeNull();
    expect(parseDateRange("31 February 2023")).toBeNull();
  });

  it("inRange compares ISO times", () => {
    const r = parseDateRange("in May 2023")!;
    expect(inRange("2023-05-08T13:56:00Z", r)).toBe(true);
    expect(inRange("2023-06-01T00:00:00Z", r)).toBe(false);
    expect(inRange(null, r)).toBe(false);
  });
});
