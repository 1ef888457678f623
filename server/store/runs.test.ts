import { describe, expect, it } from "vitest";
import type { StepStats } from "../engine/step-context";
import { parseRunStats, withRunStats, type StepRunStats } from "./runs";

const step: StepStats = {
  step: "summaries",
  type: "transform",
  input: 3,
  output: 3,
  skipped: 0,
  errors: 0,
  modelCalls: 3,
  retries: 0,
  tokensIn: 120,
  tokensOut: 40,
  costUsd: 0,
  durationMs: 12,
  status: "completed",
};

describe("Run.stats, parsed where read", () => {
  it("the engine's StepStats is what the schema reads", () => {
    // Compile-time: every field the engine writes has the type the schema reads.
    const fits = (s: StepStats): Pick<StepRunStats, keyof StepStats> => s;
    expect(fits(step)).toBe(step);
    expect(parseRunStats({ id: "r1", stats: { steps: [step] } }).steps).toEqual([step]);
  });

  it("a run that has not started has no steps", () => {
    expect(parseRunStats({ id: "r1", stats: null })).toEqual({ steps: [] });
    expect(parseRunStats({ id: "r1", stats: {} })).toEqual({ steps: [] });
  });

  it("keeps fields it does not know (a newer engine's) and replaces the column on the row", () => {
    const row = withRunStats({ id: "r1", status: "completed", stats: { steps: [{ ...step, cacheHits: 2 }] } });
    expect(row.status).toBe("completed");
    expect(row.stats.steps[0]).toMatchObject({ step: "summaries", cacheHits: 2 });
  });

  it("malformed stats name the run and the place, instead of reaching the UI as a wrong type", () => {
    expect(() => parseRunStats({ id: "r9", stats: { steps: [{ ...step, output: "three" }] } })).toThrow(/Run r9 has malformed stats at steps\.0\.output/);
    expect(() => parseRunStats({ id: "r9", stats: { steps: "nope" } })).toThrow(/Run r9 has malformed stats at steps/);
  });
});
