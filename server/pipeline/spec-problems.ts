/**
 * What is wrong with a spec, said the same way everywhere: a problem has a `path` into the spec JSON
 * and the `node` (named source, step or output) it belongs to; problems are listed once per place,
 * in spec order. Knows nothing of the schema (spec.ts turns zod's issues and the graph checks into
 * problems and uses these to present them).
 */
/** One thing wrong with a spec: where (`path` into the spec JSON, `node` = the named element) and why. */
export interface Problem {
  path: (string | number)[];
  message: string;
  node?: string;
}

/** `steps[2].from` */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${p}` : p;
  return out || "spec";
}

export function formatProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `- ${formatPath(p.path)}${p.node ? ` (${p.node})` : ""}: ${p.message}`).join("\n");
}

/** Thrown by the SDK, TOML import and hashing when a spec is invalid; `problems` lists all of them. */
export class SpecError extends Error {
  readonly problems: Problem[];
  constructor(problems: Problem[], intro = "The pipeline spec is invalid") {
    super(`${intro}:\n${formatProblems(problems)}`);
    this.name = "SpecError";
    this.problems = problems;
  }
}

// ---------------------------------------------------------------------------------------------
// Locating and ordering problems

const SECTIONS = ["version", "sources", "steps", "outputs"];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function at(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/** The name of the source/step/output a path points into. */
export function nodeAt(input: unknown, path: readonly (string | number)[]): string | undefined {
  if (path.length < 2 || typeof path[1] !== "number") return undefined;
  const name = at(input, path.slice(0, 2));
  const n = isObject(name) ? name.name : undefined;
  return typeof n === "string" ? n : undefined;
}

const pathKey = (p: readonly (string | number)[]) => JSON.stringify(p);
export const isPrefix = (a: readonly (string | number)[], b: readonly (string | number)[]) => a.length <= b.length && a.every((x, i) => b[i] === x);

export function withNodes(input: unknown, problems: Problem[]): Problem[] {
  return problems.map((p) => {
    const node = p.node ?? nodeAt(input, p.path);
    return node ? { ...p, node } : { path: p.path, message: p.message };
  });
}

/** Sort by position in the spec (sources, steps, outputs, by index), keeping discovery order otherwise. */
export function sortProblems(problems: Problem[]): Problem[] {
  const rank = (p: Problem) => {
    const s = SECTIONS.indexOf(String(p.path[0] ?? "version"));
    return (s < 0 ? SECTIONS.length : s) * 1e6 + (typeof p.path[1] === "number" ? p.path[1] : 0);
  };
  return problems.map((p, i) => ({ p, i })).sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i).map(({ p }) => p);
}

export function dedupeProblems(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  const out: Problem[] = [];
  for (const p of problems) {
    // One message per place is enough (zod sometimes reports a type error and a size error for one value).
    const key = pathKey(p.path);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out;
}
