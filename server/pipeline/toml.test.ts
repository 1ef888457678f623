import { describe, expect, it } from "vitest";
import { specHash, stepVersionHashes } from "./hashing";
import { Pipeline } from "./sdk";
import { defaultChatMemorySpec, ragBaselineSpec } from "./templates";
import { SpecError, type PipelineSpec } from "./spec";
import { parseSpecToml, pipelineFromToml, specFromToml, specToToml } from "./toml";
import { kitchenSinkPipeline, kitchenSinkSpec } from "./test-fixtures";

function roundTrip(spec: PipelineSpec) {
  const toml = specToToml(spec);
  const back = specFromToml(toml);
  expect(back).toEqual(spec);
  expect(JSON.stringify(back)).toBe(JSON.stringify(spec));
  expect(specHash(back)).toBe(specHash(spec));
  expect(stepVersionHashes(back)).toEqual(stepVersionHashes(spec));
  // Writing it again gives the same text.
  expect(specToToml(back)).toBe(toml);
  return toml;
}

describe("TOML round trip", () => {
  it("default chat-memory spec", () => {
    const toml = roundTrip(defaultChatMemorySpec());
    expect(toml).toContain('[[steps]]\nname = "monthly"\ntype = "aggregate"\nfrom = "summaries"\ngroupBy = { period = "month" }');
    expect(toml).toContain("prompt = '''\nSummarize this conversation in 2-3 sentences.");
    expect(toml).toContain('[[outputs]]\nname = "search"\nfrom = ["transcripts", "summaries", "monthly", "windows"]\nsurface = "search"');
  });

  it("a spec using every step type, operator, dedupe form and output option", () => {
    const spec = kitchenSinkSpec();
    const types = new Set(spec.steps.map((s) => s.type));
    expect([...types].sort()).toEqual(["aggregate", "fold", "merge", "split", "transform"]);
    const operators = new Set(spec.steps.flatMap((s) => ("operator" in s && s.operator ? [`${s.type}:${s.operator.kind}`] : [])));
    expect([...operators].sort()).toEqual([
      "aggregate:extractive-summary",
      "split:chunk",
      "split:regex-entities",
      "split:sentences",
      "transform:extractive-summary",
      "transform:identity",
      "transform:json-pick",
      "transform:pii-flag",
    ]);
    const toml = roundTrip(spec);
    // Awkward prompts ('''-quotes, CR, backslashes) fall back to an escaped multi-line basic string.
    expect(toml).toContain('prompt = """\nClassify:');
    // JSON-schema output (with nulls, which TOML lacks) travels as a JSON string.
    expect(toml).toContain("output = '''\n{\n  \"type\": \"object\"");
  });

  it("the RAG baseline", () => {
    roundTrip(ragBaselineSpec("jsonl"));
  });

  it("keeps the pipeline's name, agent and description in a [pipeline] table", () => {
    const toml = kitchenSinkPipeline().toToml();
    expect(toml).toContain('[pipeline]\nname = "kitchen-sink"\nagent = "tester"');
    const { meta, spec } = pipelineFromToml(toml);
    expect(meta).toEqual({ name: "kitchen-sink", agent: "tester", description: "every step type and operator" });
    expect(specHash(spec)).toBe(specHash(kitchenSinkSpec()));
    const p = Pipeline.fromToml(toml);
    expect(p.name).toBe("kitchen-sink");
    expect(p.agent).toBe("tester");
    expect(p.specHash()).toBe(specHash(kitchenSinkSpec()));
  });

  it("accepts a hand-written spec with implicit defaults and a table as output schema", () => {
    const spec = specFromToml(`
[[sources]]
name = "chats"
format = "jsonl"

[[steps]]
name = "tags"
type = "transform"
from = "chats"
prompt = "Tag: {{ record.content }}"
output = { type = "object", properties = { tag = { type = "string" } } }
`);
    expect(spec.steps[0]).toMatchObject({ model: "offline/extractive", temperature: 0, output: { type: "object", properties: { tag: { type: "string" } } } });
  });
});

describe("TOML errors", () => {
  it("syntax errors say line and column", () => {
    const result = parseSpecToml('version = 1\n\n[[sources]]\nname = "chats\nformat = "jsonl"\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]!.message).toMatch(/^TOML syntax error at line 4, column \d+: /);
    expect(() => specFromToml("x = = 1")).toThrow(SpecError);
    expect(() => specFromToml("x = = 1")).toThrow(/line 1, column/);
  });

  it("spec problems carry their path and the line they are on", () => {
    const result = parseSpecToml(`
[[sources]]
name = "chats"
format = "jsonl"

[[steps]]
name = "summaries"
type = "transform"
from = "chat"
prompt = "{{ record.content }}"
`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      { path: ["steps", 0, "from"], node: "summaries", message: expect.stringMatching(/^unknown input "chat" \(did you mean "chats"\?\).*\(line 9\)$/) },
    ]);
  });

  it("reports invalid JSON in an output schema string and unknown [pipeline] fields", () => {
    const result = parseSpecToml(`
[pipeline]
name = "p"
owner = "me"

[[sources]]
name = "chats"
format = "jsonl"

[[steps]]
name = "t"
type = "transform"
from = "chats"
prompt = "x"
output = "{not json"
`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.path)).toEqual([["pipeline", "owner"], ["steps", 0, "output"]]);
    expect(result.problems[1]!.message).toMatch(/output is not valid JSON/);
  });
});
