/**
 * BM25 statistics for a search (each step's record count and mean length, each query term's
 * document frequency), cached per process like the rest of the request path (one cache for every copy
 * of this module in the process, see server/core/process-state.ts): an entry is served
 * for at most SYNTHEX_AUTH_CACHE_MS (default and maximum 1 s; 0 turns the cache off), and a refresh
 * of the index in this process (`forgetTermStats`, after its transaction commits) ends the
 * branch's entries at once. Another process's run is seen within that second — the same bound as
 * a new spec version (server/services/request-context.ts).
 *
 * Kept per (branch, list of steps) — each step's numbers, in the order the database returned them —
 * and per (branch, step, term), so questions sharing words share entries; a search whose steps and
 * terms are all known within the lifetime makes no statistics read, and one with new words reads
 * the steps' numbers and those words only.
 */
import type { Db } from "../core/db";
import { processState } from "../core/process-state";
import { requestCacheMs } from "../core/ttl-cache";
import { termStatRows } from "../store/lexical-index";

export interface StepTermStats {
  docs: number;
  avg: number;
  df: Map<string, number>;
}

const lifetime = requestCacheMs();
/** Entries per database client, at most; past it the oldest tenth is dropped. */
const MAX_ENTRIES = 50_000;

interface StepsEntry {
  at: number;
  /** The indexed steps among those asked, in the order the database returned them (later code iterates the map in this order). */
  steps: Array<{ step: string; docs: number; avg: number }>;
}
interface Entries {
  steps: Map<string, StepsEntry>;
  /** Document frequency per (branch, step, term); 0 when no record of the step has the term. */
  terms: Map<string, { at: number; df: number }>;
}
// Entries belong to one database client (tests and benches open several in one process).
const perClient = processState("term-stats.perClient", () => new WeakMap<object, Entries>());

function entriesOf(db: Db): Entries {
  let m = perClient.get(db);
  if (!m) perClient.set(db, (m = { steps: new Map(), terms: new Map() }));
  return m;
}

const termKey = (branchId: string, step: string, term: string) => `${branchId}\n${step}\n${term}`;

function bounded<V>(map: Map<string, V>) {
  if (map.size < MAX_ENTRIES) return;
  // Oldest first (Map keeps insertion order): drop a tenth at once, not one per miss.
  let drop = Math.ceil(MAX_ENTRIES / 10);
  for (const k of map.keys()) {
    if (drop-- <= 0) break;
    map.delete(k);
  }
}

/**
 * When each branch's statistics were last forgotten here (entries loaded before are stale), for
 * every database client of the process at once.
 */
const marks = processState("term-stats.forgotten", () => ({ branches: new Map<string, number>(), all: -Infinity }));
const forgottenAt = (branchId: string) => Math.max(marks.all, marks.branches.get(branchId) ?? -Infinity);

/** BM25 statistics of `steps` on the branch for the given lexemes (steps never indexed are absent). */
export async function loadTermStats(db: Db, branchId: string, steps: string[], lexemes: string[], now = performance.now()): Promise<Map<string, StepTermStats>> {
  const entries = entriesOf(db);
  const since = forgottenAt(branchId);
  const fresh = (e: { at: number } | undefined) => !!e && lifetime > 0 && now - e.at < lifetime && e.at > since;
  const stepsKey = `${branchId}\n${steps.join("\n")}`;
  let known: StepsEntry | undefined = entries.steps.get(stepsKey);
  if (!fresh(known)) known = undefined;
  // A term is known when every indexed step has a fresh count of it.
  const missing = lexemes.filter((term) => !known || known.steps.some((s) => !fresh(entries.terms.get(termKey(branchId, s.step, term)))));
  if (known && missing.length === 0) {
    return new Map(
      known.steps.map((s) => {
        const df = new Map<string, number>();
        for (const term of lexemes) {
          const n = entries.terms.get(termKey(branchId, s.step, term))!.df;
          if (n > 0) df.set(term, n);
        }
        return [s.step, { docs: s.docs, avg: s.avg, df }];
      }),
    );
  }
  // Each step's own numbers (and their order) come from this read; the terms read are only those not known.
  const rows = await termStatRows(db, branchId, steps, missing);
  const out = new Map<string, StepTermStats>();
  for (const r of rows) {
    const info = out.get(r.step) ?? { docs: Number(r.docs), avg: Number(r.avgLength) || 1, df: new Map<string, number>() };
    if (r.term) info.df.set(r.term, Number(r.df));
    out.set(r.step, info);
  }
  for (const [step, info] of out) {
    for (const term of lexemes) {
      if (missing.includes(term)) continue;
      const n = entries.terms.get(termKey(branchId, step, term))?.df ?? 0;
      if (n > 0) info.df.set(term, n);
    }
  }
  if (lifetime > 0) {
    bounded(entries.steps);
    bounded(entries.terms);
    entries.steps.set(stepsKey, { at: now, steps: [...out].map(([step, i]) => ({ step, docs: i.docs, avg: i.avg })) });
    for (const [step, info] of out) for (const term of missing) entries.terms.set(termKey(branchId, step, term), { at: now, df: info.df.get(term) ?? 0 });
  }
  return out;
}

/** Ends the cached statistics of a branch (its index changed in this process), or of every branch. */
export function forgetTermStats(branchId?: string, now = performance.now()) {
  if (!branchId) {
    marks.all = now;
    marks.branches.clear();
    return;
  }
  // Marks older than the lifetime end nothing that is not already stale.
  if (marks.branches.size >= 1000) for (const [b, at] of marks.branches) if (now - at >= lifetime) marks.branches.delete(b);
  marks.branches.set(branchId, now);
}
