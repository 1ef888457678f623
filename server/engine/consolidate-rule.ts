/**
 * The pure half of consolidate: how similar a fact is to a memory (embedding + lexical), the
 * deterministic decision the offline model makes, and the parsing of a model's decision.
 * No store, no model: the step kind (steps/consolidate.ts) applies what is decided here.
 */
import { z } from "zod";
import { CONSOLIDATE_MODES } from "../pipeline/rules";
import { terms } from "../text/text-rank";

export const CONSOLIDATE_EVENTS = ["ADD", "UPDATE", "DELETE", "NONE"] as const;
export type ConsolidateEvent = (typeof CONSOLIDATE_EVENTS)[number];
export type ConsolidateMode = (typeof CONSOLIDATE_MODES)[number];

/** At most this many similar memories are shown to the model per fact. */
export const MAX_CANDIDATES = 5;
/** A memory below this similarity is not a candidate at all. */
export const CANDIDATE_FLOOR = 0.2;

export interface MemoryView {
  id: string;
  content: string;
}

/** Code-point order (no locale). */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface Candidate<M extends MemoryView = MemoryView> {
  memory: M;
  similarity: number;
}

export interface Decision {
  event: ConsolidateEvent;
  /** The memory changed (UPDATE, DELETE) or matched (NONE). */
  memoryId?: string;
  /** The memory's new text (ADD, UPDATE); the fact itself when absent. */
  text?: string;
  reason: string;
}

/**
 * Similarity of two texts, 0..1: the mean of a character-trigram cosine over their content words
 * (an offline embedding: forgives spelling and inflection) and the Jaccard overlap of the words.
 */
export class Similarity {
  private readonly vectors = new Map<string, Map<string, number>>();
  private readonly words = new Map<string, Set<string>>();

  private vector(text: string) {
    let v = this.vectors.get(text);
    if (!v) {
      v = new Map();
      for (const word of terms(text)) {
        const padded = `#${word}#`;
        for (let j = 0; j + 3 <= padded.length; j++) v.set(padded.slice(j, j + 3), (v.get(padded.slice(j, j + 3)) ?? 0) + 1);
      }
      this.vectors.set(text, v);
    }
    return v;
  }

  private wordSet(text: string) {
    let w = this.words.get(text);
    if (!w) this.words.set(text, (w = new Set(terms(text))));
    return w;
  }

  of(a: string, b: string): number {
    if (a.trim() === b.trim()) return 1;
    const va = this.vector(a);
    const vb = this.vector(b);
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (const [g, x] of va) {
      na += x * x;
      dot += x * (vb.get(g) ?? 0);
    }
    for (const x of vb.values()) nb += x * x;
    const cos = na && nb ? dot / Math.sqrt(na * nb) : 0;
    const wa = this.wordSet(a);
    const wb = this.wordSet(b);
    let shared = 0;
    for (const w of wa) if (wb.has(w)) shared += 1;
    const union = wa.size + wb.size - shared;
    const jaccard = union === 0 ? 0 : shared / union;
    return Math.max(0, Math.min(1, (Math.max(0, cos) + jaccard) / 2));
  }

  /**
   * The most similar memories first (equal ones by their text, then id: a memory's id derives from
   * the random id of the fact that added it, so by id alone two builds of the same facts decided
   * differently), at most `MAX_CANDIDATES`, none below the floor.
   */
  candidates<M extends MemoryView>(fact: string, memories: Iterable<M>): Candidate<M>[] {
    const scored: Candidate<M>[] = [];
    for (const memory of memories) {
      const similarity = this.of(fact, memory.content);
      if (similarity >= CANDIDATE_FLOOR) scored.push({ memory, similarity });
    }
    const top = scored.sort((x, y) => y.similarity - x.similarity || byText(x.memory.content, y.memory.content) || byText(x.memory.id, y.memory.id)).slice(0, MAX_CANDIDATES);
    // A change of state ("moved to Porto") is about a memory it may share few words with ("lives in
    // Lisbon"): the memory it would replace is shown too, however low its similarity.
    if (!mayChangeState(fact)) return top;
    const subject = subjectOf(fact);
    const same = [...memories].filter((m) => subjectOf(m.content) === subject && !top.some((c) => c.memory.id === m.id));
    const change = same.length ? changeOfState(fact, same.map((memory) => ({ memory, similarity: this.of(fact, memory.content) }))) : null;
    const target = change?.memoryId ? same.find((m) => m.id === change.memoryId) : undefined;
    return target ? [...top, { memory: target, similarity: this.of(fact, target.content) }] : top;
  }
}

