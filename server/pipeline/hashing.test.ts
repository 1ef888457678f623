import { describe, expect, it } from "vitest";
import { canonicalJson, contentFingerprint, sha256, specHash, stepVersionHashes, templateHash } from "./hashing";
import { defaultChatMemorySpec } from "./templates";
import { DEFAULT_MODEL, SpecError, type PipelineSpec, type PipelineSpecInput } from "./spec";
import { kitchenSinkSpec } from "./test-fixtures";

function changed(a: Record<string, string>, b: Record<string, string>): string[] {
  return Object.keys({ ...a, ...b }).filter((k) => a[k] !== b[k]);
}

function withStep(spec: PipelineSpec, name: string, patch: Record<string, unknown>): PipelineSpec {
  return { ...spec, steps: spec.steps.map((s) => (s.name === name ? ({ ...s, ...patch } as typeof s) : s)) };
}

describe("canonicalJson", () => {
  it("sorts keys, drops undefined, has no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, "x", null], c: undefined, e: true } })).toBe('{"a":{"d":[1,"x",null],"e":true},"b":1}');
    expect(canonicalJson([undefined, () => 1])).toBe("[null,null]");
    expect(canonicalJson({ z: 1, a: 2 })).toBe(canonicalJson({ a: 2, z: 1 }));
    expect(canonicalJson(new Date("2024-03-01T00:00:00Z"))).toBe('"2024-03-01T00:00:00.000Z"');
    expect(canonicalJson("é\n")).toBe('"é\\n"');
  });

  it("refuses values without a JSON form", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ n: Infinity })).toThrow(TypeError);
    expect(() => canonicalJson(1n)).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cyclic/);
  });

  it("allows the same object twice (not a cycle)", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe("fingerprints", () => {
  it("sha256 is hex SHA-256 of UTF-8", () => {
    expect(sha256("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256("é")).toBe(sha256("\u00e9"));
    expect(templateHash("x")).toBe(sha256("x"));
  });

  it("contentFingerprint strips trailing whitespace only", () => {
    const base = contentFingerprint("hello world");
    expect(base).toBe(sha256("hello world"));
    expect(contentFingerprint("hello world  \n\t\r\n")).toBe(base);
    expect(contentFingerprint("hello world\u00a0\u2003")).toBe(base);
    expect(contentFingerprint(" hello world")).not.toBe(base);
    expect(contentFingerprint("\nhello world")).not.toBe(base);
    expect(contentFingerprint("hello  world")).not.toBe(base);
    expect(contentFingerprint("Hello world")).not.toBe(base);
  });
});

describe("stepVersionHashes", () => {
  const spec = defaultChatMemorySpec();
  const hashes = stepVersionHashes(spec);

  it("hashes every source and step", () => {
    expect(Object.keys(hashes)).toEqual(["chats", "transcripts", "summaries", "monthly", "world-model", "windows"]);
    for (const h of Object.values(hashes)) expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(Object.values(hashes)).size).toBe(6);
  });

  it("changing a template changes exactly that step's hash and everything downstream, nothing upstream", () => {
    const after = stepVersionHashes(withStep(spec, "summaries", { prompt: "Summarize in one line: {{ record.content }}" }));
    expect(changed(hashes, after)).toEqual(["summaries", "monthly", "world-model"]);
    const fold = stepVersionHashes(withStep(spec, "world-model", { prompt: "{{ state }}\n{{ record.content }}" }));
    expect(changed(hashes, fold)).toEqual(["world-model"]);
    const first = stepVersionHashes(withStep(spec, "transcripts", { prompt: "T: {{ record.content }}" }));
    expect(changed(hashes, first)).toEqual(["transcripts", "summaries", "monthly", "world-model", "windows"]);
  });

  it("model, temperature, output schema and config each change the hash", () => {
    expect(changed(hashes, stepVersionHashes(withStep(spec, "summaries", { model: "openai/gpt-4o" })))).toEqual(["summaries", "monthly", "world-model"]);
    expect(changed(hashes, stepVersionHashes(withStep(spec, "summaries", { temperature: 0.5 })))).toEqual(["summaries", "monthly", "world-model"]);
    expect(changed(hashes, stepVersionHashes(withStep(spec, "summaries", { output: { type: "object" } })))).toEqual(["summaries", "monthly", "world-model"]);
    expect(changed(hashes, stepVersionHashes(withStep(spec, "monthly", { groupBy: { period: "week" } })))).toEqual(["monthly", "world-model"]);
    expect(changed(hashes, stepVersionHashes(withStep(spec, "world-model", { checkpointEvery: 12 })))).toEqual(["world-model"]);
  });

  it("a source's hash is (format, scope) and flows downstream", () => {
    const scoped = { ...spec, sources: [{ ...spec.sources[0]!, scope: "acme:eng" }] };
    expect(changed(hashes, stepVersionHashes(scoped))).toEqual(["chats", "transcripts", "summaries", "monthly", "world-model", "windows"]);
    const described = { ...spec, sources: [{ ...spec.sources[0]!, description: "my export" }] };
    expect(changed(hashes, stepVersionHashes(described))).toEqual([]);
  });

  it("ignores names of the step itself, descriptions and outputs", () => {
    expect(changed(hashes, stepVersionHashes(withStep(spec, "summaries", { description: "short summaries" })))).toEqual([]);
    expect(changed(hashes, stepVersionHashes({ ...spec, outputs: [] }))).toEqual([]);
  });

  it("explicit defaults hash the same as implicit ones", () => {
    const implicit: PipelineSpecInput = {
      sources: [{ name: "s", format: "text" }],
      steps: [
        { type: "transform", name: "t", from: "s", prompt: "{{ record.content }}" },
        { type: "fold", name: "f", from: "t", prompt: "{{ state }}" },
        { type: "split", name: "c", from: "s", operator: { kind: "chunk" } },
      ],
    };
    const explicit: PipelineSpecInput = {
      version: 1,
      sources: [{ name: "s", format: "text" }],
      steps: [
        { type: "transform", name: "t", from: "s", prompt: "{{ record.content }}", model: DEFAULT_MODEL, temperature: 0 },
        { type: "fold", name: "f", from: "t", prompt: "{{ state }}", orderKey: "time.created_at", checkpointEvery: 6, maxStateTokens: 8000 },
        { type: "split", name: "c", from: "s", operator: { kind: "chunk", size: 1200, overlap: 0 } },
      ],
      outputs: [],
    };
    expect(stepVersionHashes(implicit)).toEqual(stepVersionHashes(explicit));
    expect(specHash(implicit)).toBe(specHash(explicit));
  });

  it("merge hashes its inputs in from order", () => {
    const m = (from: string[]): PipelineSpecInput => ({
      sources: [
        { name: "a", format: "jsonl" },
        { name: "b", format: "text" },
      ],
      steps: [{ type: "merge", name: "m", from, conflict: "prefer_first" }],
    });
    expect(stepVersionHashes(m(["a", "b"])).m).not.toBe(stepVersionHashes(m(["b", "a"])).m);
  });

  it("is stable across runs (golden value guards accidental recipe changes)", () => {
    const tiny: PipelineSpecInput = { sources: [{ name: "s", format: "text" }], steps: [{ type: "transform", name: "t", from: "s", operator: { kind: "identity" } }] };
    expect(stepVersionHashes(tiny)).toEqual(stepVersionHashes(JSON.parse(JSON.stringify(tiny))));
    expect(stepVersionHashes(kitchenSinkSpec())).toEqual(stepVersionHashes(kitchenSinkSpec()));
  });

  it("throws a SpecError for unknown inputs and cycles", () => {
    const bad: PipelineSpecInput = { steps: [{ type: "transform", name: "t", from: "nowhere", prompt: "x" }] };
    expect(() => stepVersionHashes(bad)).toThrow(SpecError);
    const cycle: PipelineSpecInput = {
      steps: [
        { type: "transform", name: "a", from: "b", prompt: "x" },
        { type: "transform", name: "b", from: "a", prompt: "x" },
      ],
    };
    expect(() => stepVersionHashes(cycle)).toThrow(/part of a cycle/);
  });
});

describe("specHash", () => {
  it("changes with any spec change, including descriptions and outputs", () => {
    const spec = defaultChatMemorySpec();
    const h = specHash(spec);
    expect(specHash(structuredClone(spec))).toBe(h);
    expect(specHash({ ...spec, outputs: spec.outputs.slice(1) })).not.toBe(h);
    expect(specHash(withStep(spec, "monthly", { description: "x" }))).not.toBe(h);
  });
});
