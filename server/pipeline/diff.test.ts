import { describe, expect, it } from "vitest";
import { diffSpecs, formatDiff, type NodeDiff, type SpecDiff } from "./diff";
import { Pipeline } from "./sdk";
import { defaultChatMemoryPipeline, defaultChatMemorySpec } from "./templates";
import type { PipelineSpec } from "./spec";

const base = defaultChatMemorySpec();

function edit(name: string, patch: Record<string, unknown>, spec: PipelineSpec = base): PipelineSpec {
  return Pipeline.fromSpec(spec).update(name, patch).toSpec();
}

const step = (diff: SpecDiff, name: string): NodeDiff => diff.steps.find((s) => s.name === name)!;

describe("diffSpecs", () => {
  it("finds nothing between equal specs", () => {
    const diff = diffSpecs(base, structuredClone(base));
    expect(diff.changed).toBe(false);
    expect(diff.invalidated).toEqual([]);
    expect(diff.steps.every((s) => s.status === "unchanged" && s.reasons.length === 0)).toBe(true);
    expect(formatDiff(diff)).toBe("No changes.");
  });

  it("a template change: the step (template) and everything downstream (upstream, named)", () => {
    const diff = diffSpecs(base, edit("summaries", { prompt: "Summarize briefly: {{ record.content }}" }));
    expect(step(diff, "transcripts").status).toBe("unchanged");
    expect(step(diff, "summaries")).toMatchObject({ status: "changed", reasons: [{ kind: "template" }], rerun: true });
    expect(step(diff, "monthly")).toMatchObject({ status: "changed", reasons: [{ kind: "upstream", names: ["summaries"] }] });
    expect(step(diff, "world-model")).toMatchObject({ status: "changed", reasons: [{ kind: "upstream", names: ["monthly"] }] });
    expect(diff.invalidated).toEqual(["summaries", "monthly", "world-model"]);
    expect(formatDiff(diff)).toBe(
      [
        "CHANGED  summaries (template changed)",
        "CHANGED  monthly (upstream summaries changed)",
        "CHANGED  world-model (upstream monthly changed)",
        "Re-run: summaries, monthly, world-model",
      ].join("\n"),
    );
    // Outputs are about their own definition: reading changed steps does not change them.
    expect(diff.outputs.every((o) => o.status === "unchanged")).toBe(true);
  });

  it("model and temperature changes name old and new values", () => {
    const diff = diffSpecs(base, edit("summaries", { model: "openai/gpt-4o", temperature: 0.3 }));
    expect(step(diff, "summaries").reasons).toEqual([
      { kind: "model", from: "offline/extractive", to: "openai/gpt-4o" },
      { kind: "temperature", from: 0, to: 0.3 },
    ]);
    expect(formatDiff(diff)).toContain("CHANGED  summaries (model changed: offline/extractive → openai/gpt-4o; temperature changed: 0 → 0.3)");
  });

  it("config changes name their keys; output schema changes are their own reason", () => {
    const diff = diffSpecs(base, edit("world-model", { checkpointEvery: 3, maxStateTokens: 4000 }, edit("monthly", { groupBy: { period: "week" } })));
    expect(step(diff, "monthly").reasons).toEqual([{ kind: "config", keys: ["groupBy"] }]);
    expect(step(diff, "world-model").reasons).toEqual([
      { kind: "config", keys: ["checkpointEvery", "maxStateTokens"] },
      { kind: "upstream", names: ["monthly"] },
    ]);
    const schema = diffSpecs(base, edit("summaries", { output: { type: "object", properties: { s: { type: "string" } } } }));
    expect(step(schema, "summaries").reasons).toEqual([{ kind: "output-schema" }]);
    expect(formatDiff(schema)).toContain("CHANGED  summaries (output schema changed)");
  });

  it("rewiring names the from key", () => {
    const diff = diffSpecs(base, edit("monthly", { from: "transcripts" }));
    expect(step(diff, "monthly").reasons).toEqual([{ kind: "config", keys: ["from"] }]);
  });

  it("added and removed nodes; added steps need running", () => {
    const after = Pipeline.fromSpec(base)
      .split("facts", { from: "summaries", operator: { kind: "sentences" } })
      .remove("context")
      .output("facts-index", { from: "facts", surface: "search" })
      .toSpec();
    const diff = diffSpecs(base, after);
    expect(step(diff, "facts")).toMatchObject({ status: "added", type: "split", rerun: true });
    expect(diff.outputs.find((o) => o.name === "context")).toMatchObject({ status: "removed" });
    expect(diff.invalidated).toEqual(["facts"]);
    const text = formatDiff(diff);
    expect(text).toContain("ADDED    facts (split step)");
    expect(text).toContain("REMOVED  context (projection output)");
    expect(text).toContain("ADDED    facts-index (search output)");
    const back = diffSpecs(after, base);
    expect(step(back, "facts")).toMatchObject({ status: "removed", rerun: false });
    expect(back.invalidated).toEqual([]);
  });

  it("a description change is a change that needs no re-run", () => {
    const diff = diffSpecs(base, edit("monthly", { description: "Monthly reflections" }));
    expect(step(diff, "monthly")).toMatchObject({ status: "changed", reasons: [{ kind: "description" }], rerun: false });
    expect(diff.invalidated).toEqual([]);
    expect(formatDiff(diff)).toBe("CHANGED  monthly (description changed; no re-run)\nNothing to re-run.");
  });

  it("a source change invalidates every step below it", () => {
    const diff = diffSpecs(base, defaultChatMemorySpec("claude-export"));
    expect(diff.sources[0]).toMatchObject({ name: "chats", status: "changed", reasons: [{ kind: "config", keys: ["format"] }], rerun: true });
    expect(diff.invalidated).toEqual(["transcripts", "summaries", "monthly", "world-model", "windows"]);
    expect(step(diff, "transcripts").reasons).toEqual([{ kind: "upstream", names: ["chats"] }]);
  });

  it("works from specs written with implicit defaults", () => {
    const pipeline = defaultChatMemoryPipeline();
    expect(pipeline.diffFrom(base).changed).toBe(false);
  });
});
