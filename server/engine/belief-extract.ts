/**
 * Offline belief extraction and supersession (Synapsis beliefs, seed 004 §6 `beliefs`, with
 * Graphiti's bi-temporal edges): first-person and named statements ("I moved to Boston",
 * "Melanie works at the library", "I don't like running") become beliefs subject —predicate→
 * object; entities named together become "mentioned with" edges. Then, per subject and slot, a
 * later source that changes a fact supersedes the earlier belief: both are kept, the older gets
 * `validTo` and `supersededBy`. Two different current values from the same time (or from sources
 * with no time) are left standing side by side: that is a contradiction, for insights to raise.
 * Pure functions, no model.
 */
import type { BeliefMeta } from "../core/graph-records";
import { sha256 } from "../pipeline/hashing";
import { extractMentions, turnsOf } from "./entity-extract";

export type { BeliefMeta };

export const CO_MENTION = "mentioned with";

/** Predicates that hold one value at a time (a later different value supersedes). */
export const DEFAULT_FUNCTIONAL_PREDICATES = ["lives in", "works at", "works as", "is from", "is married to", "is dating"];

/** "favorite book is", "favorite color is": one value at a time, always. */
const isFavorite = (predicate: string) => /^favou?rite [a-z ]+ is$/.test(predicate);

export function isFunctional(predicate: string, functional: readonly string[]): boolean {
  return functional.includes(predicate) || isFavorite(predicate);
}

/** One input text record, as relations sees it. */
export interface BeliefSource {
  recordId: string;
  /** Valid time: when the source says it (its `time.created_at`). */
  time: string | null;
  /** Transaction time: when we learned it (the record's creation). */
  learnedAt: string | null;
  content: string;
}

/** A scope's entities: lower-case name/alias → id, and id → canonical name. */
export interface EntityIndex {
  lookup: Map<string, string>;
  names: Map<string, string>;
  /** Names and aliases as written (case matters: "Will" is a name, "will" is not). */
  forms: string[];
}

interface Statement {
  subject: string;
  predicate: string;
  object: string;
  objectEntity: string | null;
  polarity: "positive" | "negative";
  source: BeliefSource;
  evidence: string;
}

const ADVERBS = "(?:(?:just|recently|finally|actually|now|also|really|still|totally|absolutely|always|usually|currently|already|even|truly|kinda|kind of|sort of)\\s+)*";
const NEGATION = "(?<neg>don't|do not|doesn't|does not|didn't|did not|never|no longer|not|can't stand)";

/** Verb phrases after the subject: the predicate they state and whether the verb itself negates. */
const VERBS: Array<{ re: string; predicate: string; negates?: boolean }> = [
  { re: "(?:have\\s+|has\\s+|'ve\\s+)?(?:moved|relocated)\\s+(?:back\\s+)?to\\s+", predicate: "lives in" },
  { re: "(?:am\\s+|'m\\s+|is\\s+|'s\\s+)?(?:live|lives|living)\\s+in\\s+", predicate: "lives in" },
  { re: "(?:am\\s+|'m\\s+|is\\s+|'s\\s+)?(?:work|works|working)\\s+(?:at|for)\\s+", predicate: "works at" },
  { re: "(?:got|started|landed|took|accepted)\\s+(?:a\\s+|the\\s+)?(?:new\\s+)?job\\s+(?:at|with)\\s+", predicate: "works at" },
  { re: "(?:am\\s+|'m\\s+|is\\s+|'s\\s+)?(?:work|works|working)\\s+as\\s+(?:an?\\s+)?", predicate: "works as" },
  { re: "(?:am|'m|is|'s)\\s+(?:originally\\s+)?from\\s+", predicate: "is from" },
  { re: "(?:am|'m|is|'s)\\s+(?:married|engaged)\\s+to\\s+", predicate: "is married to" },
  { re: "(?:am|'m|is|'s)\\s+dating\\s+", predicate: "is dating" },
  { re: "(?:love|loves|loved|like|likes|liked|enjoy|enjoys|enjoyed|adore|adores)\\s+", predicate: "likes" },
  { re: "(?:hate|hates|hated|dislike|dislikes|disliked|can't stand|cannot stand)\\s+", predicate: "likes", negates: true },
  { re: "(?:am|'m|is|'s)\\s+(?:a\\s+(?:big\\s+|huge\\s+)?fan\\s+of|into|passionate about|interested in)\\s+", predicate: "likes" },
  { re: "(?:have|has|got|adopted|bought)\\s+(?:a|an|two|three)\\s+(?:new\\s+)?", predicate: "has" },
  { re: "(?:play|plays|played|playing)\\s+(?:the\\s+)?", predicate: "plays" },
  { re: "(?:am\\s+|'m\\s+|is\\s+|'s\\s+)?(?:study|studies|studying)\\s+", predicate: "studies" },
  { re: "(?:went|go|goes|going|been|traveled|travelled)\\s+to\\s+", predicate: "went to" },
  { re: "(?:am|'m|is|'s)\\s+(?:going|planning|hoping)\\s+to\\s+", predicate: "plans to" },
  { re: "(?:am|'m|is|'s)\\s+(?:an?)\\s+(?!(?:big\\s+|huge\\s+)?fan\\b)", predicate: "is" },
];

