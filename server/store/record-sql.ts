/**
 * The SQL every read of records shares: positional parameters, the record filters (scope prefix,
 * time, metadata), the on-branch probe, and a trace hook for benchmarks. Search, provenance and
 * projections build their queries from these, so a filter means the same thing everywhere.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";


/** Positional parameters for $queryRawUnsafe. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ""}`;
  }
}

/** Escapes LIKE wildcards (backslash is the default LIKE escape character). */
/**
 * A record's rank tie-break: its content fingerprint, then its materialization key (unique in a
 * pipeline, derived from content and inputs). Two builds of the same data give the same keys, so
 * equal scores order the same way; a record id (random) must never decide an order.
 */
export function tieKey(r = "r"): string {
  return `(${r}."contentFingerprint" || ' ' || ${r}."materializationKey")`;
}

/** Orders by `tieKey` values (code points, no locale). */
export function byTieKey(a: { key: string }, b: { key: string }): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export interface RecordFilters {
  /** Scope prefix: `acme:eng` matches `acme:eng` and `acme:eng:*`, never `acme:engineering`. */
  scope?: string;
  /** Range on `meta.time.created_at` (ISO dates or timestamps, inclusive). */
  from?: string;
  to?: string;
  /** `meta.time.period`, e.g. "2024-03". */
  period?: string;
  /** `meta.chat.conversation_id`. */
  conversationId?: string;
  /** Metadata equality on dotted paths, e.g. { "custom.topic": "rust" }. */
  metadata?: Record<string, string | number | boolean>;
}

export function normalizeScope(scope: string | undefined): string | undefined {
  if (scope === undefined) return undefined;
  const s = scope.trim().replace(/:+$/, "");
  if (s.length > 256) throw badRequest("Scope is at most 256 characters.");
  return s || undefined;
}

function isoBound(value: string, what: string): string {
  const d = new Date(value);
  if (!value || Number.isNaN(d.getTime())) throw badRequest(`${what} must be an ISO date such as 2024-03-01 or 2024-03-01T12:00:00Z.`);
  // Stored times are ISO strings; compare the first 19 characters (YYYY-MM-DDTHH:MM:SS, UTC).
  return d.toISOString().slice(0, 19);
}

function nest(path: string, value: unknown): Record<string, unknown> {
  const parts = path.split(".").filter(Boolean);
  if (parts.length === 0 || parts.length > 8) throw badRequest(`Invalid metadata path "${path}".`);
  let out: unknown = value;
  for (const p of parts.reverse()) out = { [p]: out };
  return out as Record<string, unknown>;
}

/** WHERE conditions on a Record alias (`r`) for these filters. */
export function filterConditions(params: Params, f: RecordFilters, r = "r"): string[] {
  const c: string[] = [];
  const scope = normalizeScope(f.scope);
  if (scope) c.push(`(${r}.scope = ${params.add(scope)} OR ${r}.scope LIKE ${params.add(`${likeEscape(scope)}:%`)})`);
  const created = `left(${r}.metadata #>> '{time,created_at}', 19)`;
  if (f.from) c.push(`${created} >= ${params.add(isoBound(f.from, "from"))}`);
  if (f.to) {
    // A bare date as the upper bound includes that whole day.
    const to = /^\d{4}-\d{2}-\d{2}$/.test(f.to.trim()) ? `${f.to.trim()}T23:59:59Z` : f.to;
    c.push(`${created} <= ${params.add(isoBound(to, "to"))}`);
  }
  const contains: Record<string, unknown>[] = [];
  if (f.period) contains.push(nest("time.period", f.period));
  if (f.conversationId) contains.push(nest("chat.conversation_id", f.conversationId));
  for (const [k, v] of Object.entries(f.metadata ?? {})) contains.push(nest(k, v));
  for (const obj of contains) c.push(`${r}.metadata @> ${params.add(JSON.stringify(obj), "jsonb")}`);
  return c;
}

/** Whether the filters narrow the records at all (scope, time, period, conversation, metadata). */
export function narrowsRecords(f: RecordFilters): boolean {
  return filterConditions(new Params(), f).length > 0;
}

/**
 * The record is pointed at by the branch (a pointer's step is its record's step). Written as a
 * LIMIT 1 scalar subquery so it stays a per-candidate probe of the (branchId, step, recordId)
 * index: as a semi-join, the planner likes to hash every pointer of the branch instead.
 */
export function onBranch(params: Params, branchId: string, _steps: string[], r = "r"): string {
  return `(SELECT true FROM "BranchPointer" bp WHERE bp."branchId" = ${params.add(branchId)} AND bp.step = ${r}.step AND bp."recordId" = ${r}.id LIMIT 1)`;
}

export async function requireRecord(db: Db, workspaceId: string, id: string) {
  const rows = await db.$queryRawUnsafe<Array<{ id: string; pipelineId: string; step: string }>>(
    `SELECT id, "pipelineId", step FROM "Record" WHERE id = $1 AND "workspaceId" = $2`,
    id,
    workspaceId,
  );
  if (!rows[0]) throw notFound(`Record "${id.slice(0, 100)}" not found in this workspace.`);
  return rows[0];
}

/** Benchmarks and EXPLAIN: sees each search/provenance query before it runs. */
export const sqlTrace: { fn: ((label: string, sql: string, params: unknown[]) => void) | null } = { fn: null };

export function trace(label: string, sql: string, params: unknown[]): string {
  sqlTrace.fn?.(label, sql, params);
  return sql;
}

export function parseJson<T>(v: unknown): T {
  return (typeof v === "string" ? JSON.parse(v) : v) as T;
}
