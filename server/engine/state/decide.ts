/**
 * Consolidation by slot (DESIGN §8): a fact that sets or ends a typed slot is decided against the
 * memories of the same subject and slot, never by sentence shape. A new value UPDATEs that slot's
 * memory and nothing else; an ended slot DELETEs it (a tombstone, restorable); a value a memory
 * already holds changes nothing. Add-only (Mem0 style) only ADDs or skips. Memories of other slots
 * are never touched.
 */
import type { Decision, MemoryView } from "../consolidate-rule";
import { mentionsValue } from "./mentions";
import { canonicalText, parseState, type StateFact } from "./parse";
import { MULTI_VALUED, NOW_WORDS, SLOTS } from "./slots";

const cache = new Map<string, StateFact | null>();

/** The state a memory's text states (memories of slots are written canonically: "Ana lives in Porto"). */
export function memoryState(content: string): StateFact | null {
  let s = cache.get(content);
  if (s === undefined) {
    s = parseState(content);
    if (cache.size > 50_000) cache.clear();
    cache.set(content, s);
  }
  return s;
}

const same = (a: string | null | undefined, b: string | null | undefined) => !!a && !!b && a.toLowerCase() === b.toLowerCase();

export interface SlotDecision extends Decision {
  state: StateFact;
}

/** The memory text of a value: the canonical statement, then the fact when it names no replaced value. */
function memoryText(state: StateFact, fact: string, replaced: string[]): string {
  const canonical = canonicalText(state);
  // The fact's own words keep its detail ("since January"); its discourse about time ("these days",
  // "now") is not the memory's.
  const own = fact
    .replace(/\s*\(asked: [^)]*\)/g, "")
    .replace(new RegExp(NOW_WORDS.source, "gi"), " ")
    .replace(/\s+([,.!?;:])/g, "$1")
    .replace(/^[\s,;:—–-]+/, "")
    .replace(/\s+/g, " ")
    .trim();
  const bare = (t: string) => t.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  if (replaced.some((v) => mentionsValue(own, v)) || (state.old && mentionsValue(own, state.old)) || bare(own) === bare(canonical)) return canonical;
  return `${canonical} (${own.replace(/[.!]+$/, "")})`;
}

/**
 * The decision for a fact that states a slot (`state`), or null when the fact states none (the
 * sentence rule decides then). `memories`: the scope's active memories.
 */
export function slotDecision<M extends MemoryView>(fact: string, state: StateFact | null, memories: M[], mode: "full" | "add-only"): SlotDecision | null {
  if (!state) return null;
  const quoted = JSON.stringify(fact);
  const mine = memories
    .map((m) => ({ m, s: memoryState(m.content) }))
    .filter((x): x is { m: M; s: StateFact } => !!x.s && x.s.polarity === "current" && same(x.s.subject, state.subject));
  // A value without a slot ("Rex died", "I left Lisbon") is the slot of the memory that holds it.
  const slot = state.slot ?? mine.find((x) => same(x.s.value, state.value))?.s.slot ?? null;
  if (!slot) return null;
  const resolved: StateFact = { ...state, slot };
  const ofSlot = mine.filter((x) => x.s.slot === slot);
  if (state.polarity === "ended") {
    // The memory of the slot that holds the value; else (a value stated in another slot's memory:
    // "quit her job at Escola Azul" after "works as a teacher at Escola Azul") the one that names it.
    const target =
      (state.value ? ofSlot.find((x) => same(x.s.value, state.value)) : ofSlot.at(-1)) ??
      (state.value ? mine.find((x) => mentionsValue(x.m.content, state.value!)) : undefined);
    if (mode === "full") {
      if (target) return { event: "DELETE", memoryId: target.m.id, reason: `${quoted}: ${slot} ${target.s.value} ended`, state: resolved };
      return { event: "NONE", reason: `${quoted}: ${slot}${state.value ? ` ${state.value}` : ""} ended, and no memory holds it`, state: resolved };
    }
    // Add-only keeps the end as a memory of its own (retrieval prefers the newest of a slot).
    const text = SLOTS[slot].ended(state.subject, state.value ?? target?.s.value ?? null);
    return { event: "ADD", text, reason: `${quoted}: ${slot} ended (add-only: kept beside the memory it ends)`, state: resolved };
  }
  const known = ofSlot.find((x) => same(x.s.value, state.value));
  if (known) return { event: "NONE", memoryId: known.m.id, reason: `memory ${known.m.id} already holds ${slot} = ${state.value}`, state: resolved };
  const text = memoryText(resolved, fact, ofSlot.map((x) => x.s.value!).filter(Boolean));
  const replaceable = !MULTI_VALUED.has(slot) || state.replaces || !!state.old;
  const target = (state.old ? ofSlot.find((x) => same(x.s.value, state.old)) : undefined) ?? (replaceable ? ofSlot.at(-1) : undefined);
  if (mode === "full" && target) {
    return { event: "UPDATE", memoryId: target.m.id, text, reason: `${quoted}: ${slot} ${target.s.value} → ${state.value} in memory ${target.m.id}`, state: resolved };
  }
  return { event: "ADD", text, reason: `${quoted}: ${slot} = ${state.value}${target ? " (add-only: kept beside the earlier value)" : ""}`, state: resolved };
}

/** Does an UPDATE or DELETE of the sentence rule reach a memory of another slot than the fact's? Then it must not. */
export function crossesSlot(factState: StateFact | null, memoryContent: string): boolean {
  const m = memoryState(memoryContent);
  return !!m?.slot && m.slot !== factState?.slot;
}
