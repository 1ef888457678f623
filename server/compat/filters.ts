/**
 * Mem0's `filters` (search, get all) over Synthex memories: the entity ids (`user_id`, `agent_id`,
 * `app_id`, `run_id`: a value, `"*"`, `{ in }`, `{ ne }`), `created_at` / `updated_at`
 * (`gte`/`gt`/`lte`/`lt`), combined with `AND`, `OR` and `NOT`. Entity ids come from the memory's
 * scope (binding.ts `scopeOf`); a filter on anything else is refused by name, never ignored.
 */
import { CompatError, prefixOf, type Entities, type EntityKind } from "./binding";

export interface Filterable {
  entities: Entities;
  createdAt: Date;
  updatedAt: Date;
}

export interface CompiledFilter {
  test: (m: Filterable) => boolean;
  /** The scope prefix every match lies under (from entity ids every match must have), if any. */
  prefix: string | undefined;
}

const ENTITY_KEYS: Record<string, EntityKind> = { user_id: "user", agent_id: "agent", app_id: "app", run_id: "run" };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function entityTest(kind: EntityKind, value: unknown, where: string): (m: Filterable) => boolean {
  if (typeof value === "string") return value === "*" ? (m) => m.entities[kind] !== undefined : (m) => m.entities[kind] === value;
  if (isObject(value)) {
    const [op, arg, ...more] = Object.entries(value).flat();
    if (more.length) throw new CompatError(400, `${where}: one operator per condition.`);
    if (op === "in" && Array.isArray(arg)) return (m) => arg.includes(m.entities[kind]);
    if (op === "eq" && typeof arg === "string") return (m) => m.entities[kind] === arg;
    if (op === "ne" && typeof arg === "string") return (m) => m.entities[kind] !== arg;
  }
  throw new CompatError(400, `${where}: expected an id, "*", { in: [...] }, { eq } or { ne }.`);
}

function dateTest(field: "createdAt" | "updatedAt", value: unknown, where: string): (m: Filterable) => boolean {
  const asDate = (v: unknown) => {
    const d = new Date(typeof v === "number" ? v * 1000 : String(v));
    if (Number.isNaN(d.getTime())) throw new CompatError(400, `${where}: "${String(v)}" is not a date.`);
    return d.getTime();
  };
  if (!isObject(value)) {
    const t = asDate(value);
    return (m) => m[field].getTime() === t;
  }
  const checks = Object.entries(value).map(([op, v]): ((t: number) => boolean) => {
    const bound = asDate(v);
    if (op === "gte") return (t) => t >= bound;
    if (op === "gt") return (t) => t > bound;
    if (op === "lte") return (t) => t <= bound;
    if (op === "lt") return (t) => t < bound;
    throw new CompatError(400, `${where}.${op}: use gte, gt, lte or lt.`);
  });
  return (m) => checks.every((c) => c(m[field].getTime()));
}

function compileNode(node: unknown, where: string): (m: Filterable) => boolean {
  if (!isObject(node)) throw new CompatError(400, `${where}: a filter is an object.`);
  const tests = Object.entries(node).map(([key, value]): ((m: Filterable) => boolean) => {
    const at = `${where}.${key}`;
    if (key === "AND" || key === "OR") {
      if (!Array.isArray(value) || !value.length) throw new CompatError(400, `${at}: a non-empty list of filters.`);
      const parts = value.map((v, i) => compileNode(v, `${at}[${i}]`));
      return key === "AND" ? (m) => parts.every((p) => p(m)) : (m) => parts.some((p) => p(m));
    }
    if (key === "NOT") {
      const parts = (Array.isArray(value) ? value : [value]).map((v, i) => compileNode(v, `${at}[${i}]`));
      return (m) => !parts.some((p) => p(m));
    }
    if (key in ENTITY_KEYS) return entityTest(ENTITY_KEYS[key]!, value, at);
    if (key === "created_at" || key === "updated_at") return dateTest(key === "created_at" ? "createdAt" : "updatedAt", value, at);
    throw new CompatError(
      400,
      `${at}: not supported here. Synthex filters memories by user_id, agent_id, app_id, run_id (their scope) and created_at/updated_at; metadata, categories and keywords are not kept on memories (search the text instead, or use /api/v1 search with its metadata filter on source records).`,
    );
  });
  return (m) => tests.every((t) => t(m));
}

/** The entity ids every match must have: plain ids at the top level, inside an AND, or in every branch of an OR. */
function requiredIds(node: unknown): Entities {
  const out: Entities = {};
  if (!isObject(node)) return out;
  for (const [key, value] of Object.entries(node)) {
    if (key in ENTITY_KEYS && typeof value === "string" && value !== "*") out[ENTITY_KEYS[key]!] = value;
    if (key === "AND" && Array.isArray(value)) for (const part of value) Object.assign(out, requiredIds(part));
    if (key === "OR" && Array.isArray(value) && value.length) {
      const [first, ...rest] = value.map(requiredIds);
      for (const [kind, id] of Object.entries(first!)) if (rest.every((r) => r[kind as EntityKind] === id)) out[kind as EntityKind] = id;
    }
  }
  return out;
}

export function compileFilters(filters: unknown): CompiledFilter {
  if (filters === undefined || filters === null) return { test: () => true, prefix: undefined };
  const test = compileNode(filters, "filters");
  return { test, prefix: prefixOf(requiredIds(filters)) };
}

/** Entity ids named by top-level options or query parameters (`user_id=…`), as a filter. */
export function entityParams(source: Record<string, unknown>): Entities {
  const out: Entities = {};
  for (const [key, kind] of Object.entries(ENTITY_KEYS)) {
    const v = source[key];
    if (typeof v === "string" && v) out[kind] = v;
  }
  return out;
}

