/**
 * TOML as an export/import format (seed §4.9). Layout:
 *
 *     version = 1
 *
 *     [pipeline]            # optional: name, agent, description (not part of the spec or its hash)
 *     name = "personal-memory"
 *
 *     [[sources]]
 *     name = "chats"
 *     format = "chatgpt-export"
 *
 *     [[steps]]
 *     name = "monthly"
 *     type = "aggregate"
 *     from = "summaries"
 *     groupBy = { period = "month" }
 *     model = "offline/extractive"
 *     temperature = 0
 *     prompt = '''
 *     Reflect on this month's conversations. ...
 *     '''
 *
 *     [[outputs]]
 *     name = "context"
 *     from = "world-model"
 *     surface = "projection"
 *
 * Nested settings are inline tables; prompts are multi-line strings; a step's JSON-schema `output`
 * is a multi-line JSON string (TOML has no null), though a TOML table is accepted on import.
 * The spec is written normalized, so spec → TOML → spec is exact (same specHash and step hashes).
 */
import { parse, TomlError } from "smol-toml";
import { normalizeSpec, parseSpec, SpecError, type PipelineSpec, type PipelineSpecInput, type Problem } from "./spec";

export interface PipelineMeta {
  name?: string;
  agent?: string;
  description?: string;
}

// ---------------------------------------------------------------------------------------------
// Writing

const BARE_KEY = /^[A-Za-z0-9_-]+$/;
const key = (k: string) => (BARE_KEY.test(k) ? k : basicString(k));

function escapeChar(ch: string, multiline: boolean): string {
  switch (ch) {
    case '"':
      return '\\"';
    case "\\":
      return "\\\\";
    case "\n":
      return multiline ? "\n" : "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return multiline ? "\t" : "\\t";
    case "\b":
      return "\\b";
    case "\f":
      return "\\f";
  }
  const code = ch.codePointAt(0)!;
  if (code < 0x20 || code === 0x7f) return `\\u${code.toString(16).padStart(4, "0")}`;
  return ch;
}

function basicString(s: string): string {
  let out = '"';
  for (const ch of s) out += escapeChar(ch, false);
  return `${out}"`;
}

/** A readable multi-line string: literal ('''…''') when the text allows it, else basic ("""…"""). */
function multilineString(s: string): string {
  // The newline right after the opening delimiter is trimmed by TOML, so the text starts on the next line.
  const literalOk = !s.includes("'''") && !s.endsWith("'") && !/[\u0000-\u0008\u000b-\u001f\u007f]/u.test(s);
  if (literalOk) return `'''\n${s}'''`;
  let out = '"""\n';
  for (const ch of s) out += escapeChar(ch, true);
  return `${out}"""`;
}

function inlineValue(v: unknown): string {
  if (typeof v === "string") return basicString(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new TypeError(`cannot write ${v} to TOML`);
    return String(v);
  }
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return `[${v.map(inlineValue).join(", ")}]`;
  if (typeof v === "object" && v !== null) {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    return entries.length ? `{ ${entries.map(([k, x]) => `${key(k)} = ${inlineValue(x)}`).join(", ")} }` : "{}";
  }
  throw new TypeError(`cannot write ${v === null ? "null" : typeof v} to TOML`);
}

function entry(k: string, v: unknown): string {
  if (k === "output" && typeof v === "object" && v !== null) return `${key(k)} = ${multilineString(`${JSON.stringify(v, null, 2)}\n`)}`;
  if (typeof v === "string" && /[\n\r]/.test(v)) return `${key(k)} = ${multilineString(v)}`;
  return `${key(k)} = ${inlineValue(v)}`;
}

const FIRST = ["name", "agent", "type", "format", "description", "from", "surface", "scope", "groupBy", "operator", "orderKey", "checkpointEvery", "maxStateTokens", "dedupe", "conflict", "threshold", "model", "temperature", "pii", "embedder", "webhook"];
const LAST = ["template", "output", "initialState", "prompt"];

function table(header: string, obj: Record<string, unknown>): string {
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
  const ordered = [
    ...FIRST.filter((k) => keys.includes(k)),
    ...keys.filter((k) => !FIRST.includes(k) && !LAST.includes(k)),
    ...LAST.filter((k) => keys.includes(k)),
  ];
  return [header, ...ordered.map((k) => entry(k, obj[k]))].join("\n");
}

