import { describe, expect, it } from "vitest";
import type { EvalAggregates } from "./aggregates";
import { pairedDelta } from "./bootstrap";
import { categoryDeltaGrid, categoryInterval, historySeries, paretoFrontier } from "./compare-charts";

const agg = (categories: string[], hits: number[]): EvalAggregates => ({
  version: 1,
  questionIds: categories.map((_, i) => `q${i}`),
  categories,
  apart: categories.map(() => false),
  metrics: { "session_hit@5": hits },
});

describe("category cells: within noise or not (issue #48 item 8)", () => {
  it("gives each cell the leaderboard's paired-bootstrap interval over that category's questions", () => {
    // Category 1: 40 questions, the other run loses one hit (−0.025): within noise.
    // Category 2: 40 questions, the other run loses 20 hits (−0.5): outside noise.
    const cats = [...Array(40).fill("1"), ...Array(40).fill("2")] as string[];
    const baseHits = cats.map(() => 1);
    const otherHits = cats.map((c, i) => (c === "1" ? (i === 0 ? 0 : 1) : i % 2 ? 0 : 1));
    const aggregates = new Map([
      ["base", agg(cats, baseHits)],
      ["other", agg(cats, otherHits)],
    ]);
    const grid = categoryDeltaGrid(
      [
        { id: "base", metrics: {}, perCategory: { "1": { "session_hit@5": 1, questions: 40 }, "2": { "session_hit@5": 1, questions: 40 } } },
        { id: "other", metrics: {}, perCategory: { "1": { "session_hit@5": 0.975, questions: 40 }, "2": { "session_hit@5": 0.5, questions: 40 } } },
      ],
      "base",
      "session_hit@5",
      aggregates,
    );
    const [one, two] = grid.rows[1]!.cells;
    expect(one).toMatchObject({ category: "1", withinNoise: true });
    expect(one!.ci95![0]).toBeLessThanOrEqual(0);
    expect(two).toMatchObject({ category: "2", withinNoise: false });
    expect(two!.ci95![1]).toBeLessThan(0);
    // The same interval as the leaderboard's bootstrap over those questions.
    const i2 = cats.map((c, i) => i).filter((i) => cats[i] === "2");
    expect(two!.ci95).toEqual(pairedDelta(i2.map((i) => otherHits[i]!), i2.map((i) => baseHits[i]!)).ci95);
    // The baseline's own cells have none.
    expect(grid.rows[0]!.cells.every((c) => c.withinNoise === null && c.ci95 === null)).toBe(true);
    expect(categoryInterval(undefined, aggregates.get("base"), "1", "session_hit@5", new Map())).toEqual({ ci95: null, withinNoise: null });
  });
});

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
      { category: "1", value: 0.75, delta: 0.25, ci95: null, withinNoise: null },
      { category: "2", value: null, delta: null, ci95: null, withinNoise: null },
      { category: "10", value: null, delta: null, ci95: null, withinNoise: null },
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
