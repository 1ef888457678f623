/**
 * Graph checks beyond the zod shape: names, references, arity, cycles, prompt-or-operator,
 * templates. Every problem names its place (`path` into the spec, `node`) and says what to do.
 *
 * `validatePipeline` is written defensively: it also runs on a spec that failed the shape check
 * (so the canvas can mark every problem at once) and never throws on odd input.
 *
 * Graph helpers: `topologicalOrder`, `downstreamOf`, `upstreamOf`.
 */
import {
  didYouMean,
  groupByProblem,
  metadataPathProblem,
  OPERATOR_STEP_TYPES,
  quoteList,
  SINGLE_INPUT_STEP_TYPES,
} from "./rules";
import type { PipelineSpec, PipelineSpecInput, Problem } from "./spec";
import { checkTemplate, TEMPLATE_VARIABLES } from "./prompts";

type Loose = Record<string, unknown>;
/** Just the graph: also what the engine runs, where a step kind may come from outside the spec schema (tests). */
export interface GraphSpec {
  sources?: ReadonlyArray<{ name: string }>;
  steps?: ReadonlyArray<{ name: string; from: string | readonly string[] }>;
}
type AnySpec = PipelineSpec | PipelineSpecInput | GraphSpec;
type Kind = "source" | "step" | "output";

const isObject = (v: unknown): v is Loose => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const SECTION: Record<Kind, "sources" | "steps" | "outputs"> = { source: "sources", step: "steps", output: "outputs" };

interface Node {
  kind: Kind;
  index: number;
  name: string | undefined;
  raw: Loose;
}

function nodesOf(spec: unknown): Node[] {
  const s = isObject(spec) ? spec : {};
  const out: Node[] = [];
  for (const kind of ["source", "step", "output"] as const) {
    list(s[SECTION[kind]]).forEach((raw, index) => {
      const obj = isObject(raw) ? raw : {};
      out.push({ kind, index, name: str(obj.name), raw: obj });
    });
  }
  return out;
}

/** `from` as given: a name, a list of names, or something invalid (undefined). */
function refsOf(raw: Loose): { single: boolean; names: (string | undefined)[] } | undefined {
  if (typeof raw.from === "string") return { single: true, names: [raw.from] };
  if (Array.isArray(raw.from)) return { single: false, names: raw.from.map(str) };
  return undefined;
}

function describe(node: Node): string {
  return `${SECTION[node.kind]}[${node.index}]`;
}