/** Write a spec (normalized first) as TOML; `meta` adds a `[pipeline]` table with name/agent/description. */
export function specToToml(input: PipelineSpecInput | PipelineSpec, meta?: PipelineMeta): string {
  const spec = normalizeSpec(input);
  const parts: string[] = ["# Synthex pipeline spec", `version = ${spec.version}`];
  const metaEntries = Object.entries(meta ?? {}).filter(([, v]) => v !== undefined && v !== "");
  if (metaEntries.length) parts.push(table("[pipeline]", Object.fromEntries(metaEntries)));
  for (const s of spec.sources) parts.push(table("[[sources]]", s));
  for (const s of spec.steps) parts.push(table("[[steps]]", s));
  for (const o of spec.outputs) parts.push(table("[[outputs]]", o));
  return `${parts.join("\n\n")}\n`;
}

// ---------------------------------------------------------------------------------------------
// Reading

export type TomlParseResult =
  | { ok: true; spec: PipelineSpec; meta: PipelineMeta }
  | { ok: false; problems: Problem[] };

/** Line (1-based) of `path` in the TOML text, found from the `[[section]]` headers and `key =` lines. */
function lineOf(text: string, path: readonly (string | number)[]): number | undefined {
  const [section, index, field] = path;
  if (typeof section !== "string" || typeof index !== "number") return undefined;
  const lines = text.split(/\r?\n/);
  const header = new RegExp(`^\\s*\\[\\[\\s*${section}\\s*\\]\\]`);
  let seen = -1;
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    if (header.test(lines[i]!) && ++seen === index) {
      start = i;
      break;
    }
  }
  if (start < 0) return undefined;
  if (typeof field !== "string") return start + 1;
  const keyLine = new RegExp(`^\\s*"?${field.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"?\\s*=`);
  for (let i = start + 1; i < lines.length && !/^\s*\[/.test(lines[i]!); i++) {
    if (keyLine.test(lines[i]!)) return i + 1;
  }
  return start + 1;
}

/** Parse TOML into a validated, normalized spec (plus the optional `[pipeline]` meta). Never throws. */
export function parseSpecToml(text: string): TomlParseResult {
  let data: Record<string, unknown>;
  try {
    data = parse(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      const message = err.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      return { ok: false, problems: [{ path: [], message: `TOML syntax error at line ${err.line}, column ${err.column}: ${message}` }] };
    }
    throw err;
  }
  const problems: Problem[] = [];
  const { pipeline, ...rest } = data;
  const meta: PipelineMeta = {};
  if (pipeline !== undefined) {
    if (typeof pipeline !== "object" || pipeline === null || Array.isArray(pipeline)) {
      problems.push({ path: ["pipeline"], message: "[pipeline] must be a table with name, agent and description" });
    } else {
      for (const [k, v] of Object.entries(pipeline)) {
        if (!["name", "agent", "description"].includes(k)) problems.push({ path: ["pipeline", k], message: `unknown field "${k}" in [pipeline] (known: name, agent, description)` });
        else if (typeof v !== "string") problems.push({ path: ["pipeline", k], message: `pipeline ${k} must be a string` });
        else meta[k as keyof PipelineMeta] = v;
      }
    }
  }
  // `output` is written as a JSON string (TOML has no null); a table is accepted as is.
  if (Array.isArray(rest.steps)) {
    rest.steps = rest.steps.map((step: unknown, i: number) => {
      if (typeof step !== "object" || step === null || typeof (step as { output?: unknown }).output !== "string") return step;
      const s = step as Record<string, unknown>;
      try {
        return { ...s, output: JSON.parse(s.output as string) };
      } catch (err) {
        problems.push({
          path: ["steps", i, "output"],
          message: `output is not valid JSON (${(err as Error).message})`,
          ...(typeof s.name === "string" ? { node: s.name } : {}),
        });
        return step;
      }
    });
  }
  const parsed = parseSpec(rest);
  const own = new Set(problems.map((p) => JSON.stringify(p.path)));
  const specProblems = parsed.ok ? [] : parsed.problems.filter((p) => !own.has(JSON.stringify(p.path)));
  const all = [...problems, ...specProblems].map((p) => {
    const line = lineOf(text, p.path);
    return line ? { ...p, message: `${p.message} (line ${line})` } : p;
  });
  if (all.length || !parsed.ok) return { ok: false, problems: all };
  return { ok: true, spec: parsed.spec, meta };
}

/** Parse TOML into a spec and its `[pipeline]` meta; throws `SpecError` with every problem. */
export function pipelineFromToml(text: string): { spec: PipelineSpec; meta: PipelineMeta } {
  const result = parseSpecToml(text);
  if (!result.ok) throw new SpecError(result.problems, "The pipeline TOML is invalid");
  return { spec: result.spec, meta: result.meta };
}

/** Parse TOML into a validated, normalized spec; throws `SpecError` (syntax errors say line and column). */
export function specFromToml(text: string): PipelineSpec {
  return pipelineFromToml(text).spec;
}
