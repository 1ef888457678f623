import { describe, expect, it } from "vitest";
import { BootstrapPlan, pairedDelta, seededRandom } from "./bootstrap";

/** 0/1 hits for n questions with probability p, from a seeded generator. */
function hits(n: number, p: number, seed: number): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => (random() < p ? 1 : 0));
}

describe("paired bootstrap", () => {
  it("finds a known difference: a run that answers 10 more questions out of 200 right", () => {
    const baseline = hits(200, 0.6, 1);
    const run = [...baseline];
    let flipped = 0;
    for (let i = 0; i < run.length && flipped < 10; i++) {
      if (run[i] === 0) {
        run[i] = 1;
        flipped++;
      }
    }
    const d = pairedDelta(run, baseline);
    expect(d.delta).toBeCloseTo(10 / 200, 10);
    expect(d.pairs).toBe(200);
    expect(d.ci95![0]).toBeGreaterThan(0);
    expect(d.ci95![0]).toBeLessThan(0.05);
    expect(d.ci95![1]).toBeGreaterThan(0.05);
    expect(d.withinNoise).toBe(false);
  });

  it("gives identical runs an interval around zero", () => {
    const baseline = hits(300, 0.5, 2);
    const d = pairedDelta([...baseline], baseline);
    expect(d).toEqual({ delta: 0, ci95: [0, 0], pairs: 300, withinNoise: true });
  });

  it("calls a difference of unrelated noise within noise, and an interval includes the delta", () => {
    const a = hits(400, 0.5, 3);
    const b = hits(400, 0.5, 4);
    const d = pairedDelta(a, b);
    expect(d.ci95![0]).toBeLessThanOrEqual(d.delta);
    expect(d.ci95![1]).toBeGreaterThanOrEqual(d.delta);
    expect(d.ci95![0]).toBeLessThan(0);
    expect(d.ci95![1]).toBeGreaterThan(0);
    expect(d.withinNoise).toBe(true);
  });

  it("is deterministic, leaves out questions either run did not measure, and refuses a misfit plan", () => {
    const a = [1, 0, null, 1, 1, 0, 1];
    const b = [0, 0, 1, null, 1, 1, 0];
    const first = pairedDelta(a, b);
    expect(first.pairs).toBe(5);
    expect(first.delta).toBeCloseTo((1 + 0 + 0 - 1 + 1) / 5, 10);
    expect(pairedDelta(a, b)).toEqual(first);
    expect(pairedDelta([1], [0])).toEqual({ delta: 1, ci95: null, pairs: 1, withinNoise: true });
    expect(() => new BootstrapPlan(3).interval([1, 2])).toThrow(/3 pairs was given 2/);
  });
});
