import { describe, expect, it } from "vitest";
import { RUN_PALETTE, runColor, runColors } from "./run-colors";

describe("run colours", () => {
  const ids = Array.from({ length: 12 }, (_, i) => `cmrun${i}x${i * 7}`);

  it("gives 12 runs 12 distinct colours, whatever order they come in", () => {
    const a = runColors(ids);
    expect(new Set(a.values()).size).toBe(12);
    const b = runColors([...ids].reverse());
    for (const id of ids) expect(b.get(id)).toBe(a.get(id));
  });

  it("keeps a run's preferred colour when it has no collision, and repeats past 12", () => {
    expect(runColors([ids[3]!]).get(ids[3]!)).toBe(runColor(ids[3]!));
    const many = runColors([...ids, "one-more", "two-more"]);
    expect(many.size).toBe(14);
    for (const c of many.values()) expect(RUN_PALETTE).toContain(c);
  });
});