/** Every graph problem in a spec (empty when it is valid). */
export function validatePipeline(spec: AnySpec): Problem[] {
  const problems: Problem[] = [];
  const nodes = nodesOf(spec);
  const add = (node: Node, field: (string | number)[], message: string) =>
    problems.push({ path: [SECTION[node.kind], node.index, ...field], message, ...(node.name ? { node: node.name } : {}) });

  // Names are unique across sources, steps and outputs.
  const firstByName = new Map<string, Node>();
  for (const node of nodes) {
    if (!node.name) continue;
    const first = firstByName.get(node.name);
    if (first) {
      add(node, ["name"], `name "${node.name}" is already used by the ${first.kind} at ${describe(first)}; names must be unique across sources, steps and outputs`);
    } else firstByName.set(node.name, node);
  }
  const inputs = nodes.filter((n) => n.kind !== "output" && n.name);
  const inputNames = [...new Set(inputs.map((n) => n.name!))];
  const kindOf = (name: string) => firstByName.get(name)?.kind;

  const checkRef = (node: Node, field: (string | number)[], ref: string | undefined) => {
    if (ref === undefined || ref === "") return; // the shape check reports it
    if (node.kind === "step" && ref === node.name) {
      add(node, field, `step "${ref}" uses itself as its input; a step reads from a source or an earlier step`);
      return;
    }
    const kind = kindOf(ref);
    if (kind === "output") {
      add(node, field, `"${ref}" is an output; ${node.kind === "step" ? "steps" : "outputs"} read from sources and steps, not from outputs`);
      return;
    }
    if (kind) return;
    const candidates = inputNames.filter((n) => n !== node.name);
    const guess = didYouMean(ref, candidates);
    const known = candidates.length ? `sources and steps: ${candidates.join(", ")}` : "there are no sources or steps yet";
    add(node, field, `unknown input "${ref}"${guess ? ` (did you mean "${guess}"?)` : ""}; ${known}`);
  };

  for (const node of nodes) {
    const raw = node.raw;
    const refs = refsOf(raw);
    const type = str(raw.type);

    if (node.kind === "step") {
      // Arity (seed §3.6): one input for transform/split/aggregate/fold/consolidate, a list of ≥ 2 for merge.
      if (refs && type && (SINGLE_INPUT_STEP_TYPES as readonly string[]).includes(type) && !refs.single) {
        add(node, ["from"], `${type} takes exactly one input: from must be a single step or source name, not a list (combine several inputs with a merge step first)`);
      } else if (refs && type === "merge" && refs.single) {
        add(node, ["from"], `merge takes a list of at least two inputs: write from: ["${refs.names[0]}", "..."], not a single name`);
      } else if (refs && type === "merge" && refs.names.length < 2) {
        add(node, ["from"], `merge takes a list of at least two inputs; got ${refs.names.length}`);
      }
    }
    if (node.kind === "output" && refs && !refs.single && refs.names.length === 0) {
      add(node, ["from"], "from lists at least one step or source");
    }

    // References.
    if (refs) {
      const seen = new Set<string>();
      refs.names.forEach((ref, i) => {
        const field = refs.single ? ["from"] : ["from", i];
        if (ref !== undefined && seen.has(ref)) {
          add(node, field, `"${ref}" is listed twice in from`);
          return;
        }
        if (ref !== undefined) seen.add(ref);
        checkRef(node, field, ref);
      });
    }

    if (node.kind === "step" && refs && (type === "relations" || type === "insights")) {
      // Graph steps read each other by type: relations needs the entities, insights the beliefs.
      const typeOf = (ref: string | undefined) => (ref ? str(firstByName.get(ref)?.raw.type) : undefined);
      const known = refs.names.filter((r) => r !== undefined && kindOf(r) !== undefined);
      if (type === "relations" && known.length === refs.names.length) {
        const entitySteps = known.filter((r) => typeOf(r) === "entities");
        if (entitySteps.length !== 1) {
          add(node, ["from"], `relations reads exactly one entities step (the entities it links) beside the text step(s); from lists ${entitySteps.length ? entitySteps.map((e) => `"${e}"`).join(", ") : "none"}`);
        } else if (entitySteps.length === known.length) {
          add(node, ["from"], `relations also reads the text the entities came from: add the text step (e.g. "turns") to from`);
        }
      }
      if (type === "insights" && known.length === refs.names.length && !known.some((r) => typeOf(r) === "relations")) {
        add(node, ["from"], `insights reads the beliefs of a relations step: from must include one`);
      }
    }
    if (node.kind === "step" && type) validateStep(node, type, add);
    if (node.kind === "output") validateOutput(node, add);
  }

  for (const cycle of findCycles(spec)) {
    const first = nodes.find((n) => n.kind === "step" && n.name === cycle[0])!;
    add(first, ["from"], `cycle: ${[...cycle, cycle[0]].join(" → ")}; a pipeline is a DAG, so one of these steps must read from something else`);
  }
  return problems;
}

const PROMPT_HINT: Record<string, string> = {
  fold: "it sees record (the next input) and state (the understanding so far); DEFAULT_TEMPLATES.worldModel is a starting point",
  consolidate: "it sees record (the new fact) and records (similar memories)",
};

type Add = (node: Node, field: (string | number)[], message: string) => void;

