import { describe, expect, it } from "vitest";
import { heatmapShade, signalMax } from "./heatmap-shade";

describe("heatmap shading (issue #48 item 8)", () => {
  it("colours a cell only when its difference is outside noise; neutral otherwise", () => {
    const noise = { delta: -0.013, withinNoise: true };
    const unknown = { delta: -0.2, withinNoise: null };
    const worse = { delta: -0.2, withinNoise: false };
    const better = { delta: 0.1, withinNoise: false };
    const max = signalMax([noise, unknown, worse, better]);
    // The noise cell does not set the scale, and is not painted whatever its size.
    expect(max).toBe(0.2);
    expect(heatmapShade(noise, max, false)).toBeUndefined();
    expect(heatmapShade({ delta: -0.5, withinNoise: true }, max, false)).toBeUndefined();
    expect(heatmapShade(unknown, max, false)).toBeUndefined();
    expect(heatmapShade(worse, max, false)).toMatch(/^rgba\(220, 38, 38, 0\.62\)$/);
    expect(heatmapShade(better, max, false)).toMatch(/^rgba\(22, 163, 74, 0\.41\)$/);
    // Lower-is-better metrics flip the direction.
    expect(heatmapShade(worse, max, true)).toMatch(/^rgba\(22, 163, 74,/);
    expect(signalMax([noise, unknown])).toBe(0);
  });
});