/** Where an object phrase ends. */
const OBJECT = "(?<obj>[^.,!?;:\"“”()\\n]+?)(?=\\s+(?:and|but|because|so|when|with|since|after|before|while|for|that|which|who|last|this|these|those|next|yesterday|today|tonight|recently|now|too|again|anymore|lately|every|right|though|as|if|or)\\b|[.,!?;:\"“”()\\n]|$)";
const DETERMINERS = /^(?:the|a|an|my|our|your|his|her|their|some|this|that|these|those)\s+/i;
const PRONOUN_OBJECTS = new Set(["it", "that", "this", "them", "you", "him", "her", "me", "us", "so", "one", "there", "here", "something", "anything", "everything", "lot", "a lot", "what", "doing", "being"]);
const MAX_OBJECT_WORDS = 5;

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Object phrases that are not things: clauses, times, adverbs ("how it looks", "a few weeks ago", "often"). */
const NOT_AN_OBJECT = /^(?:how|that|what|when|where|why|who|which|you|it|is|was|are|were|be|to|so|very|too|really|few|couple|last|next|every|often|sometimes|always|never|lot|lots|bit|little|much|more|most|one|two|three|again|back|here|there|home|now|today|yesterday|tomorrow|tonight|out|up|down|off|over)\b/i;

function cleanObject(raw: string): string | null {
  let obj = raw.trim().replace(/\s+/g, " ");
  while (DETERMINERS.test(obj)) obj = obj.replace(DETERMINERS, "");
  obj = obj.replace(/['’]s$/u, "").replace(/[-'’]+$/u, "").trim();
  const ws = obj.split(" ");
  if (!obj || obj.length < 2 || ws.length > MAX_OBJECT_WORDS || PRONOUN_OBJECTS.has(obj.toLowerCase()) || NOT_AN_OBJECT.test(obj)) return null;
  return obj;
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?…])\s+|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The entity an object phrase opens with ("Riverside Library on weekends" → Riverside Library). */
function entityAtStart(obj: string, index: EntityIndex): string | null {
  const lower = obj.toLowerCase();
  let best: string | null = null;
  for (const form of index.lookup.keys()) {
    if (lower.startsWith(`${form} `) && (!best || form.length > best.length)) best = form;
  }
  return best ? index.lookup.get(best)! : null;
}

