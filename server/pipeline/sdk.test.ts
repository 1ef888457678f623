import { describe, expect, it } from "vitest";
import { specHash, stepVersionHashes } from "./hashing";
import { Pipeline } from "./sdk";
import { defaultChatMemorySpec, ragBaselineSpec } from "./templates";
import { DEFAULT_MODEL, SpecError, formatPath } from "./spec";
import { DEFAULT_TEMPLATES } from "./prompts";

describe("Pipeline builder", () => {
  it("builds the seed's pipeline by chaining", () => {
    const summarize = "Summarize:\n{{ record.content }}";
    const p = new Pipeline("personal-memory", { agent: "mark" })
      .source("chatgpt", { format: "chatgpt-export" })
      .source("claude", { format: "claude-export" })
      .merge("unified", { from: ["chatgpt", "claude"], dedupe: "content_hash", conflict: "prefer_latest" })
      .transform("transcripts", { from: "unified", prompt: DEFAULT_TEMPLATES.transcript })
      .transform("summaries", { from: "transcripts", prompt: summarize, model: "openai/gpt-4o-mini" })
      .split("facts", { from: "summaries", operator: { kind: "sentences" } })
      .aggregate("monthly", { from: "summaries", period: "month", prompt: DEFAULT_TEMPLATES.monthly })
      .fold("world-model", { from: "monthly", prompt: DEFAULT_TEMPLATES.worldModel, checkpointEvery: 6, maxStateTokens: 8000 })
      .output("context", { from: "world-model", surface: "projection" })
      .output("memory-index", { from: ["summaries", "monthly"], surface: "search" });
    expect(p.name).toBe("personal-memory");
    expect(p.agent).toBe("mark");
    expect(p.problems()).toEqual([]);
    const spec = p.toSpec();
    expect(spec.steps.map((s) => `${s.type}:${s.name}`)).toEqual([
      "merge:unified",
      "transform:transcripts",
      "transform:summaries",
      "split:facts",
      "aggregate:monthly",
      "fold:world-model",
    ]);
    expect(spec.steps[2]).toEqual({ type: "transform", name: "summaries", from: "transcripts", prompt: summarize, model: "openai/gpt-4o-mini", temperature: 0 });
    expect(spec.steps[4]).toMatchObject({ groupBy: { period: "month" }, model: DEFAULT_MODEL });
  });

  it("aggregate shorthands become groupBy", () => {
    const p = new Pipeline("g")
      .source("s", { format: "jsonl" })
      .aggregate("a", { from: "s", period: "week", operator: { kind: "extractive-summary" } })
      .aggregate("b", { from: "s", key: "chat.conversation_id", operator: { kind: "extractive-summary" } })
      .aggregate("c", { from: "s", every: 10, operator: { kind: "extractive-summary" } })
      .aggregate("d", { from: "s", groupBy: { every: 3 }, operator: { kind: "extractive-summary" } });
    expect(p.toSpec().steps.map((s) => (s.type === "aggregate" ? s.groupBy : null))).toEqual([
      { period: "week" },
      { key: "chat.conversation_id" },
      { every: 10 },
      { every: 3 },
    ]);
  });

  it("refuses an invalid pipeline, listing every problem with its path", () => {
    const p = new Pipeline("bad")
      .source("chats", { format: "chatgpt-export" })
      .transform("summaries", { from: "chat", prompt: "{{ record.content }}" })
      .transform("summaries", { from: "chats", prompt: "{% if %}" })
      .aggregate("monthly", { from: "summaries", prompt: "{{ records | size }}" } as never)
      .merge("m", { from: ["chats"] })
      .output("context", { from: "context", surface: "projection" });
    let error: SpecError | undefined;
    try {
      p.toSpec();
    } catch (e) {
      error = e as SpecError;
    }
    expect(error).toBeInstanceOf(SpecError);
    expect(error!.problems.map((x) => formatPath(x.path))).toEqual([
      "steps[0].from",
      "steps[1].name",
      "steps[1].prompt",
      "steps[2].groupBy",
      "steps[3].from",
      "outputs[0].from",
    ]);
    expect(error!.message).toMatch(/^Pipeline "bad" is invalid:\n- steps\[0\]\.from \(summaries\): unknown input "chat"/);
    expect(p.problems()).toEqual(error!.problems);
  });

  it("rejects conflicting groupBy shorthands", () => {
    const p = new Pipeline("g").source("s", { format: "jsonl" }).aggregate("a", { from: "s", period: "week", every: 3, prompt: "x" } as never);
    expect(() => p.toSpec()).toThrow(/exactly one of period, key or every/);
  });

  it("update and remove edit an existing pipeline (a branch experiment)", () => {
    const main = defaultChatMemorySpec();
    const branch = Pipeline.fromSpec(main, { name: "personal-memory" }).update("summaries", { prompt: "Better: {{ record.content }}", model: "openai/gpt-4o" });
    const diff = branch.diffFrom(main);
    expect(diff.invalidated).toEqual(["summaries", "monthly", "world-model"]);
    // Switching a step from a prompt to an operator: undefined removes fields.
    const offline = Pipeline.fromSpec(main).update("summaries", { prompt: undefined, model: undefined, temperature: undefined, operator: { kind: "extractive-summary" } });
    expect(offline.toSpec().steps[1]).toEqual({ type: "transform", name: "summaries", from: "transcripts", operator: { kind: "extractive-summary", sentences: 3 } });
    expect(() => Pipeline.fromSpec(main).update("nope", {})).toThrow(/nothing named "nope"/);
    const weekly = Pipeline.fromSpec(main).update("monthly", { period: "week" }).toSpec();
    expect(weekly.steps[2]).toMatchObject({ name: "monthly", groupBy: { period: "week" } });
    const removed = Pipeline.fromSpec(main).remove("world-model");
    expect(removed.has("world-model")).toBe(false);
    expect(() => removed.toSpec()).toThrow(/unknown input "world-model"/);
  });

  it("fromSpec → toSpec is the identity on a valid spec", () => {
    const spec = defaultChatMemorySpec();
    expect(Pipeline.fromSpec(spec).toSpec()).toEqual(spec);
    expect(() => Pipeline.fromSpec({ steps: "nope" })).toThrow(SpecError);
  });

  it("does not share state with the objects passed in", () => {
    const operator = { kind: "chunk" as const, size: 100 };
    const p = new Pipeline("x").source("s", { format: "text" }).split("c", { from: "s", operator });
    operator.size = 5;
    expect(p.toSpec().steps[0]).toMatchObject({ operator: { size: 100 } });
  });

  it("supports loops and composition (the CDK argument)", () => {
    const p = new Pipeline("tiers").source("events", { format: "api" });
    let previous = "events";
    for (const [i, every] of [10, 10, 10].entries()) {
      const name = `tier-${i + 1}`;
      p.aggregate(name, { from: previous, every, prompt: "{% for r in records %}{{ r.content }}\n{% endfor %}" });
      previous = name;
    }
    p.output("search", { from: ["tier-1", "tier-2", "tier-3"], surface: "search" });
    expect(Object.keys(p.versionHashes())).toEqual(["events", "tier-1", "tier-2", "tier-3"]);
  });
});

