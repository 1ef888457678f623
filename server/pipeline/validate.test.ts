import { describe, expect, it } from "vitest";
import { formatPath, parseSpec, type PipelineSpecInput, type Problem } from "./spec";
import { defaultChatMemorySpec } from "./templates";
import { downstreamOf, inputsOf, topologicalOrder, upstreamOf, validatePipeline } from "./validate";

const sources = [
  { name: "chats", format: "chatgpt-export" },
  { name: "claude", format: "claude-export" },
] as const;

function problems(input: PipelineSpecInput): Problem[] {
  const result = parseSpec(input);
  return result.ok ? [] : result.problems;
}

function at(input: PipelineSpecInput, path: (string | number)[]): Problem {
  const all = problems(input);
  const found = all.find((p) => JSON.stringify(p.path) === JSON.stringify(path));
  if (!found) throw new Error(`no problem at ${formatPath(path)}; got:\n${all.map((p) => `${formatPath(p.path)}: ${p.message}`).join("\n")}`);
  return found;
}

const t = (name: string, from: string | string[], extra: Record<string, unknown> = {}) =>
  ({ type: "transform", name, from, prompt: "{{ record.content }}", ...extra }) as never;

describe("validatePipeline", () => {
  it("accepts the default architecture", () => {
    expect(validatePipeline(defaultChatMemorySpec())).toEqual([]);
  });

  it("reports duplicate names across sources, steps and outputs", () => {
    const spec = { sources: [...sources], steps: [t("chats", "claude")], outputs: [{ name: "chats", from: "claude", surface: "search" as const }] };
    const step = at(spec, ["steps", 0, "name"]);
    expect(step.node).toBe("chats");
    expect(step.message).toMatch(/name "chats" is already used by the source at sources\[0\]/);
    expect(at(spec, ["outputs", 0, "name"]).message).toMatch(/already used/);
  });

  it("reports unknown inputs, listing the names that exist and a likely typo", () => {
    const spec = { sources: [...sources], steps: [t("summaries", "chats"), t("monthly", "sumaries")] };
    const p = at(spec, ["steps", 1, "from"]);
    expect(p.node).toBe("monthly");
    expect(p.message).toBe('unknown input "sumaries" (did you mean "summaries"?); sources and steps: chats, claude, summaries');
  });

  it("points at the list element for unknown inputs in a list", () => {
    const spec = { sources: [...sources], steps: [{ type: "merge" as const, name: "m", from: ["chats", "nope"] }] };
    expect(at(spec, ["steps", 0, "from", 1]).message).toMatch(/unknown input "nope"/);
  });

  it("names a cycle", () => {
    const spec = { sources: [...sources], steps: [t("a", "b"), t("b", "a")] };
    const all = problems(spec);
    const cycles = all.filter((p) => p.message.startsWith("cycle"));
    expect(cycles).toHaveLength(1);
    expect(cycles[0]!.path).toEqual(["steps", 0, "from"]);
    expect(cycles[0]!.message).toMatch(/^cycle: a → b → a;/);
  });

  it("names a longer cycle in data-flow order, once", () => {
    const spec = { sources: [...sources], steps: [t("x", "chats"), t("a", "c"), t("b", "a"), t("c", "b"), t("d", "c")] };
    const cycles = problems(spec).filter((p) => p.message.startsWith("cycle"));
    expect(cycles.map((p) => p.message.split(";")[0])).toEqual(["cycle: a → b → c → a"]);
    expect(cycles[0]!.node).toBe("a");
  });

  it("reports a step using itself", () => {
    const p = at({ sources: [...sources], steps: [t("loop", "loop")] }, ["steps", 0, "from"]);
    expect(p.message).toMatch(/step "loop" uses itself as its input/);
  });

  it("enforces arity per step type", () => {
    expect(at({ sources: [...sources], steps: [t("x", ["chats", "claude"])] }, ["steps", 0, "from"]).message).toMatch(
      /transform takes exactly one input.*merge step/,
    );
    for (const type of ["split", "aggregate", "fold"]) {
      const step = { type, name: "x", from: ["chats", "claude"], prompt: "p", ...(type === "aggregate" ? { groupBy: { period: "month" } } : {}) };
      expect(at({ sources: [...sources], steps: [step as never] }, ["steps", 0, "from"]).message).toMatch(new RegExp(`${type} takes exactly one input`));
    }
    expect(at({ sources: [...sources], steps: [{ type: "merge", name: "m", from: "chats" } as never] }, ["steps", 0, "from"]).message).toMatch(
      /merge takes a list of at least two inputs: write from: \["chats", "\.\.\."\]/,
    );
    expect(at({ sources: [...sources], steps: [{ type: "merge", name: "m", from: ["chats"] }] }, ["steps", 0, "from"]).message).toMatch(/at least two/);
    expect(at({ sources: [...sources], steps: [{ type: "merge", name: "m", from: ["chats", "chats"] }] }, ["steps", 0, "from", 1]).message).toMatch(
      /"chats" is listed twice/,
    );
  });

  it("outputs take a name or a list, but not another output; steps cannot read outputs", () => {
    const spec = {
      sources: [...sources],
      steps: [t("s", "chats"), t("bad", "ctx")],
      outputs: [
        { name: "ctx", from: "s", surface: "projection" as const },
        { name: "idx", from: ["s", "chats"], surface: "search" as const },
        { name: "meta", from: ["ctx"], surface: "search" as const },
      ],
    };
    expect(at(spec, ["outputs", 2, "from", 0]).message).toMatch(/"ctx" is an output; outputs read from sources and steps/);
    expect(at(spec, ["steps", 1, "from"]).message).toMatch(/"ctx" is an output; steps read from sources and steps/);
    expect(problems(spec).filter((p) => p.path[0] === "outputs" && p.path[1] !== 2)).toEqual([]);
  });

  it("reports bad groupBy", () => {
    const agg = (groupBy: unknown) => ({ sources: [...sources], steps: [{ type: "aggregate", name: "g", from: "chats", prompt: "p", groupBy } as never] });
    expect(at(agg({ every: 1 }), ["steps", 0, "groupBy", "every"]).message).toMatch(/at least 2/);
    expect(at(agg({ every: 2.5 }), ["steps", 0, "groupBy"]).message).toMatch(/an integer from 2 to 1000000; got 2.5/);
    expect(at(agg({ period: "fortnight" }), ["steps", 0, "groupBy"]).message).toMatch(/period must be one of day, week, month, year; got "fortnight"/);
    expect(at(agg({ key: "meta.custom.topic" }), ["steps", 0, "groupBy", "key"]).message).toMatch(/write "custom.topic"/);
    expect(at(agg({ key: "topic.name" }), ["steps", 0, "groupBy", "key"]).message).toMatch(/custom\./);
    expect(at(agg({ period: "month", every: 3 }), ["steps", 0, "groupBy"]).message).toMatch(/exactly one of period, key or every/);
    expect(at(agg(undefined), ["steps", 0, "groupBy"]).message).toMatch(/aggregate needs groupBy/);
    expect(problems(agg({ key: "chat.conversation_id" }))).toEqual([]);
  });

  it("reports templates that do not parse, with the parser's message", () => {
    const p = at({ sources: [...sources], steps: [t("s", "chats", { prompt: "Hello {% if %}" })] }, ["steps", 0, "prompt"]);
    expect(p.message).toMatch(/^template does not parse: .*line:1, col:/);
    expect(at({ sources: [...sources], steps: [t("s", "chats", { prompt: "{{ x | nofilter }}" })] }, ["steps", 0, "prompt"]).message).toMatch(
      /undefined filter: nofilter/,
    );
    const out = { sources: [...sources], outputs: [{ name: "o", from: "chats", surface: "projection" as const, template: "{{ record.content " }] };
    expect(at(out, ["outputs", 0, "template"]).message).toMatch(/template does not parse/);
  });

  it("reports unknown template variables with a hint", () => {
    const p = at({ sources: [...sources], steps: [t("s", "chats", { prompt: "{{ recrod.content }}" })] }, ["steps", 0, "prompt"]);
    expect(p.message).toMatch(/unknown template variable "recrod" \(did you mean "record"\?\)/);
  });

  it("wants a prompt xor an operator on transform, split and aggregate", () => {
    const both = { sources: [...sources], steps: [t("s", "chats", { operator: { kind: "identity" } })] };
    expect(at(both, ["steps", 0, "operator"]).message).toMatch(/both a prompt and an operator/);
    const neither = { sources: [...sources], steps: [{ type: "split", name: "s", from: "chats" } as never] };
    expect(at(neither, ["steps", 0, "prompt"]).message).toMatch(/needs a prompt .* or an operator \(a built-in such as chunk\)/);
    const modelOnOperator = { sources: [...sources], steps: [{ type: "split", name: "s", from: "chats", operator: { kind: "sentences" }, model: "openai/gpt-4o" } as never] };
    expect(at(modelOnOperator, ["steps", 0, "model"]).message).toMatch(/only applies to a step with a prompt.*"sentences"/);
  });

  it("requires a prompt on fold", () => {
    const spec = { sources: [...sources], steps: [{ type: "fold", name: "f", from: "chats" } as never] };
    expect(at(spec, ["steps", 0, "prompt"]).message).toMatch(/fold "f" needs a prompt/);
  });

  it("accepts a consolidate step with a prompt and requires one without", () => {
    const spec = { sources: [...sources], steps: [{ type: "consolidate", name: "mem", from: "chats", prompt: "{{ record.content }}" } as never] };
    expect(problems(spec)).toEqual([]);
    const bare = { sources: [...sources], steps: [{ type: "consolidate", name: "mem", from: "chats" } as never] };
    expect(at(bare, ["steps", 0, "prompt"]).message).toMatch(/consolidate "mem" needs a prompt/);
  });

  it("checks chunk overlap, output options per surface and metadata paths", () => {
    const spec = {
      sources: [...sources],
      steps: [
        { type: "split", name: "c", from: "chats", operator: { kind: "chunk", size: 100, overlap: 100 } },
        { type: "fold", name: "f", from: "c", prompt: "p", orderKey: "created_at" },
        { type: "merge", name: "m", from: ["chats", "claude"], dedupe: { metadataMatch: ["conversation_id"] } },
      ] as never[],
      outputs: [
        { name: "s", from: "c", surface: "search" as const, webhook: { url: "https://x.test" }, template: "x" },
        { name: "p", from: "f", surface: "projection" as const, embedder: "offline/hash" },
      ],
    };
    expect(at(spec, ["steps", 0, "operator", "overlap"]).message).toMatch(/smaller than the chunk size/);
    expect(at(spec, ["steps", 1, "orderKey"]).message).toMatch(/not a metadata path/);
    expect(at(spec, ["steps", 2, "dedupe", "metadataMatch", 0]).message).toMatch(/not a metadata path/);
    expect(at(spec, ["outputs", 0, "webhook"]).message).toMatch(/only applies to projection/);
    expect(at(spec, ["outputs", 0, "template"]).message).toMatch(/only applies to projection/);
    expect(at(spec, ["outputs", 1, "embedder"]).message).toMatch(/only applies to search/);
  });

  it("never throws on malformed input", () => {
    for (const junk of [null, 3, "x", { steps: "x" }, { steps: [null, 3, { from: 5 }] }, { outputs: [{ from: [null] }] }]) {
      expect(() => validatePipeline(junk as never)).not.toThrow();
      expect(parseSpec(junk).ok).toBe(false);
    }
  });
});

