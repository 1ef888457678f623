import { describe, expect, it } from "vitest";
import { categoryDeltaGrid, historySeries, paretoFrontier } from "./compare-charts";

describe("chart data", () => {
  it("marks the runs another run beats on accuracy and cost (Pareto)", () => {
    const { points, frontier } = paretoFrontier([
      { id: "cheap", cost: 100, value: 0.5 },
      { id: "best", cost: 400, value: 0.9 },
      { id: "dominated", cost: 500, value: 0.8 }, // best is cheaper and better
      { id: "tie-worse", cost: 100, value: 0.4 }, // same cost as cheap, less accurate
      { id: "middle", cost: 200, value: 0.7 },
    ]);
    const by = Object.fromEntries(points.map((p) => [p.id, p]));
    expect(by.dominated).toMatchObject({ dominated: true, dominatedBy: ["best"] });
    expect(by["tie-worse"]).toMatchObject({ dominated: true, dominatedBy: ["cheap"] });
    expect(by.middle!.dominated).toBe(false);
    expect(frontier).toEqual(["cheap", "middle", "best"]);
    // Identical points do not dominate each other; lower-is-better metrics flip the value side.
    expect(paretoFrontier([{ id: "a", cost: 1, value: 1 }, { id: "b", cost: 1, value: 1 }]).frontier).toEqual(["a", "b"]);
    expect(paretoFrontier([{ id: "a", cost: 1, value: 10 }, { id: "b", cost: 1, value: 20 }], true).points.find((p) => p.id === "b")!.dominated).toBe(true);
  });

  it("gives each run's delta to the baseline per category, null where a category is missing", () => {
    const grid = categoryDeltaGrid(
      [
        { id: "base", metrics: {}, perCategory: { "1": { "session_hit@5": 0.5, questions: 10 }, "10": { "session_hit@5": 1, questions: 2 }, "2": { "session_hit@5": 0.25, questions: 4 } } },
        { id: "other", metrics: {}, perCategory: { "1": { "session_hit@5": 0.75, questions: 10 }, "2": { questions: 4 } } },
      ],
      "base",
      "session_hit@5",
    );
    expect(grid.categories).toEqual([{ key: "1", questions: 10 }, { key: "2", questions: 4 }, { key: "10", questions: 2 }]);
    expect(grid.rows[0]!.cells.map((c) => c.delta)).toEqual([0, 0, 0]);
    expect(grid.rows[1]!.cells).toEqual([
      { category: "1", value: 0.75, delta: 0.25 },
      { category: "2", value: null, delta: null },
      { category: "10", value: null, delta: null },
    ]);
    expect(() => categoryDeltaGrid([], "base", "mrr")).toThrow(/baseline base/);
  });

  it("history: one series per label in time order, runs without the metric left out", () => {
    const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));
    const series = historySeries(
      [
        { id: "r3", label: "mem@main", at: at(3), metrics: { mrr: 0.3 } },
        { id: "r1", label: "mem@main", at: at(1), metrics: { mrr: 0.1 } },
        { id: "r2", label: "mem@exp", at: at(2), metrics: { mrr: 0.2 } },
        { id: "r4", label: "mem@exp", at: at(4), metrics: {} },
      ],
      "mrr",
    );
    expect(series).toEqual([
      { label: "mem@main", points: [{ runId: "r1", at: at(1).toISOString(), value: 0.1 }, { runId: "r3", at: at(3).toISOString(), value: 0.3 }] },
      { label: "mem@exp", points: [{ runId: "r2", at: at(2).toISOString(), value: 0.2 }] },
    ]);
  });
});