describe("reference architectures", () => {
  it("the default chat-memory spec follows the seed", () => {
    const spec = defaultChatMemorySpec();
    expect(spec.sources).toEqual([{ name: "chats", format: "chatgpt-export" }]);
    expect(spec.steps.map((s) => [s.type, s.name, s.from])).toEqual([
      ["transform", "transcripts", "chats"],
      ["transform", "summaries", "transcripts"],
      ["aggregate", "monthly", "summaries"],
      ["fold", "world-model", "monthly"],
      ["split", "windows", "transcripts"],
    ]);
    expect(spec.steps[2]).toMatchObject({ groupBy: { period: "month" }, prompt: DEFAULT_TEMPLATES.monthly });
    expect(spec.steps[3]).toMatchObject({ prompt: DEFAULT_TEMPLATES.worldModel, checkpointEvery: 6, maxStateTokens: 8000 });
    expect(spec.steps[4]).toMatchObject({ operator: { kind: "turns", size: 3, stride: 1 } });
    expect(spec.outputs).toEqual([
      { name: "context", from: "world-model", surface: "projection" },
      { name: "search", from: ["transcripts", "summaries", "monthly", "windows"], surface: "search" },
    ]);
    expect(defaultChatMemorySpec("claude-export").sources[0]!.format).toBe("claude-export");
    const hosted = defaultChatMemorySpec("chatgpt-export", { model: "openai/gpt-4o-mini", scope: "acme:mark" });
    expect(hosted.steps.filter((s) => "prompt" in s).every((s) => "model" in s && s.model === "openai/gpt-4o-mini")).toBe(true);
    expect(hosted.sources[0]!.scope).toBe("acme:mark");
    expect(specHash(defaultChatMemorySpec())).toBe(specHash(spec));
  });

  it("the RAG baseline needs no model", () => {
    const spec = ragBaselineSpec();
    expect(spec.steps).toEqual([{ type: "split", name: "chunks", from: "chats", operator: { kind: "chunk", size: 1200, overlap: 0 } }]);
    expect(spec.outputs).toEqual([{ name: "search", from: "chunks", surface: "search" }]);
    expect(Object.keys(stepVersionHashes(spec))).toEqual(["chats", "chunks"]);
  });
});
