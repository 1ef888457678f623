import { describe, expect, it } from "vitest";
import {
  DEFAULT_CHECKPOINT_EVERY,
  DEFAULT_CHUNK_SIZE,
  DEFAULT_CONFLICT,
  DEFAULT_DEDUPE,
  DEFAULT_MAX_STATE_TOKENS,
  DEFAULT_MODEL,
  DEFAULT_ORDER_KEY,
  assertSpec,
  formatPath,
  parseSpec,
  parseSpecShape,
  pipelineSpecSchema,
  SpecError,
  type PipelineSpecInput,
  type Problem,
} from "./spec";

const src = { name: "chats", format: "chatgpt-export" } as const;

function problemsOf(input: unknown): Problem[] {
  const result = parseSpec(input);
  if (result.ok) throw new Error("expected problems, got a valid spec");
  return result.problems;
}

function problemAt(input: unknown, path: (string | number)[]): Problem {
  const problems = problemsOf(input);
  const found = problems.find((p) => JSON.stringify(p.path) === JSON.stringify(path));
  if (!found) throw new Error(`no problem at ${formatPath(path)}; got:\n${problems.map((p) => `${formatPath(p.path)}: ${p.message}`).join("\n")}`);
  return found;
}

describe("parseSpec: shape and defaults", () => {
  it("accepts a minimal spec and writes the defaults out", () => {
    const result = parseSpec({
      sources: [src],
      steps: [
        { type: "transform", name: "summaries", from: "chats", prompt: "Summarize {{ record.content }}" },
        { type: "split", name: "chunks", from: "chats", operator: { kind: "chunk" } },
        { type: "aggregate", name: "monthly", from: "summaries", groupBy: { period: "month" }, operator: { kind: "extractive-summary" } },
        { type: "fold", name: "world", from: "monthly", prompt: "{{ state }} {{ record.content }}" },
        { type: "merge", name: "both", from: ["summaries", "monthly"] },
      ],
      outputs: [{ name: "search", from: ["summaries", "chunks"], surface: "search" }],
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [summaries, chunks, monthly, world, both] = result.spec.steps;
    expect(result.spec.version).toBe(1);
    expect(summaries).toMatchObject({ model: DEFAULT_MODEL, temperature: 0 });
    expect(chunks).toEqual({ type: "split", name: "chunks", from: "chats", operator: { kind: "chunk", size: DEFAULT_CHUNK_SIZE, overlap: 0 } });
    expect(monthly).toMatchObject({ operator: { kind: "extractive-summary", sentences: 5 } });
    expect(monthly).not.toHaveProperty("model"); // operator steps get no model
    expect(world).toMatchObject({ orderKey: DEFAULT_ORDER_KEY, checkpointEvery: DEFAULT_CHECKPOINT_EVERY, maxStateTokens: DEFAULT_MAX_STATE_TOKENS });
    expect(both).toMatchObject({ dedupe: DEFAULT_DEDUPE, conflict: DEFAULT_CONFLICT });
  });

  it("is idempotent: parsing a parsed spec gives the same spec", () => {
    const first = assertSpec({ sources: [src], steps: [{ type: "transform", name: "t", from: "chats", prompt: "x" }] });
    expect(assertSpec(first)).toEqual(first);
  });

  it("accepts an empty pipeline (the canvas starts from one)", () => {
    expect(parseSpec({})).toEqual({ ok: true, spec: { version: 1, sources: [], steps: [], outputs: [] } });
  });

  it("rejects unknown fields with a did-you-mean, including canvas layout", () => {
    const spec = { sources: [src], steps: [{ type: "transform", name: "t", from: "chats", promt: "x", operator: { kind: "identity" } }] };
    expect(problemAt(spec, ["steps", 0, "promt"]).message).toMatch(/unknown field "promt".*did you mean "prompt"/);
    expect(problemAt({ ...spec, layout: {} }, ["layout"]).message).toMatch(/unknown field "layout"/);
  });

  it("names the node a problem belongs to", () => {
    const p = problemAt({ sources: [src], steps: [{ type: "transform", name: "summaries", from: "chats" }] }, ["steps", 0, "prompt"]);
    expect(p.node).toBe("summaries");
  });

  it("reports an unknown step type at its type field", () => {
    const p = problemAt({ steps: [{ type: "transfrom", name: "t", from: "x" }] }, ["steps", 0, "type"]);
    expect(p.message).toMatch(/unknown step type "transfrom" \(did you mean "transform"\?\)/);
  });

  it("rejects bad names", () => {
    expect(problemAt({ sources: [{ name: "Chats", format: "jsonl" }] }, ["sources", 0, "name"]).message).toMatch(/lowercase slug/);
    expect(problemAt({ sources: [{ name: "a".repeat(65), format: "jsonl" }] }, ["sources", 0, "name"]).message).toMatch(/at most 64/);
    expect(problemAt({ sources: [{ name: "1st", format: "jsonl" }] }, ["sources", 0, "name"]).message).toMatch(/slug/);
  });

  it("rejects unknown formats, surfaces, operators, models and temperatures", () => {
    expect(problemAt({ sources: [{ name: "s", format: "csv" }] }, ["sources", 0, "format"]).message).toMatch(/format must be one of/);
    const steps = [
      { type: "split", name: "a", from: "s", operator: { kind: "extractive-summary" } },
      { type: "transform", name: "b", from: "s", prompt: "x", model: "gpt-4o" },
      { type: "transform", name: "c", from: "s", prompt: "x", temperature: 3 },
    ];
    const spec = { sources: [{ name: "s", format: "text" }], steps, outputs: [{ name: "o", from: "a", surface: "index" }] };
    expect(problemAt(spec, ["steps", 0, "operator", "kind"]).message).toMatch(/unknown split operator "extractive-summary" \("extractive-summary" is a transform\/aggregate operator\)/);
    expect(problemAt(spec, ["steps", 1, "model"]).message).toMatch(/provider\/model/);
    expect(problemAt(spec, ["steps", 2, "temperature"]).message).toMatch(/0 to 2/);
    expect(problemAt(spec, ["outputs", 0, "surface"]).message).toMatch(/"search".*"projection"/);
  });

  it("explains merge is mechanical when given a prompt", () => {
    const spec = { sources: [src, { name: "b", format: "jsonl" }], steps: [{ type: "merge", name: "m", from: ["chats", "b"], prompt: "x" }] };
    expect(problemAt(spec, ["steps", 0, "prompt"]).message).toMatch(/merge is mechanical/);
  });

  it("rejects a non-http webhook and a bad scope", () => {
    const spec = {
      sources: [{ ...src, scope: "acme: eng" }],
      outputs: [{ name: "o", from: "chats", surface: "projection", webhook: { url: "ftp://x" } }],
    };
    expect(problemAt(spec, ["sources", 0, "scope"]).message).toMatch(/:-separated/);
    expect(problemAt(spec, ["outputs", 0, "webhook", "url"]).message).toMatch(/http\(s\) URL/);
  });

  it("reports shape and graph problems together", () => {
    const problems = problemsOf({
      sources: [{ name: "chats", format: "nope" }],
      steps: [{ type: "transform", name: "t", from: "missing", prompt: "x" }],
    });
    expect(problems.map((p) => formatPath(p.path))).toEqual(["sources[0].format", "steps[0].from"]);
  });

  it("parseSpecShape skips graph checks", () => {
    const input = { steps: [{ type: "transform", name: "t", from: "missing", prompt: "x" }] };
    expect(parseSpecShape(input).ok).toBe(true);
    expect(parseSpec(input).ok).toBe(false);
  });

  it("assertSpec throws a SpecError listing every problem with its path", () => {
    const bad: PipelineSpecInput = { steps: [{ type: "transform", name: "t", from: "nowhere" }] };
    try {
      assertSpec(bad);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(SpecError);
      const e = err as SpecError;
      expect(e.problems).toHaveLength(2);
      expect(e.message).toContain("steps[0].from (t): unknown input");
      expect(e.message).toContain("steps[0].prompt (t):");
    }
  });

  it("the schema converts to JSON Schema (for OpenAPI documents)", async () => {
    const { z } = await import("zod");
    const json = z.toJSONSchema(pipelineSpecSchema, { io: "input" }) as { properties: Record<string, unknown> };
    expect(Object.keys(json.properties)).toEqual(["version", "sources", "steps", "outputs"]);
  });
});

describe("one window operator", () => {
  const legacy = {
    version: 1,
    sources: [{ name: "chats", format: "json" }],
    steps: [{ name: "windows", type: "split", from: "chats", operator: { kind: "windows", radius: 2 } }],
    outputs: [{ name: "search", from: "windows", surface: "search" }],
  };

  it("reads a stored spec's `windows` operator as the centred `turns` operator it equals", () => {
    const spec = assertSpec(legacy);
    expect(spec.steps[0]).toMatchObject({ type: "split", operator: { kind: "turns", size: 5, stride: 1, centered: true } });
    // The input is not mutated, and the default radius (1) is a 3-turn window.
    expect(legacy.steps[0]!.operator.kind).toBe("windows");
    const byDefault = assertSpec({ ...legacy, steps: [{ ...legacy.steps[0], operator: { kind: "windows" } }] });
    expect(byDefault.steps[0]).toMatchObject({ operator: { kind: "turns", size: 3, centered: true } });
  });

  it("still refuses a bad radius, at its path", () => {
    const result = parseSpec({ ...legacy, steps: [{ ...legacy.steps[0], operator: { kind: "windows", radius: -1 } }] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.some((p) => p.path.join(".").startsWith("steps.0.operator"))).toBe(true);
  });
});
