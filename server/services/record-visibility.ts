/**
 * Which records a caller may see. Scope is a property of every record a read returns, not of the
 * entry point: a record reached through provenance (a merge of two scopes' copies of one
 * conversation, the sources of an evidence record) is checked like the one asked for.
 *
 * `maySeeRecord` is the one decision; everything else here shapes a result with it:
 * - lists (sources, leaves, evidence sources, hits, blocks) omit a record the caller may not see;
 * - the lineage keeps the graph's shape: such a record stays as a redacted node (id, step and
 *   depth; no scope, no preview, `redacted: true`).
 * People and keys without a pipeline list or a scope prefix see every record of their workspace.
 */
import { notFound } from "../core/errors";
import type { LineageResult, LineageTree } from "../search/provenance";
import { isRestricted, scopeWithin, type KeyRestrictions } from "./api-keys";

/** A record as far as visibility goes: its scope, and its pipeline when the read knows it. */
export interface ScopedRecord {
  scope: string;
  pipelineId?: string;
}

/** May a caller with these key restrictions (null: a person, or a key without limits) see this record? */
export function maySeeRecord(restrictions: KeyRestrictions | null | undefined, record: ScopedRecord): boolean {
  if (!restrictions) return true;
  if (record.pipelineId !== undefined && restrictions.pipelineIds.length && !restrictions.pipelineIds.includes(record.pipelineId)) return false;
  return restrictions.scopePrefix === null || scopeWithin(record.scope, restrictions.scopePrefix);
}

/** A record the caller asked for by id: one it may not see answers "not found", like another workspace's. */
export function assertMaySeeRecord(restrictions: KeyRestrictions | null | undefined, record: ScopedRecord, what: string) {
  if (!maySeeRecord(restrictions, record)) throw notFound(`${what} not found.`);
}

/**
 * A record a key limited to pipelines or a scope asked for by id: one that does not exist and one
 * it may not see answer the same "not found" (status, code and message), so ids are not probeable.
 */
export function assertMayReach(restrictions: KeyRestrictions | null | undefined, record: ScopedRecord | null, what: string) {
  if (!restrictions || !isRestricted(restrictions)) return;
  if (!record || !maySeeRecord(restrictions, record)) throw notFound(`${what} not found.`);
}

/** A list without the records the caller may not see. */
export function visibleOnly<T extends ScopedRecord>(restrictions: KeyRestrictions | null | undefined, records: T[]): T[] {
  return restrictions ? records.filter((r) => maySeeRecord(restrictions, r)) : records;
}

/** The lineage with every record the caller may not see redacted: its place in the graph stays, its content does not. */
export function redactLineage(restrictions: KeyRestrictions | null | undefined, lineage: LineageResult): LineageResult {
  if (!restrictions) return lineage;
  const hidden = new Set(lineage.nodes.filter((n) => !maySeeRecord(restrictions, n)).map((n) => n.id));
  if (!hidden.size) return lineage;
  const tree = (t: LineageTree): LineageTree =>
    hidden.has(t.id) ? { ...t, preview: "", redacted: true, children: t.children.map(tree) } : { ...t, children: t.children.map(tree) };
  return {
    ...lineage,
    nodes: lineage.nodes.map((n) => (hidden.has(n.id) ? { ...n, scope: "", preview: "", redacted: true } : n)),
    tree: tree(lineage.tree),
  };
}
