import { describe, expect, it } from "vitest";
import { defaultChatMemorySpec } from "@/server/pipeline/templates";
import { parseSpec } from "@/server/pipeline/spec";
import {
  addNode,
  autoLayout,
  connect,
  freeSpot,
  disconnect,
  needsLayout,
  pasteNode,
  refOf,
  removeNode,
  renameNode,
  specToGraph,
  toDraft,
  updateNode,
} from "./spec-graph";

const base = () => toDraft(defaultChatMemorySpec());

describe("specToGraph", () => {
  it("maps sources, steps and outputs to typed nodes and `from` to edges", () => {
    const spec = base();
    const layout = autoLayout(spec);
    const { nodes, edges } = specToGraph(spec, layout);
    expect(nodes.map((n) => n.id)).toEqual([
      "source:chats",
      "step:transcripts",
      "step:summaries",
      "step:monthly",
      "step:world-model",
      "step:windows",
      "output:context",
      "output:search",
    ]);
    expect(nodes.find((n) => n.id === "step:monthly")?.data.type).toBe("aggregate");
    expect(nodes.find((n) => n.id === "source:chats")?.data.type).toBe("chatgpt-export");
    expect(nodes.find((n) => n.id === "output:search")?.data.type).toBe("search");
    expect(edges.map((e) => `${e.source}->${e.target}`)).toEqual([
      "source:chats->step:transcripts",
      "step:transcripts->step:summaries",
      "step:summaries->step:monthly",
      "step:monthly->step:world-model",
      "step:transcripts->step:windows",
      "step:world-model->output:context",
      "step:transcripts->output:search",
      "step:summaries->output:search",
      "step:monthly->output:search",
      "step:windows->output:search",
    ]);
    // Dagre places inputs above their readers.
    expect(layout.positions["source:chats"]!.y).toBeLessThan(layout.positions["step:transcripts"]!.y);
    expect(layout.positions["step:world-model"]!.y).toBeLessThan(layout.positions["output:context"]!.y);
    expect(needsLayout(spec, layout)).toBe(false);
    expect(needsLayout(spec, null)).toBe(true);
  });

  it("marks the nodes and edges that problems point at", () => {
    const spec = updateNode(base(), { kind: "step", index: 1 }, { from: "nowhere" });
    const parsed = parseSpec(spec);
    expect(parsed.ok).toBe(false);
    const { nodes } = specToGraph(spec, null, parsed.ok ? [] : parsed.problems);
    const summaries = nodes.find((n) => n.id === "step:summaries")!;
    expect(summaries.data.problems[0]?.path).toEqual(["steps", 1, "from"]);
    expect(nodes.find((n) => n.id === "step:monthly")!.data.problems).toEqual([]);
  });
});

describe("edits round-trip to the spec", () => {
  it("a field edit changes exactly that field of the spec", () => {
    const spec = base();
    const ref = refOf(spec, "step:summaries")!;
    const next = updateNode(spec, ref, { prompt: "Summarize: {{ record.content }}", temperature: 0.3 });
    const parsed = parseSpec(next);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const original = parseSpec(spec);
    if (!original.ok) throw new Error("base spec invalid");
    const before = original.spec.steps.find((s) => s.name === "summaries")!;
    const after = parsed.spec.steps.find((s) => s.name === "summaries")!;
    expect(after).toEqual({ ...before, prompt: "Summarize: {{ record.content }}", temperature: 0.3 });
    // Everything else is untouched.
    expect(parsed.spec.steps.filter((s) => s.name !== "summaries")).toEqual(original.spec.steps.filter((s) => s.name !== "summaries"));
    // And the graph shows the edited node.
    expect(specToGraph(next).nodes.find((n) => n.id === "step:summaries")!.data.node.prompt).toContain("Summarize:");
  });

  it("undefined removes a field (no nulls in the spec)", () => {
    const spec = base();
    const next = updateNode(spec, { kind: "step", index: 1 }, { temperature: undefined });
    expect("temperature" in next.steps[1]!).toBe(false);
    expect(parseSpec(next).ok).toBe(true);
  });

  it("aggregate groupBy and fold fields edit the spec", () => {
    let spec = base();
    spec = updateNode(spec, refOf(spec, "step:monthly")!, { groupBy: { every: 10 } });
    spec = updateNode(spec, refOf(spec, "step:world-model")!, { checkpointEvery: 3, maxStateTokens: 4000 });
    const parsed = parseSpec(spec);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.spec.steps[2]).toMatchObject({ groupBy: { every: 10 } });
    expect(parsed.spec.steps[3]).toMatchObject({ checkpointEvery: 3, maxStateTokens: 4000 });
  });

  it("renaming a step rewrites every from that read it", () => {
    const res = renameNode(base(), { kind: "step", index: 1 }, "digests");
    if (!res.ok) throw new Error(res.error);
    const spec = res.spec;
    expect(spec.steps[2]!.from).toBe("digests");
    expect(spec.outputs[1]!.from).toEqual(["transcripts", "digests", "monthly", "windows"]);
    expect(res).toMatchObject({ oldId: "step:summaries", newId: "step:digests" });
    expect(parseSpec(spec).ok).toBe(true);
  });

  it("a rename refuses a name another node has, and field edits never touch names or readers", () => {
    // A `facts` step beside `summaries`; `monthly` reads `summaries`.
    const withFacts = addNode(base(), "step", { type: "transform", name: "facts", from: "transcripts", prompt: "{{ record.content }}" });
    const facts = withFacts.ref;
    // What typing "summaries-v2" letter by letter used to do: every keystroke renamed and cascaded.
    let typed = withFacts.spec;
    for (let i = 1; i <= "summaries-v2".length; i++) typed = updateNode(typed, facts, { name: "summaries-v2".slice(0, i) });
    expect(typed).toEqual(withFacts.spec);
    // Committing an existing name is refused; nothing changes.
    const clash = renameNode(withFacts.spec, facts, "summaries");
    expect(clash.ok).toBe(false);
    if (!clash.ok) expect(clash.error).toMatch(/"summaries" is already the name of the step at steps\[1\]/);
    // Committing the final name renames facts only: monthly still reads summaries.
    const done = renameNode(withFacts.spec, facts, "summaries-v2");
    if (!done.ok) throw new Error(done.error);
    expect(done.spec.steps.map((s) => s.name)).toEqual([...base().steps.map((s) => s.name), "summaries-v2"]);
    expect(done.spec.steps[2]!.from).toBe("summaries");
    expect(done.spec.outputs).toEqual(withFacts.spec.outputs);
    expect(renameNode(withFacts.spec, facts, "  ").ok).toBe(false);
  });
});