/** Contractions the patterns do not need to know about. */
function normalizeSentence(sentence: string): string {
  return sentence
    .replace(/[’‘]/g, "'")
    .replace(/\bI'm\b/g, "I am")
    .replace(/\bI've\b/g, "I have")
    .replace(/\bI'd\b/g, "I would");
}

interface Subject {
  /** Verb-phrase patterns ("I moved to …", "Melanie works at …") and the possessive one ("my favorite … is"). */
  verbs: Array<{ re: RegExp; predicate: string; negates: boolean }>;
  favorite: RegExp;
  /** The entity a match names (null: not one of the scope's entities). */
  entity: (m: RegExpExecArray, speaker: string | null) => string | null;
}

/** The patterns of a scope, compiled once: first person (the speaker) and its entities' names. */
function subjectsOf(index: EntityIndex, namePattern: string | null): Subject[] {
  const compile = (subject: string, possessive: string, entity: Subject["entity"]): Subject => ({
    verbs: VERBS.map((v) => ({ re: new RegExp(`${subject}${ADVERBS}(?:${NEGATION}\\s+)?${ADVERBS}${v.re}${OBJECT}`, "gu"), predicate: v.predicate, negates: Boolean(v.negates) })),
    favorite: new RegExp(`${possessive}(?:all-time\\s+)?favou?rite\\s+(?<what>[a-z]+(?:\\s+[a-z]+)?)\\s+(?:is|was)\\s+${OBJECT}`, "gu"),
    entity,
  });
  const subjects = [compile("(?<![\\p{L}])I\\s+", "(?<![\\p{L}])[Mm]y\\s+", (_m, speaker) => speaker)];
  if (namePattern) {
    const entity = (m: RegExpExecArray) => index.lookup.get(m.groups!.name!.toLowerCase()) ?? null;
    subjects.push(compile(`(?<![\\p{L}])(?<name>${namePattern})\\s+`, `(?<![\\p{L}])(?<name>${namePattern})'s\\s+`, entity));
  }
  return subjects;
}

/** Statements of one source: first person (the speaker) and clauses that open with a known entity. */
function statementsOf(source: BeliefSource, index: EntityIndex, subjects: Subject[]): Statement[] {
  const out: Statement[] = [];
  for (const turn of turnsOf(source.content)) {
    const speaker = turn.speaker ? (index.lookup.get(turn.speaker.toLowerCase()) ?? null) : null;
    const push = (m: RegExpExecArray, subject: Subject, predicate: string, negated: boolean, evidence: string, keepCase: boolean) => {
      const subj = subject.entity(m, speaker);
      const obj = cleanObject(m.groups!.obj!);
      if (!subj || !obj) return;
      const objectEntity = index.lookup.get(obj.toLowerCase()) ?? entityAtStart(obj, index);
      out.push({
        subject: subj,
        predicate,
        object: objectEntity ? index.names.get(objectEntity)! : keepCase || /^\p{Lu}/u.test(obj) ? obj : obj.toLowerCase(),
        objectEntity: objectEntity === subj ? null : objectEntity,
        polarity: negated ? "negative" : "positive",
        source,
        evidence,
      });
    };
    for (const raw of sentencesOf(turn.text)) {
      const sentence = normalizeSentence(raw);
      for (const subject of subjects) {
        for (const verb of subject.verbs) {
          for (const m of sentence.matchAll(verb.re)) push(m, subject, verb.predicate, Boolean(m.groups!.neg) !== verb.negates, raw, false);
        }
        for (const m of sentence.matchAll(subject.favorite)) push(m, subject, `favorite ${m.groups!.what!} is`, false, raw, true);
      }
    }
  }
  return out;
}

export function beliefId(scope: string, subject: string, predicate: string, object: string, sourceId: string): string {
  return `bel_${sha256([scope, subject, predicate, object.toLowerCase(), sourceId].join("\u0000")).slice(0, 16)}`;
}

const byTime = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);

/**
 * Settle one slot's statements in time order. A slot is (subject, predicate) for a functional
 * predicate (its value is the object and polarity) and (subject, predicate, object) otherwise
 * (its value is the polarity). A restatement of a current value adds its source to that belief; a
 * different value from a later time supersedes every current belief of the slot; a different
 * value from the same time (or no time) stands beside them.
 */
function settleSlot(scope: string, statements: Statement[], functional: boolean, names: Map<string, string>): BeliefMeta[] {
  const valueOf = (s: { object: string; polarity: string }) => (functional ? `${s.object.toLowerCase()}\u0000${s.polarity}` : s.polarity);
  const ordered = [...statements].sort((a, b) => byTime(a.source.time, b.source.time) || (a.source.recordId < b.source.recordId ? -1 : a.source.recordId > b.source.recordId ? 1 : 0));
  const all: BeliefMeta[] = [];
  let current: BeliefMeta[] = [];
  let i = 0;
  while (i < ordered.length) {
    const t = ordered[i]!.source.time;
    const group: Statement[] = [];
    while (i < ordered.length && ordered[i]!.source.time === t) group.push(ordered[i++]!);
    const fresh: BeliefMeta[] = [];
    for (const s of group) {
      const same = [...current, ...fresh].find((b) => valueOf(b) === valueOf(s));
      if (same) {
        if (!same.sources.includes(s.source.recordId)) same.sources.push(s.source.recordId);
        continue;
      }
      const b: BeliefMeta = {
        id: beliefId(scope, s.subject, s.predicate, s.object, s.source.recordId),
        subject: s.subject,
        subjectName: names.get(s.subject) ?? s.subject,
        predicate: s.predicate,
        object: s.object,
        objectEntity: s.objectEntity,
        polarity: s.polarity,
        validFrom: s.source.time,
        validTo: null,
        learnedAt: s.source.learnedAt,
        supersededBy: null,
        supersedes: null,
        status: "current",
        sources: [s.source.recordId],
        evidence: s.evidence,
        functional,
      };
      fresh.push(b);
      all.push(b);
    }
    if (t !== null && fresh.length) {
      for (const c of current) {
        if (c.validFrom === null || c.validFrom >= t) continue;
        const successor = fresh.find((f) => valueOf(f) !== valueOf(c));
        if (!successor) continue;
        c.status = "superseded";
        c.validTo = t;
        c.supersededBy = successor.id;
        successor.supersedes ??= c.id;
      }
    }
    current = [...current.filter((c) => c.status === "current"), ...fresh];
  }
  return all;
}

/** Co-mention edges: one belief per pair of entities named in the same source (sources capped, newest kept). */
function coMentions(scope: string, sources: BeliefSource[], index: EntityIndex, mentioned: Map<string, string[]>, cap: number): BeliefMeta[] {
  const pairs = new Map<string, { a: string; b: string; sources: BeliefSource[] }>();
  for (const src of sources) {
    const ids = [...new Set(mentioned.get(src.recordId) ?? [])].sort();
    for (let x = 0; x < ids.length; x++) {
      for (let y = x + 1; y < ids.length; y++) {
        const key = `${ids[x]}\u0000${ids[y]}`;
        let p = pairs.get(key);
        if (!p) pairs.set(key, (p = { a: ids[x]!, b: ids[y]!, sources: [] }));
        p.sources.push(src);
      }
    }
  }
  const out: BeliefMeta[] = [];
  for (const p of pairs.values()) {
    const srcs = [...p.sources].sort((s, t) => byTime(s.time, t.time) || (s.recordId < t.recordId ? -1 : 1));
    const first = srcs[0]!;
    const objectName = index.names.get(p.b)!;
    out.push({
      id: beliefId(scope, p.a, CO_MENTION, objectName, first.recordId),
      subject: p.a,
      subjectName: index.names.get(p.a)!,
      predicate: CO_MENTION,
      object: objectName,
      objectEntity: p.b,
      polarity: "positive",
      validFrom: first.time,
      validTo: null,
      learnedAt: first.learnedAt,
      supersededBy: null,
      supersedes: null,
      status: "current",
      sources: srcs.slice(-cap).map((s) => s.recordId),
      evidence: null,
      functional: false,
      count: srcs.length,
    });
  }
  return out;
}

export interface ExtractBeliefsOptions {
  functional?: readonly string[];
  coMentions?: boolean;
  /** Sources kept per co-mention edge (the newest). */
  coMentionSourceCap?: number;
}

/** Every belief of one scope, settled (supersession applied), sorted by id. */
export function extractBeliefs(scope: string, sources: BeliefSource[], index: EntityIndex, options: ExtractBeliefsOptions = {}): BeliefMeta[] {
  const functional = options.functional ?? DEFAULT_FUNCTIONAL_PREDICATES;
  const forms = [...new Set(index.forms)].filter((f) => f.length >= 2).sort((a, b) => b.length - a.length);
  const namePattern = forms.length ? forms.map(escapeRegex).join("|") : null;
  const subjects = subjectsOf(index, namePattern);
  const statements: Statement[] = [];
  const mentioned = new Map<string, string[]>();
  for (const src of sources) {
    statements.push(...statementsOf(src, index, subjects));
    if (options.coMentions !== false) {
      const ids = extractMentions(src.content)
        .map((m) => index.lookup.get(m.surface.toLowerCase()))
        .filter((id): id is string => !!id);
      mentioned.set(src.recordId, ids);
    }
  }
  const slots = new Map<string, Statement[]>();
  for (const s of statements) {
    const fn = isFunctional(s.predicate, functional);
    const key = fn ? `${s.subject}\u0000${s.predicate}` : `${s.subject}\u0000${s.predicate}\u0000${s.object.toLowerCase()}`;
    slots.set(key, [...(slots.get(key) ?? []), s]);
  }
  const beliefs: BeliefMeta[] = [];
  for (const [key, group] of slots) beliefs.push(...settleSlot(scope, group, isFunctional(key.split("\u0000")[1]!, functional), index.names));
  if (options.coMentions !== false) beliefs.push(...coMentions(scope, sources, index, mentioned, options.coMentionSourceCap ?? 50));
  return beliefs.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** The belief as a sentence (the record's content): the edge, its valid time, and the sentence it came from. */
export function beliefSentence(b: BeliefMeta): string {
  const predicate = b.polarity === "negative" ? `not ${b.predicate}` : b.predicate;
  const when: string[] = [];
  if (b.validFrom) when.push(`from ${b.validFrom.slice(0, 10)}`);
  if (b.status === "superseded") when.push(`superseded${b.validTo ? ` ${b.validTo.slice(0, 10)}` : ""}`);
  if (b.count !== undefined) when.unshift(`${b.count} source${b.count === 1 ? "" : "s"}`);
  const head = `${b.subjectName} — ${predicate} — ${b.object}${when.length ? ` (${when.join(", ")})` : ""}`;
  return b.evidence ? `${head}: “${b.evidence}”` : head;
}
