import { describe, expect, it } from "vitest";
import { stackCoincident } from "./pareto-stacks";

describe("stackCoincident", () => {
  it("spreads runs at the same value and cost around the point and names them all; others stay alone", () => {
    const s = stackCoincident([
      { id: "a", cost: 10, value: 0.5 },
      { id: "b", cost: 10, value: 0.5 },
      { id: "c", cost: 10, value: 0.6 },
      { id: "d", cost: 10, value: 0.5 },
    ]);
    expect(s.get("a")).toEqual({ id: "a", offset: -1, size: 3, group: ["a", "b", "d"] });
    expect(s.get("b")!.offset).toBe(0);
    expect(s.get("d")!.offset).toBe(1);
    expect(s.get("c")).toEqual({ id: "c", offset: 0, size: 1, group: ["c"] });
    const two = stackCoincident([{ id: "x", cost: 0, value: 1 }, { id: "y", cost: 0, value: 1 }]);
    expect([two.get("x")!.offset, two.get("y")!.offset]).toEqual([-0.5, 0.5]);
  });
});
