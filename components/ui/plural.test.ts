import { describe, expect, it } from "vitest";
import { plural } from "./plural";

describe("plural", () => {
  it("says one run, many runs, and regular English plurals", () => {
    expect(plural(1, "run")).toBe("1 run");
    expect(plural(0, "run")).toBe("0 runs");
    expect(plural(2, "run")).toBe("2 runs");
    expect(plural(1, "query")).toBe("1 query");
    expect(plural(3, "query")).toBe("3 queries");
    expect(plural(2, "day")).toBe("2 days");
    expect(plural(2, "match")).toBe("2 matches");
    expect(plural(1200, "question")).toBe("1,200 questions");
    expect(plural(2, "person", "people")).toBe("2 people");
  });
});