function validateStep(node: Node, type: string, add: Add) {
  const raw = node.raw;
  const label = `${type} "${node.name ?? `#${node.index}`}"`;
  const hasPrompt = typeof raw.prompt === "string";
  const hasOperator = raw.operator !== undefined;

  if ((OPERATOR_STEP_TYPES as readonly string[]).includes(type)) {
    if (hasPrompt && hasOperator) {
      add(node, ["operator"], `${label} has both a prompt and an operator: set either a prompt (the model does the work) or an operator (a built-in), not both`);
    } else if (!hasPrompt && !hasOperator) {
      add(node, ["prompt"], `${label} needs a prompt (a Liquid template for the model) or an operator (a built-in such as ${type === "split" ? "chunk" : "extractive-summary"})`);
    }
    if (hasOperator && !hasPrompt) {
      for (const field of ["model", "temperature", "output"] as const) {
        if (raw[field] !== undefined) {
          const kind = isObject(raw.operator) ? str(raw.operator.kind) : undefined;
          add(node, [field], `${field} only applies to a step with a prompt; ${label} uses the built-in operator${kind ? ` "${kind}"` : ""}: remove ${field} or replace the operator with a prompt`);
        }
      }
    }
  } else if (type === "fold" || type === "consolidate") {
    if (!hasPrompt) add(node, ["prompt"], `${label} needs a prompt (a Liquid template); ${PROMPT_HINT[type]}`);
  }

  if (type === "aggregate") {
    const problem = groupByProblem(raw.groupBy);
    if (problem) add(node, ["groupBy"], problem);
  }
  if (type === "fold" && raw.orderKey !== undefined) {
    const problem = metadataPathProblem(raw.orderKey);
    if (problem) add(node, ["orderKey"], problem);
  }
  if (type === "merge" && isObject(raw.dedupe) && Array.isArray(raw.dedupe.metadataMatch)) {
    raw.dedupe.metadataMatch.forEach((path, i) => {
      const problem = metadataPathProblem(path);
      if (problem) add(node, ["dedupe", "metadataMatch", i], problem);
    });
  }
  if (type === "split" && isObject(raw.operator) && raw.operator.kind === "chunk") {
    const size = typeof raw.operator.size === "number" ? raw.operator.size : 1200;
    const overlap = raw.operator.overlap;
    if (typeof overlap === "number" && overlap >= size) {
      add(node, ["operator", "overlap"], `overlap (${overlap}) must be smaller than the chunk size (${size})`);
    }
  }
  if (raw.output !== undefined && !isJsonObject(raw.output)) {
    add(node, ["output"], "output must be a JSON schema: a plain object of JSON values (strings, numbers, booleans, null, lists, objects)");
  }
  if (hasPrompt) checkTemplateAt(node, ["prompt"], raw.prompt as string, add);
}

function validateOutput(node: Node, add: Add) {
  const raw = node.raw;
  const surface = str(raw.surface);
  if (surface === "search") {
    if (raw.webhook !== undefined) add(node, ["webhook"], "webhook only applies to projection outputs (it fires when the projection changes)");
    if (raw.template !== undefined) add(node, ["template"], "template only applies to projection outputs (it renders the context block)");
  }
  if (surface === "projection" && raw.embedder !== undefined) {
    add(node, ["embedder"], "embedder only applies to search outputs");
  }
  if (typeof raw.template === "string") checkTemplateAt(node, ["template"], raw.template, add);
}

function checkTemplateAt(node: Node, field: string[], template: string, add: Add) {
  const check = checkTemplate(template);
  if (!check.ok) {
    add(node, field, `template does not parse: ${check.message}`);
    return;
  }
  for (const name of check.unknownVariables) {
    const guess = didYouMean(name, TEMPLATE_VARIABLES);
    add(node, field, `unknown template variable "${name}"${guess ? ` (did you mean "${guess}"?)` : ""}; templates can use ${quoteList(TEMPLATE_VARIABLES)}`);
  }
}

function isJsonObject(v: unknown): boolean {
  const ok = (x: unknown, depth: number): boolean => {
    if (depth > 64) return false;
    if (x === null || typeof x === "string" || typeof x === "boolean") return true;
    if (typeof x === "number") return Number.isFinite(x);
    if (Array.isArray(x)) return x.every((e) => ok(e, depth + 1));
    if (isObject(x) && (Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null)) {
      return Object.values(x).every((e) => ok(e, depth + 1));
    }
    return false;
  };
  return isObject(v) && ok(v, 0);
}

// ---------------------------------------------------------------------------------------------
// Graph

interface Graph {
  sources: string[];
  steps: string[];
  outputs: string[];
  /** step or output → the step/source names it reads (known ones only, first declaration wins). */
  deps: Map<string, string[]>;
}

function graphOf(spec: unknown): Graph {
  const nodes = nodesOf(spec);
  const g: Graph = { sources: [], steps: [], outputs: [], deps: new Map() };
  const seen = new Set<string>();
  for (const n of nodes) {
    if (!n.name || seen.has(n.name)) continue;
    seen.add(n.name);
    g[SECTION[n.kind]].push(n.name);
  }
  const inputs = new Set([...g.sources, ...g.steps]);
  for (const n of nodes) {
    if (n.kind === "source" || !n.name || g.deps.has(n.name)) continue;
    const refs = refsOf(n.raw);
    g.deps.set(n.name, [...new Set((refs?.names ?? []).filter((r): r is string => !!r && r !== n.name && inputs.has(r)))]);
  }
  return g;
}

