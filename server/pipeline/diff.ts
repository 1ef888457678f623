/**
 * Spec diff with reasons (the seed's `sync()`): what changed between two specs, *why* each step
 * counts as changed, and which steps must re-run (their version hash differs, or they are new).
 */
import { canonicalJson, stepConfig, stepVersionHashes } from "./hashing";
import { fromList, normalizeSpec, type OutputSpec, type PipelineSpec, type PipelineSpecInput, type SourceSpec, type StepSpec } from "./spec";
import { topologicalOrder } from "./validate";
import { formatReason, type ChangeReason } from "./diff-reasons";

export { formatReason, type ChangeReason };

export type DiffStatus = "added" | "removed" | "changed" | "unchanged";
export type NodeKind = "source" | "step" | "output";


export interface NodeDiff {
  kind: NodeKind;
  name: string;
  status: DiffStatus;
  /** Step type, source format or output surface (of the newer side when both exist). */
  type: string;
  reasons: ChangeReason[];
  /** Its records must be (re)made: version hash differs or it is new. Always false for outputs and removals. */
  rerun: boolean;
  hashBefore?: string;
  hashAfter?: string;
}

export interface SpecDiff {
  sources: NodeDiff[];
  steps: NodeDiff[];
  outputs: NodeDiff[];
  /** Steps whose version hash differs (or that are new): they need re-running. Topological order. */
  invalidated: string[];
  /** True when anything at all differs (including descriptions). */
  changed: boolean;
}

const same = (a: unknown, b: unknown) => (a === undefined ? "∅" : canonicalJson(a)) === (b === undefined ? "∅" : canonicalJson(b));

function changedKeys(a: Record<string, unknown>, b: Record<string, unknown>, ignore: string[]): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !ignore.includes(k));
  return keys.filter((k) => !same(a[k], b[k])).sort();
}

function llm(step: StepSpec) {
  return step as { prompt?: string; model?: string; temperature?: number; output?: Record<string, unknown> };
}

function stepReasons(a: StepSpec, b: StepSpec, hashesA: Record<string, string>, hashesB: Record<string, string>): ChangeReason[] {
  const reasons: ChangeReason[] = [];
  const la = llm(a);
  const lb = llm(b);
  if (la.prompt !== lb.prompt) reasons.push({ kind: "template" });
  if (la.model !== lb.model) reasons.push({ kind: "model", from: la.model ?? null, to: lb.model ?? null });
  if (la.temperature !== lb.temperature) reasons.push({ kind: "temperature", from: la.temperature ?? null, to: lb.temperature ?? null });
  const keys = changedKeys({ ...stepConfig(a), type: a.type }, { ...stepConfig(b), type: b.type }, []);
  if (!same(fromList(a), fromList(b))) keys.unshift("from");
  if (keys.length) reasons.push({ kind: "config", keys });
  if (!same(la.output, lb.output)) reasons.push({ kind: "output-schema" });
  const upstream = fromList(b).filter((ref) => ref in hashesA && ref in hashesB && hashesA[ref] !== hashesB[ref]);
  if (upstream.length) reasons.push({ kind: "upstream", names: upstream });
  if ((a.description ?? "") !== (b.description ?? "")) reasons.push({ kind: "description" });
  return reasons;
}

function byName<T extends { name: string }>(items: T[]): Map<string, T> {
  const m = new Map<string, T>();
  for (const item of items) if (!m.has(item.name)) m.set(item.name, item);
  return m;
}

