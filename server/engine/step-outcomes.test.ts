import { describe, expect, it } from "vitest";
import { emptyStats } from "./step-context";
import { runOutcome } from "./step-outcomes";

const step = (name: string, s: { items: number; errors: number; output: number }) => ({ ...emptyStats({ name, type: "transform" }), status: "completed" as const, ...s });

describe("runOutcome: a run's end status from its steps", () => {
  it("no failed item: completed", () => {
    expect(runOutcome([step("a", { items: 3, errors: 0, output: 3 }), step("b", { items: 0, errors: 0, output: 0 })])).toEqual({ status: "completed" });
  });
  it("some items failed, something succeeded: completed_with_errors", () => {
    expect(runOutcome([step("a", { items: 3, errors: 1, output: 2 })]).status).toBe("completed_with_errors");
    // One step failed whole, another computed: still completed with errors.
    expect(runOutcome([step("a", { items: 3, errors: 3, output: 0 }), step("b", { items: 3, errors: 0, output: 3 })]).status).toBe("completed_with_errors");
    // Items that succeeded without making a record still succeeded.
    expect(runOutcome([step("a", { items: 3, errors: 1, output: 0 })]).status).toBe("completed_with_errors");
  });
  it("items failed and none succeeded: failed, with each step's count", () => {
    expect(runOutcome([step("a", { items: 2, errors: 2, output: 0 }), step("b", { items: 0, errors: 0, output: 0 }), step("c", { items: 5, errors: 5, output: 0 })])).toEqual({
      status: "failed",
      error: "Every work item failed (a 2 of 2, c 5 of 5): nothing was computed. The run's failures list each item's error.",
    });
  });
});