/** Cycles among steps, each once, starting at its earliest-declared step (self-references excluded). */
function findCycles(spec: unknown): string[][] {
  const g = graphOf(spec);
  const steps = new Set(g.steps);
  const order = new Map(g.steps.map((s, i) => [s, i]));
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const cycles = new Map<string, string[]>();
  const visit = (name: string) => {
    state.set(name, "active");
    stack.push(name);
    for (const dep of g.deps.get(name) ?? []) {
      if (!steps.has(dep)) continue;
      const s = state.get(dep);
      if (s === "active") {
        // Edges point from a step to its input; report the cycle in data-flow order (input first).
        const cycle = stack.slice(stack.indexOf(dep)).reverse();
        const start = cycle.reduce((best, n, i) => (order.get(n)! < order.get(cycle[best]!)! ? i : best), 0);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        const key = [...rotated].sort().join("\u0000");
        if (!cycles.has(key)) cycles.set(key, rotated);
      } else if (!s) visit(dep);
    }
    stack.pop();
    state.set(name, "done");
  };
  for (const s of g.steps) if (!state.has(s)) visit(s);
  return [...cycles.values()].sort((a, b) => order.get(a[0]!)! - order.get(b[0]!)!);
}

/**
 * Sources (declaration order), then steps in dependency order, ties broken by declaration order.
 * Outputs are not included. On a spec with a cycle, the steps caught in it come last in declaration
 * order (validatePipeline reports the cycle).
 */
export function topologicalOrder(spec: AnySpec): string[] {
  const g = graphOf(spec);
  const stepSet = new Set(g.steps);
  const pending = new Map(g.steps.map((s) => [s, (g.deps.get(s) ?? []).filter((d) => stepSet.has(d)).length]));
  const dependents = new Map<string, string[]>();
  for (const s of g.steps) for (const d of g.deps.get(s) ?? []) if (stepSet.has(d)) dependents.set(d, [...(dependents.get(d) ?? []), s]);
  const order: string[] = [];
  const done = new Set<string>();
  // Steps are few: a linear scan for the earliest-declared ready step keeps ties in declaration order.
  for (;;) {
    const next = g.steps.find((s) => !done.has(s) && pending.get(s) === 0);
    if (!next) break;
    done.add(next);
    order.push(next);
    for (const d of dependents.get(next) ?? []) pending.set(d, pending.get(d)! - 1);
  }
  return [...g.sources, ...order, ...g.steps.filter((s) => !done.has(s))];
}

/**
 * Every step that reads, directly or transitively, from `name` (a source or step), in
 * topological order. With `{ outputs: true }`, the outputs that depend on it follow.
 */
export function downstreamOf(spec: AnySpec, name: string, options: { outputs?: boolean } = {}): string[] {
  const g = graphOf(spec);
  const found = new Set<string>();
  let frontier = [name];
  while (frontier.length) {
    const next: string[] = [];
    for (const [node, deps] of g.deps) {
      if (found.has(node) || node === name) continue;
      if (deps.some((d) => frontier.includes(d))) {
        found.add(node);
        next.push(node);
      }
    }
    frontier = next;
  }
  const steps = topologicalOrder(spec).filter((n) => found.has(n) && g.steps.includes(n));
  return options.outputs ? [...steps, ...g.outputs.filter((o) => found.has(o))] : steps;
}

/** Every source and step that `name` (a step or output) reads from, transitively, in topological order. */
export function upstreamOf(spec: AnySpec, name: string): string[] {
  const g = graphOf(spec);
  const found = new Set<string>();
  const stack = [...(g.deps.get(name) ?? [])];
  while (stack.length) {
    const n = stack.pop()!;
    if (found.has(n) || n === name) continue;
    found.add(n);
    stack.push(...(g.deps.get(n) ?? []));
  }
  return topologicalOrder(spec).filter((n) => found.has(n));
}

/** Direct inputs of a step or output (known names only). */
export function inputsOf(spec: AnySpec, name: string): string[] {
  return graphOf(spec).deps.get(name) ?? [];
}

