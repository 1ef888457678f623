/**
 * "Now" questions get the current state (issue 47): a question that asks what holds now ("Which
 * city does the user live in now?") and names a slot (state/slots.ts synonyms) ranks the newest
 * memory of that slot first and the older memories of the same subject and slot (stale values, kept
 * by add-only memory or by several sources) after everything else. Memories carry their slot in
 * `metadata.memory.state` (consolidate). Anything else is left in its order.
 */
import type { Db } from "../core/db";
import type { StateFact } from "../engine/state/parse";
import { NOW_WORDS, SLOTS, SLOT_NAMES, type SlotName } from "../engine/state/slots";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const SYNONYMS = SLOT_NAMES.map((slot) => ({ slot, re: new RegExp(`\\b(?:${SLOTS[slot].synonyms.map(escape).join("|")})\\b`, "gi") }));

/** The slot a "now" question asks about, or null (not a question about the present, or no slot named). */
export function askedSlot(query: string): SlotName | null {
  if (!NOW_WORDS.test(query)) return null;
  let best: { slot: SlotName; n: number } | null = null;
  for (const { slot, re } of SYNONYMS) {
    const n = query.match(re)?.length ?? 0;
    if (n > 0 && (!best || n > best.n)) best = { slot, n };
  }
  return best?.slot ?? null;
}

interface Ranked {
  c: { id: string; time?: string | null };
}

/** `ranked` reordered for a "now" question about a slot (the same array when nothing applies). */
export async function preferCurrentState<R extends Ranked>(db: Db, query: string, ranked: R[]): Promise<R[]> {
  const slot = askedSlot(query);
  if (!slot || ranked.length < 2) return ranked;
  const rows = await db.record.findMany({ where: { id: { in: ranked.map((r) => r.c.id) } }, select: { id: true, scope: true, metadata: true } });
  const info = new Map(
    rows.flatMap((row) => {
      const meta = row.metadata as { memory?: { state?: StateFact; version?: number }; time?: { created_at?: string } } | null;
      const state = meta?.memory?.state;
      if (!state || state.slot !== slot) return [];
      return [[row.id, { key: `${row.scope}\n${state.subject.toLowerCase()}`, time: meta?.time?.created_at ?? "", version: meta?.memory?.version ?? 0 }] as const];
    }),
  );
  if (info.size === 0) return ranked;
  // Per subject (within a scope), the newest memory of the slot is its live one.
  const live = new Map<string, { id: string; time: string; version: number }>();
  for (const [id, x] of info) {
    const cur = live.get(x.key);
    if (!cur || x.time > cur.time || (x.time === cur.time && x.version > cur.version)) live.set(x.key, { id, time: x.time, version: x.version });
  }
  const liveIds = new Set([...live.values()].map((x) => x.id));
  const first = ranked.filter((r) => liveIds.has(r.c.id));
  const stale = ranked.filter((r) => info.has(r.c.id) && !liveIds.has(r.c.id));
  const rest = ranked.filter((r) => !info.has(r.c.id));
  return [...first, ...rest, ...stale];
}