describe("connect sets from with the right arity", () => {
  it("single-input steps get a string", () => {
    for (const type of ["transform", "split", "aggregate", "fold", "consolidate"]) {
      const { spec, ref } = addNode(base(), "step", { type, name: "x" });
      const next = connect(spec, "step:summaries", `step:${spec.steps[ref.index]!.name}`);
      expect(next.steps[ref.index]!.from).toBe("summaries");
      // Connecting another input replaces it (one input only).
      const again = connect(next, "source:chats", `step:${spec.steps[ref.index]!.name}`);
      expect(again.steps[ref.index]!.from).toBe("chats");
    }
  });

  it("merge steps get a list", () => {
    const { spec, ref } = addNode(base(), "step", { type: "merge", name: "all" });
    let next = connect(spec, "step:summaries", "step:all");
    expect(next.steps[ref.index]!.from).toEqual(["summaries"]);
    next = connect(next, "step:monthly", "step:all");
    expect(next.steps[ref.index]!.from).toEqual(["summaries", "monthly"]);
    // No duplicates.
    expect(connect(next, "step:monthly", "step:all").steps[ref.index]!.from).toEqual(["summaries", "monthly"]);
    expect(parseSpec(next).ok).toBe(true);
  });

  it("outputs get a list, even when they had a single name", () => {
    const next = connect(base(), "step:summaries", "output:context");
    expect(next.outputs[0]!.from).toEqual(["world-model", "summaries"]);
    const more = connect(next, "step:world-model", "output:search");
    expect(more.outputs[1]!.from).toEqual(["transcripts", "summaries", "monthly", "windows", "world-model"]);
  });

  it("refuses edges out of outputs and into sources", () => {
    const spec = base();
    expect(connect(spec, "output:context", "step:monthly")).toBe(spec);
    expect(connect(spec, "step:monthly", "source:chats")).toBe(spec);
  });

  it("disconnect drops the name from from", () => {
    const next = disconnect(base(), "step:summaries", "output:search");
    expect(next.outputs[1]!.from).toEqual(["transcripts", "monthly", "windows"]);
    const single = disconnect(base(), "step:summaries", "step:monthly");
    expect("from" in single.steps[2]!).toBe(false);
  });
});

describe("add, remove, paste", () => {
  it("adding makes names unique", () => {
    const a = addNode(base(), "step", { type: "transform", name: "summaries", from: "transcripts", prompt: "{{ record.content }}" });
    expect(a.spec.steps[a.ref.index]!.name).toBe("summaries-2");
    expect(parseSpec(a.spec).ok).toBe(true);
  });

  it("removing a node removes references to it", () => {
    const spec = base();
    const next = removeNode(spec, refOf(spec, "step:monthly")!);
    expect(next.steps.map((s) => s.name)).toEqual(["transcripts", "summaries", "world-model", "windows"]);
    expect("from" in next.steps[2]!).toBe(false);
    expect(next.outputs[1]!.from).toEqual(["transcripts", "summaries", "windows"]);
    const parsed = parseSpec(next);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems.some((p) => p.node === "world-model" && p.path.includes("from"))).toBe(true);
  });

  it("paste renames the copy", () => {
    const spec = base();
    const one = pasteNode(spec, "step", spec.steps[1]!);
    expect(one.spec.steps[one.ref.index]!.name).toBe("summaries-copy");
    const two = pasteNode(one.spec, "step", spec.steps[1]!);
    expect(two.spec.steps[two.ref.index]!.name).toBe("summaries-copy-2");
    expect(parseSpec(two.spec).ok).toBe(true);
  });
});

describe("freeSpot", () => {
  it("moves right until nothing overlaps", () => {
    const layout = { positions: { a: { x: 0, y: 0 }, b: { x: 250, y: 0 } } };
    expect(freeSpot(layout, { x: 10, y: 10 })).toEqual({ x: 510, y: 10 });
    expect(freeSpot(layout, { x: 0, y: 300 })).toEqual({ x: 0, y: 300 });
  });
});