describe("graph helpers", () => {
  const spec = {
    sources: [...sources],
    steps: [t("b", "a"), t("a", "chats"), t("c", "claude"), { type: "merge", name: "m", from: ["b", "c"] } as never, t("z", "m")],
    outputs: [{ name: "o", from: ["z", "a"], surface: "search" as const }],
  };

  it("orders sources first, then steps by dependency, ties by declaration order", () => {
    expect(topologicalOrder(spec)).toEqual(["chats", "claude", "a", "b", "c", "m", "z"]);
    expect(topologicalOrder(defaultChatMemorySpec())).toEqual(["chats", "transcripts", "summaries", "monthly", "world-model", "windows"]);
  });

  it("puts steps caught in a cycle last instead of failing", () => {
    expect(topologicalOrder({ sources: [...sources], steps: [t("x", "y"), t("y", "x"), t("w", "chats")] })).toEqual(["chats", "claude", "w", "x", "y"]);
  });

  it("downstreamOf and upstreamOf follow the graph transitively", () => {
    expect(downstreamOf(spec, "a")).toEqual(["b", "m", "z"]);
    expect(downstreamOf(spec, "a", { outputs: true })).toEqual(["b", "m", "z", "o"]);
    expect(downstreamOf(spec, "claude")).toEqual(["c", "m", "z"]);
    expect(downstreamOf(spec, "z")).toEqual([]);
    expect(upstreamOf(spec, "z")).toEqual(["chats", "claude", "a", "b", "c", "m"]);
    expect(upstreamOf(spec, "o")).toEqual(["chats", "claude", "a", "b", "c", "m", "z"]);
    expect(upstreamOf(spec, "chats")).toEqual([]);
    expect(inputsOf(spec, "m")).toEqual(["b", "c"]);
  });
});
