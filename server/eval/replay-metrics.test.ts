/** Replay metrics on small rankings computed by hand (issue 37). */
import { describe, expect, it } from "vitest";
import { citationRecall, gainedLost, overlapAtK, pairedInterval, rankBiasedOverlap } from "./replay-metrics";

describe("replay metrics", () => {
  it("overlap@k, gained and lost", () => {
    expect(overlapAtK(["a", "b", "c"], ["a", "b", "c"], 3)).toBe(1);
    expect(overlapAtK(["a", "b", "c"], ["c", "d", "a"], 3)).toBeCloseTo(2 / 3, 12);
    expect(overlapAtK(["a", "b"], ["a", "b"], 10)).toBe(1);
    expect(overlapAtK([], [], 5)).toBe(1);
    expect(overlapAtK(["a"], [], 5)).toBe(0);
    expect(gainedLost(["a", "b", "c"], ["c", "d", "a"], 3)).toEqual({ gained: ["d"], lost: ["b"] });
  });

  it("rank-biased overlap: 1 for identical lists; by hand for a swap and a replacement", () => {
    expect(rankBiasedOverlap(["a", "b", "c"], ["a", "b", "c"], 3)).toBeCloseTo(1, 12);
    // A = a b, B = b a, p = 0.9: X1 = 0, X2 = 2. sum = 0·0.9 + (2/2)·0.81 = 0.81.
    // RBO_ext = (2/2)·0.81 + (0.1/0.9)·0.81 = 0.81 + 0.09 = 0.9.
    expect(rankBiasedOverlap(["a", "b"], ["b", "a"], 2)).toBeCloseTo(0.9, 12);
    // A = a b c, B = a x c: X1 = 1, X2 = 1, X3 = 2. sum = 0.9 + 0.5·0.81 + (2/3)·0.729 = 0.9 + 0.405 + 0.486 = 1.791.
    // RBO_ext = (2/3)·0.729 + (0.1/0.9)·1.791 = 0.486 + 0.199 = 0.685.
    expect(rankBiasedOverlap(["a", "b", "c"], ["a", "x", "c"], 3)).toBeCloseTo(0.486 + 1.791 / 9, 12);
    expect(rankBiasedOverlap(["a", "b"], ["c", "d"], 2)).toBe(0);
  });

  it("citation recall and the paired interval", () => {
    expect(citationRecall(["a", "c"], ["a", "b"], 2)).toBe(0.5);
    expect(citationRecall(["a", "c"], ["a", "b", "c"], 2)).toBe(0.5);
    expect(citationRecall([], ["a"], 2)).toBeNull();
    expect(pairedInterval([{ main: 1, branch: 1 }, { main: 0.5, branch: 0.5 }, { main: 0, branch: 0 }])).toEqual({ n: 3, mean: 0, low: 0, high: 0 });
    // d = −1, 0, −0.5: mean −0.5, sd 0.5, t(2) = 4.303: half = 4.303·0.5/√3 = 1.24217…
    const iv = pairedInterval([{ main: 1, branch: 0 }, { main: 1, branch: 1 }, { main: 1, branch: 0.5 }]);
    expect(iv.mean).toBeCloseTo(-0.5, 12);
    expect(iv.low).toBeCloseTo(-0.5 - (4.303 * 0.5) / Math.sqrt(3), 9);
    expect(iv.high).toBeCloseTo(-0.5 + (4.303 * 0.5) / Math.sqrt(3), 9);
    expect(pairedInterval([{ main: 1, branch: 0 }])).toEqual({ n: 1, mean: -1, low: null, high: null });
  });
});
