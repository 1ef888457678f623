/**
 * Three-way merge of specs for promotion: what the branch changed since it forked (`base`) is
 * applied onto the target (main), node by node. A node both changed differently is a conflict,
 * never silently overwritten. Pure: the caller validates the result.
 */
import { canonicalJson } from "./hashing";
import type { PipelineSpec } from "./spec";

export interface SpecMerge {
  spec: PipelineSpec;
  /** Nodes the branch and the target both changed, differently (kind:name). */
  conflicts: string[];
}

type Named = { name: string };

function mergeList<T extends Named>(kind: string, base: T[], target: T[], branch: T[], conflicts: string[]): T[] {
  const key = (x: T | undefined) => (x === undefined ? "∅" : canonicalJson(x));
  const by = (xs: T[]) => new Map(xs.map((x) => [x.name, x]));
  const [b, t, s] = [by(base), by(target), by(branch)];
  const pick = (name: string): T | undefined => {
    const [nb, nt, ns] = [b.get(name), t.get(name), s.get(name)];
    if (key(nt) === key(ns)) return nt;
    if (key(nt) === key(nb)) return ns; // only the branch changed it
    if (key(ns) === key(nb)) return nt; // only the target changed it
    conflicts.push(`${kind} ${name}`);
    return nt;
  };
  // The branch's order first (it is the spec being promoted), then what only the target has.
  const names = [...new Set([...branch.map((x) => x.name), ...target.map((x) => x.name)])];
  return names.map(pick).filter((x): x is T => x !== undefined);
}

export function mergeSpecs(base: PipelineSpec, target: PipelineSpec, branch: PipelineSpec): SpecMerge {
  const conflicts: string[] = [];
  const spec: PipelineSpec = {
    ...target,
    sources: mergeList("source", base.sources, target.sources, branch.sources, conflicts),
    steps: mergeList("step", base.steps, target.steps, branch.steps, conflicts),
    outputs: mergeList("output", base.outputs, target.outputs, branch.outputs, conflicts),
  };
  return { spec, conflicts };
}