const NEGATION = /\b(?:no longer|not any ?more|anymore|any more|no more|never|not|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|won't|can't|cannot|stopped|quit|used to)\b/gi;
const WORDS = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

/** True when the text states that something no longer holds (an explicit negation). */
export function isNegation(text: string): boolean {
  NEGATION.lastIndex = 0;
  return NEGATION.test(text.replace(/’/g, "'"));
}

/** The text with its negation words removed ("Bob no longer lives in Paris" → "Bob lives in Paris"). */
export function withoutNegation(text: string): string {
  return text
    .replace(/’/g, "'")
    .replace(NEGATION, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Same subject, changed value: the two texts share their first words (at least one content word)
 * and possibly their last ones, the shared words cover at least half of the longer text and hold
 * at least two content words, and what is between differs — "Alice lives in Paris" / "Alice lives
 * in Berlin", "Bob drinks tea every morning" / "Bob drinks coffee every morning".
 */
export function sameSubject(a: string, b: string): boolean {
  const wa = (a.toLowerCase().match(WORDS) ?? []) as string[];
  const wb = (b.toLowerCase().match(WORDS) ?? []) as string[];
  const shortest = Math.min(wa.length, wb.length);
  let p = 0;
  while (p < shortest && wa[p] === wb[p]) p++;
  if (p === wa.length && p === wb.length) return false;
  let q = 0;
  while (q < shortest - p && wa[wa.length - 1 - q] === wb[wb.length - 1 - q]) q++;
  if (p + q >= shortest) return false; // one text contains the other: nothing was replaced
  if (p + q < Math.max(wa.length, wb.length) / 2) return false;
  const prefixWords = terms(wa.slice(0, p).join(" ")).length;
  // Only a lasting state changes value ("lives in", "works as", "drinks"); events ("went to") add up.
  if (!wa.slice(0, p).some((w) => STATE_VERBS.has(w))) return false;
  return prefixWords >= 1 && prefixWords + terms(wa.slice(wa.length - q).join(" ")).length >= 2;
}

/**
 * `longer` says everything `shorter` says and more: the shorter text's words (at least two content
 * words) are the longer text's first and last words — "Gina collects typewriters" / "Gina collects
 * typewriters from Italy".
 */
export function elaborates(longer: string, shorter: string): boolean {
  const wl = (longer.toLowerCase().match(WORDS) ?? []) as string[];
  const ws = (shorter.toLowerCase().match(WORDS) ?? []) as string[];
  if (ws.length >= wl.length || terms(shorter).length < 2) return false;
  let p = 0;
  while (p < ws.length && wl[p] === ws[p]) p++;
  let q = 0;
  while (q < ws.length - p && wl[wl.length - 1 - q] === ws[ws.length - 1 - q]) q++;
  return p + q === ws.length && p > 0;
}

/** Present-tense verbs of lasting states: a memory that starts "<subject> <state verb> …" can change value. */
const STATE_VERBS = new Set(
  "is are am lives works likes loves prefers enjoys hates dislikes has owns drinks eats plays uses wants studies teaches drives keeps speaks runs manages leads".split(" "),
);

/** The subject of a fact: its first word, without a possessive ("Ana's dog" → "ana"). */
function subjectOf(text: string): string {
  return ((text.toLowerCase().match(WORDS) ?? [])[0] ?? "").replace(/['’]s$/, "");
}

const LIKE = /\b(?:likes?|loves?|enjoys?|prefers?|adores?|(?:is|are) (?:a )?(?:big )?fans? of|favou?rite)\b/i;
const DISLIKE = /\b(?:hates?|dislikes?|can't stand|cannot stand|is tired of|is sick of|(?:is|are) (?:not|no longer) (?:a )?fans? of)\b/i;
const ENDED = /\b(?:died|passed away|was put down|ran away|got lost|sold|gave away|quit|left|broke up with|divorced|lost)\b/i;
/** Does the fact use any of the words a change of state is told with (a cheap test before `changeOfState`)? */
function mayChangeState(fact: string): boolean {
  return isNegation(fact) || ENDED.test(fact) || DISLIKE.test(fact) || MOVED_TO.test(fact) || NEW_JOB.test(fact) || MOVED_FROM_TO.test(fact);
}

/** A whole-word pattern for a literal phrase. */
function phrase(text: string, flags: string): RegExp {
  const literal = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`\\b${literal}\\b`, flags);
}

const MOVED_FROM_TO = /\b(?:moved|relocated|switched|changed|went|transferred)\b.*?\bfrom\s+(?:the\s+)?([\p{L}\p{N}][\p{L}\p{N}' -]*?)\s+to\s+(?:the\s+)?([\p{L}\p{N}][\p{L}\p{N}' -]*?)(?=[.,;!?]|$| (?:in|on|at|last|this|after|because|since)\b)/iu;
const MOVED_TO = /\b(?:moved|relocated)\s+(?:back\s+)?to\b/i;
const RESIDENCE = /\b(?:lives?|living|based|resides?|moved|relocated|home is)\b/i;
const NEW_JOB = /\b(?:now works?|started (?:working|a new job|a job)|got (?:a )?(?:new )?job|joined|was hired|took a job|new job|works? now)\b/i;
const JOB = /\b(?:works?|working|job|employed|employer)\b/i;

/** The content words of `text` (stemmed as `terms` does), as a set. */
const termSet = (text: string) => new Set(terms(text));

/** The words of `fact` after the change word that name what changed ("Ana's dog Rex died" → dog, rex). */
function objectTerms(fact: string, subject: string): string[] {
  return terms(fact.replace(/['’]s\b/g, "")).filter((t) => t !== subject && !terms("died passed away put down ran lost sold gave quit left broke divorced no longer anymore used hates dislikes likes loves now").includes(t));
}

/**
 * Change of state (offline): the fact says that what a memory of the same subject states no longer
 * holds, and which memory it replaces — "Ana no longer lives in Lisbon", "Ana used to play chess",
 * "Ana quit her job at the bank", "Ana sold her car", "Ana's dog Rex died" retire it (DELETE);
 * "Ana moved from Lisbon to Porto" rewrites it (UPDATE "Ana lives in Porto"); "Ana moved to Porto",
 * "Ana started working at Acme", "Ana hates coffee now" (after "Ana loves coffee") replace it
 * (UPDATE with the fact). Null when the fact changes no candidate.
 */
export function changeOfState<M extends MemoryView>(fact: string, candidates: Candidate<M>[]): Decision | null {
  const subject = subjectOf(fact);
  if (!subject) return null;
  const mine = candidates.filter((c) => subjectOf(c.memory.content) === subject && !isNegation(c.memory.content));
  if (mine.length === 0) return null;
  const quoted = JSON.stringify(fact);
  const fromTo = MOVED_FROM_TO.exec(fact);
  if (fromTo) {
    const [from, to] = [fromTo[1]!.trim(), fromTo[2]!.trim()];
    const target = mine.find((c) => phrase(from, "i").test(c.memory.content));
    if (target) {
      const text = target.memory.content.replace(phrase(from, "gi"), to);
      return { event: "UPDATE", memoryId: target.memory.id, text, reason: `${quoted}: ${from} → ${to} in memory ${target.memory.id}` };
    }
  }
  if (MOVED_TO.test(fact)) {
    const target = mine.find((c) => RESIDENCE.test(c.memory.content));
    if (target) return { event: "UPDATE", memoryId: target.memory.id, text: fact, reason: `${quoted} replaces where memory ${target.memory.id} says they live` };
  }
  if (NEW_JOB.test(fact)) {
    const target = mine.find((c) => JOB.test(c.memory.content));
    if (target) return { event: "UPDATE", memoryId: target.memory.id, text: fact, reason: `${quoted} replaces the job memory ${target.memory.id} states` };
  }
  const objects = objectTerms(fact, subject);
  const covers = (c: Candidate<M>, need: number) => {
    const words = termSet(c.memory.content);
    return objects.filter((t) => words.has(t)).length >= need;
  };
  if (DISLIKE.test(fact) && !isNegation(fact)) {
    const target = mine.find((c) => LIKE.test(c.memory.content) && !DISLIKE.test(c.memory.content) && covers(c, 1));
    if (target) return { event: "UPDATE", memoryId: target.memory.id, text: fact, reason: `${quoted} reverses the preference memory ${target.memory.id} states` };
  }
  if (ENDED.test(fact) || isNegation(fact)) {
    const need = Math.min(objects.length, 2);
    const target = need > 0 ? mine.find((c) => covers(c, need) && !ENDED.test(c.memory.content)) : undefined;
    if (target) return { event: "DELETE", memoryId: target.memory.id, reason: `${quoted}: memory ${target.memory.id} no longer holds` };
  }
  return null;
}

/**
 * The offline decision (deterministic, no model): a negated fact that matches a memory deletes it;
 * a near-duplicate (similarity ≥ threshold) or a fact a memory already says with more detail
 * changes nothing; a fact that adds detail to a memory, or the same subject with a changed value,
 * updates that memory; anything else is added. `add-only` never updates or deletes.
 */
export function offlineDecision<M extends MemoryView>(fact: string, candidates: Candidate<M>[], similarity: Similarity, threshold: number, mode: ConsolidateMode): Decision {
  if (mode === "full") {
    const change = changeOfState(fact, candidates);
    if (change) return change;
  }
  if (mode === "full" && isNegation(fact)) {
    const base = withoutNegation(fact);
    const target = candidates
      .map((c) => ({ c, s: similarity.of(base, withoutNegation(c.memory.content)) }))
      .filter((x) => !isNegation(x.c.memory.content) && x.s >= threshold)
      .sort((x, y) => y.s - x.s)[0];
    if (target) return { event: "DELETE", memoryId: target.c.memory.id, reason: `negates memory ${target.c.memory.id} (similarity ${target.s.toFixed(2)} without the negation)` };
  }
  // A negated fact is never a duplicate of the statement it negates (add-only keeps both).
  const same = candidates.filter((c) => isNegation(fact) === isNegation(c.memory.content));
  const detail = mode === "full" ? same.find((c) => elaborates(fact, c.memory.content)) : undefined;
  if (detail) return { event: "UPDATE", memoryId: detail.memory.id, text: fact, reason: `adds detail to memory ${detail.memory.id}` };
  const known = same.find((c) => elaborates(c.memory.content, fact));
  if (known) return { event: "NONE", memoryId: known.memory.id, reason: `memory ${known.memory.id} already says this, with more detail` };
  const best = same[0];
  if (best && best.similarity >= threshold) {
    return { event: "NONE", memoryId: best.memory.id, reason: `near-duplicate of memory ${best.memory.id} (similarity ${best.similarity.toFixed(2)} ≥ ${threshold})` };
  }
  if (mode === "full") {
    const subject = same.find((c) => sameSubject(fact, c.memory.content));
    if (subject) return { event: "UPDATE", memoryId: subject.memory.id, text: fact, reason: `same subject as memory ${subject.memory.id} with a changed value` };
  }
  const closest = candidates[0];
  return { event: "ADD", text: fact, reason: closest ? `no memory is close enough (best similarity ${closest.similarity.toFixed(2)})` : "no similar memory" };
}

/** The structured output a model answers with (JSON schema, for the provider's JSON mode). */
export function decisionJsonSchema(mode: ConsolidateMode): Record<string, unknown> {
  const events = mode === "full" ? [...CONSOLIDATE_EVENTS] : ["ADD", "NONE"];
  return {
    type: "object",
    properties: {
      event: { type: "string", enum: events },
      memory_id: { type: ["string", "null"], description: "the id of the similar memory this decision is about (UPDATE, DELETE, NONE)" },
      text: { type: ["string", "null"], description: "the memory's new text (ADD, UPDATE)" },
      reason: { type: ["string", "null"] },
    },
    required: ["event"],
    additionalProperties: false,
  };
}

const modelDecision = z.object({
  event: z.string(),
  memory_id: z.string().nullish(),
  text: z.string().nullish(),
  reason: z.string().nullish(),
});

/** Why a model's answer is not a usable decision (thrown by `parseDecision`). */
export class DecisionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DecisionError";
  }
}

/**
 * A model's answer as a decision, or a DecisionError saying what is wrong with it: not JSON, an
 * event that is not one of the allowed ones, or an UPDATE/DELETE of a memory it was not shown.
 */
export function parseDecision(text: string, candidates: Candidate[], mode: ConsolidateMode): Decision {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new DecisionError("the model's decision is not valid JSON");
  }
  const parsed = modelDecision.safeParse(json);
  if (!parsed.success) throw new DecisionError(`the model's decision is not an object with a string "event"`);
  const event = parsed.data.event.trim().toUpperCase();
  const allowed: readonly string[] = mode === "full" ? CONSOLIDATE_EVENTS : ["ADD", "NONE"];
  if (!allowed.includes(event)) {
    throw new DecisionError(`unknown decision "${parsed.data.event}": expected one of ${allowed.join(", ")}${mode === "add-only" ? " (this step is add-only)" : ""}`);
  }
  const reason = parsed.data.reason?.trim() || `the model decided ${event}`;
  const newText = parsed.data.text?.trim() || undefined;
  if (event === "ADD") return { event, text: newText, reason };
  const memoryId = parsed.data.memory_id ?? undefined;
  if (!memoryId) {
    if (event === "NONE") return { event, reason };
    throw new DecisionError(`${event} needs the memory_id of one of the similar memories`);
  }
  if (!candidates.some((c) => c.memory.id === memoryId)) {
    throw new DecisionError(`${event} names memory "${memoryId}", which is not one of the similar memories shown (${candidates.map((c) => c.memory.id).join(", ") || "none"})`);
  }
  return { event: event as ConsolidateEvent, memoryId, text: newText, reason };
}