/** Diff two specs (either may be written with implicit defaults). Throws `SpecError` if one cannot be hashed. */
export function diffSpecs(before: PipelineSpecInput | PipelineSpec, after: PipelineSpecInput | PipelineSpec): SpecDiff {
  const a = normalizeSpec(before);
  const b = normalizeSpec(after);
  const ha = stepVersionHashes(a);
  const hb = stepVersionHashes(b);

  // Sources.
  const sa = byName(a.sources);
  const sb = byName(b.sources);
  const sources: NodeDiff[] = [];
  for (const s of sb.values()) {
    const old = sa.get(s.name);
    if (!old) {
      sources.push({ kind: "source", name: s.name, status: "added", type: s.format, reasons: [], rerun: true, hashAfter: hb[s.name] });
      continue;
    }
    const reasons: ChangeReason[] = [];
    const keys = changedKeys(old as SourceSpec & Record<string, unknown>, s as SourceSpec & Record<string, unknown>, ["name", "description"]);
    if (keys.length) reasons.push({ kind: "config", keys });
    if ((old.description ?? "") !== (s.description ?? "")) reasons.push({ kind: "description" });
    const rerun = ha[s.name] !== hb[s.name];
    sources.push({
      kind: "source",
      name: s.name,
      status: reasons.length ? "changed" : "unchanged",
      type: s.format,
      reasons,
      rerun,
      hashBefore: ha[s.name],
      hashAfter: hb[s.name],
    });
  }
  for (const s of sa.values()) {
    if (!sb.has(s.name)) sources.push({ kind: "source", name: s.name, status: "removed", type: s.format, reasons: [], rerun: false, hashBefore: ha[s.name] });
  }

  // Steps, in the newer spec's topological order, removed ones after.
  const ta = byName(a.steps);
  const tb = byName(b.steps);
  const steps: NodeDiff[] = [];
  for (const name of topologicalOrder(b)) {
    const s = tb.get(name);
    if (!s) continue;
    const old = ta.get(name);
    if (!old) {
      steps.push({ kind: "step", name, status: "added", type: s.type, reasons: [], rerun: true, hashAfter: hb[name] });
      continue;
    }
    const reasons = stepReasons(old, s, ha, hb);
    const rerun = ha[name] !== hb[name];
    steps.push({
      kind: "step",
      name,
      status: reasons.length || rerun ? "changed" : "unchanged",
      type: s.type,
      reasons,
      rerun,
      hashBefore: ha[name],
      hashAfter: hb[name],
    });
  }
  for (const name of topologicalOrder(a)) {
    const old = ta.get(name);
    if (old && !tb.has(name)) steps.push({ kind: "step", name, status: "removed", type: old.type, reasons: [], rerun: false, hashBefore: ha[name] });
  }

  // Outputs.
  const oa = byName(a.outputs);
  const ob = byName(b.outputs);
  const outputs: NodeDiff[] = [];
  for (const o of ob.values()) {
    const old = oa.get(o.name);
    if (!old) {
      outputs.push({ kind: "output", name: o.name, status: "added", type: o.surface, reasons: [], rerun: false });
      continue;
    }
    const reasons: ChangeReason[] = [];
    const keys = changedKeys(
      { ...old, from: fromList(old) } as OutputSpec & Record<string, unknown>,
      { ...o, from: fromList(o) } as OutputSpec & Record<string, unknown>,
      ["name", "description"],
    );
    if (keys.length) reasons.push({ kind: "config", keys });
    if ((old.description ?? "") !== (o.description ?? "")) reasons.push({ kind: "description" });
    outputs.push({ kind: "output", name: o.name, status: reasons.length ? "changed" : "unchanged", type: o.surface, reasons, rerun: false });
  }
  for (const o of oa.values()) {
    if (!ob.has(o.name)) outputs.push({ kind: "output", name: o.name, status: "removed", type: o.surface, reasons: [], rerun: false });
  }

  const invalidated = steps.filter((s) => s.rerun).map((s) => s.name);
  const changed = [...sources, ...steps, ...outputs].some((n) => n.status !== "unchanged");
  return { sources, steps, outputs, invalidated, changed };
}

/** "template changed", "upstream summaries changed", "model changed: a → b", ... */


const KIND_LABEL: Record<NodeKind, string> = { source: "source", step: "step", output: "output" };

/**
 * Human-readable diff, like the seed's `sync()`:
 *
 *     CHANGED  summaries (template changed)
 *     CHANGED  monthly (upstream summaries changed)
 *     Re-run: summaries, monthly
 */
export function formatDiff(diff: SpecDiff): string {
  const lines: string[] = [];
  for (const node of [...diff.sources, ...diff.steps, ...diff.outputs]) {
    if (node.status === "unchanged") continue;
    const label = node.status.toUpperCase().padEnd(8);
    if (node.status === "added" || node.status === "removed") {
      lines.push(`${label} ${node.name} (${node.type} ${KIND_LABEL[node.kind]})`);
      continue;
    }
    const why = node.reasons.map(formatReason);
    if (node.kind !== "output" && !node.rerun) why.push("no re-run");
    lines.push(`${label} ${node.name} (${why.join("; ")})`);
  }
  if (!lines.length) return "No changes.";
  lines.push(diff.invalidated.length ? `Re-run: ${diff.invalidated.join(", ")}` : "Nothing to re-run.");
  return lines.join("\n");
}
