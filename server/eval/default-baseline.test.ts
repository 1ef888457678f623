import { describe, expect, it } from "vitest";
import { BASELINE_STRENGTH_METRIC, DEFAULT_BASELINE_RULE, defaultBaseline } from "./leaderboard-rows";

/** A run as the leaderboard reads it: only what the default baseline looks at. */
function run(id: string, o: { pipeline?: boolean; branch?: string; template?: string; dataset?: string; status?: string; hit5?: number; finished: number }) {
  return {
    id,
    pipelineId: o.pipeline ? "p1" : null,
    branch: o.branch ?? "main",
    template: o.template ?? null,
    datasetId: o.dataset ?? "d1",
    status: o.status ?? "completed",
    metrics: o.hit5 === undefined ? {} : { [BASELINE_STRENGTH_METRIC]: o.hit5 },
    createdAt: new Date(o.finished - 60_000),
    finishedAt: new Date(o.finished),
  };
}

describe("the default baseline of a comparison (issue 48 item 11)", () => {
  it("is a pipeline's main branch, its newest finished run on the comparison's dataset, over stronger and newer runs", () => {
    const runs = [
      run("mem0-twin", { template: "mem0", hit5: 0.9, finished: 5 }),
      run("main-old", { pipeline: true, hit5: 0.5, finished: 1 }),
      run("main-new", { pipeline: true, hit5: 0.4, finished: 3 }),
      run("gist", { pipeline: true, branch: "gist", hit5: 0.8, finished: 4 }),
      run("main-failed", { pipeline: true, status: "failed", finished: 6 }),
      run("main-other-dataset", { pipeline: true, dataset: "d2", hit5: 0.99, finished: 7 }),
    ];
    const { run: picked, rule } = defaultBaseline(runs);
    expect(picked?.id).toBe("main-new");
    expect(rule.kind).toBe("main");
    expect(rule.rule).toBe(DEFAULT_BASELINE_RULE);
  });

  it("without a main run: the strongest real run, never a template's offline stand-in (the mem0 twin), whatever its score or age", () => {
    const runs = [
      run("mem0-twin", { template: "mem0", hit5: 0.95, finished: 9 }),
      run("bm25-sessions", { template: "bm25-sessions", hit5: 0.6, finished: 2 }),
      run("rag", { template: "rag-baseline", hit5: 0.7, finished: 1 }),
      run("gist", { pipeline: true, branch: "gist", hit5: 0.65, finished: 3 }),
    ];
    const { run: picked, rule } = defaultBaseline(runs);
    expect(picked?.id).toBe("rag");
    expect(rule.kind).toBe("strongest");
    expect(rule.text).toContain("strongest real run");
  });

  it("only stand-ins: the strongest of them; none completed: no baseline", () => {
    expect(defaultBaseline([run("memex", { template: "memex", hit5: 0.3, finished: 2 }), run("mem0", { template: "mem0", hit5: 0.4, finished: 1 })]).run?.id).toBe("mem0");
    const none = defaultBaseline([run("x", { pipeline: true, status: "running", finished: 1 })]);
    expect(none.run).toBeNull();
    expect(none.rule.kind).toBe("none");
  });
});
