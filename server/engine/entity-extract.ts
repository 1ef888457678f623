/**
 * Offline entity extraction and resolution (Synapsis, seed 004 §3.3 — the deterministic layers):
 * speaker names, capitalised names and a dictionary of known entities, then entity resolution per
 * scope: case, possessives ("Mel's"), prefixes and nicknames ("Mel" → "Melanie") merge into one
 * entity whose canonical name is its most frequent full form. Pure functions, no model.
 */
import { sha256 } from "../pipeline/hashing";
import type { EntityType } from "../pipeline/spec";
import { conversationTurns, TURN_LABEL } from "./turns";

/** `{ canonical: [aliases] }` from the step's spec. */
export type Dictionary = Record<string, string[]>;

/** One conversation turn (or a plain text with no speaker). */
export interface Turn {
  speaker: string | null;
  text: string;
}

/** One occurrence of a name in a text. */
export interface Mention {
  surface: string;
  /** The type its context suggests (null: no cue). */
  type: EntityType | null;
  /** The speaker label of a turn (a person by definition). */
  speaker?: boolean;
  /** Only at the start of a sentence (where every word is capitalised): weak evidence of a name. */
  initial?: boolean;
  /** Matched through the dictionary: its canonical name. */
  canonical?: string;
}

/** The structured data of an entity record (`metadata.custom.entity`, the Synapsis contract). */
export interface EntityMeta {
  id: string;
  name: string;
  aliases: string[];
  type: EntityType;
  mentions: number;
  firstSeen: string | null;
  lastSeen: string | null;
  /** Mentions per month ("2023-05" → 12): what monthly digests count. */
  months: Record<string, number>;
}

/** Speaker labels that are roles, not people: the machine's side of a chat. */
const ROLES = new Set(["assistant", "system", "tool", "ai", "bot", "model", "narrator", "function", "developer", "unknown"]);
/** The person's side of a chat export: one person, "User". */
const USER_ROLES = new Set(["user", "human", "you", "me"]);

/**
 * Field labels of notes, forms, tickets and Q&A ("Question: …", "Ref: …", "Date: …"): a paragraph
 * they open is a field, not a turn, and the word alone is never an entity.
 */
const LABELS = new Set(
  (
    "q a question questions answer answers ref refs reference references date time dated subject title note notes summary re fw fwd cc bcc " +
    "source sources url link links id status type category categories tags tag description comment comments location address phone email " +
    "total price step steps example examples input output result results error warning tip tips todo update updated edit edited ps nb " +
    "context details detail topic topics agenda action actions item items response reply prompt query task goal goals keywords author version"
  ).split(/\s+/),
);

/** Capitalised words that begin sentences, greet, or name times: never entities on their own. */
const STOPWORDS = new Set(
  (
    "i i'm i've i'd i'll im ive a an the and but or so if then than hey hi hello bye goodbye thanks thank wow yes yeah yep no nope oh ok okay well " +
    "that that's this these those it it's its what what's when where why how who whoa which my mine your yours our ours their theirs his her hers " +
    "we we're we've you you're you've he he's she she's they they're me us them just really great good nice awesome cool sure also not do don't " +
    "did didn't does doesn't have has had is isn't are aren't was wasn't were be been being if let let's sounds sound glad sorry congrats " +
    "congratulations love haha hahaha lol omg absolutely definitely totally anyway plus by for in on at to from with as of after before since " +
    "until while because there there's here here's now today tonight tomorrow yesterday last next any some all every each many much more most " +
    "can can't could couldn't would wouldn't should shouldn't will won't may might must one two three first second new old big little amazing " +
    "wonderful beautiful happy exactly true right totally thankfully hopefully honestly actually maybe perhaps please take keep make made look " +
    "see saw go going went get got give gave know knew think thought feel felt want wanted need needed try tried hope remember speaking " +
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november " +
    "december mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec mr mrs ms dr st mom mum dad " +
    "mother father grandma grandpa even only still yet again once cheers bravo hooray yay ugh hmm wait gosh geez aww awww hugs"
  )
    .split(/\s+/)
    .concat([...LABELS]),
);

/** Words that are only lowercase connectors inside a multi-word name ("Bank of America"). */
const CONNECTORS = new Set(["of", "the", "de", "da", "del", "van", "von", "la", "le", "and"]);

const PLACE_CUES = new Set(["in", "at", "to", "from", "visited", "visit", "visiting", "near", "around", "across", "moved", "into", "toward", "towards"]);
const ORG_WORDS = /\b(?:Inc|Corp|Corporation|Company|Co|Ltd|LLC|University|College|School|Academy|Bank|Club|Group|Church|Society|Foundation|Team|Agency|Institute|Association|Studio|Studios|Labs?)\b/;
const PLACE_WORDS = /\b(?:City|Park|Beach|Lake|River|Mountains?|Street|St|Avenue|Road|Center|Centre|Museum|Cafe|Café|Restaurant|Library|Hospital|Island|Valley|County|State|Bay|Coast)\b/;
const EVENT_WORDS = /\b(?:Festival|Parade|Conference|Party|Wedding|Concert|Day|Week|Summit|Fair|Marathon|Pride|Camp|Retreat|Ceremony)\b/;

/** Common nicknames that are not prefixes of the full name. */
const NICKNAMES: Record<string, string[]> = {
  bob: ["robert"], rob: ["robert"], bobby: ["robert"], bill: ["william"], will: ["william"], liz: ["elizabeth"], beth: ["elizabeth"],
  betty: ["elizabeth"], jim: ["james"], jimmy: ["james"], mike: ["michael"], mick: ["michael"], kate: ["katherine", "catherine"],
  katie: ["katherine", "catherine"], jack: ["john"], johnny: ["john"], dick: ["richard"], rick: ["richard"], peggy: ["margaret"],
  maggie: ["margaret"], meg: ["margaret", "megan"], ted: ["edward", "theodore"], ned: ["edward"], tony: ["anthony"], sandy: ["sandra"],
  chuck: ["charles"], charlie: ["charles", "charlotte"], harry: ["henry", "harold"], hank: ["henry"], sue: ["susan"], jen: ["jennifer"],
  jenny: ["jennifer"], becky: ["rebecca"], bec: ["rebecca"], matt: ["matthew"], dave: ["david"], steve: ["steven", "stephen"],
  nick: ["nicholas"], tom: ["thomas"], chris: ["christopher", "christina", "christine"], sam: ["samuel", "samantha"], alex: ["alexander", "alexandra"],
};

// A capitalised word with at least one lowercase letter (so "I", "OK", "USA" are not names), then
// more capitalised words, optionally joined by connectors ("Bank of America").
const NAME = /(?<![\p{L}\p{N}])\p{Lu}[\p{L}'’-]*\p{Ll}[\p{L}'’-]*(?:\s+(?:(?:of|the|de|da|del|van|von|la|le)\s+)?\p{Lu}[\p{L}'’-]*\p{Ll}[\p{L}'’-]*)*/gu;

/** "Melanie's" → "Melanie", "James'" → "James". */
export function stripPossessive(name: string): string {
  return name.replace(/['’]s$/u, "").replace(/['’]$/u, "");
}

const lower = (s: string) => s.toLowerCase();
const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** A turn's speaker label as a name ("Caroline"; "user" → "User"), or null for the machine's roles ("assistant (to x)"). */
export function speakerName(label: string): string | null {
  const named = /^(.*?)\s*\(([^)]*)\)\s*$/u.exec(label);
  const name = (named ? named[1]! : label).trim();
  // "user (Caroline)": a chat export's user with a name is that person.
  if (named && USER_ROLES.has(lower(name)) && /^\p{L}[\p{L} .'-]*$/u.test(named[2]!.trim())) return capitalise(named[2]!.trim());
  if (USER_ROLES.has(lower(name))) return "User";
  if (!name || ROLES.has(lower(name)) || LABELS.has(lower(name)) || !/^\p{L}/u.test(name)) return null;
  // Importers lower-case roles ("caroline"): a label that is not a role is a name.
  return capitalise(name);
}

const capitalise = (name: string) => name.replace(/(^|\s)(\p{Ll})/gu, (_m, space: string, c: string) => space + c.toUpperCase());

/** The turns of a record: "Speaker: text" paragraphs, or the whole text when it has none. */
export function turnsOf(content: string): Turn[] {
  const { turns } = conversationTurns(content);
  if (!turns.length) return content.trim() ? [{ speaker: null, text: content.trim() }] : [];
  return turns.map((t) => {
    const m = TURN_LABEL.exec(t);
    return m ? { speaker: speakerName(m[1]!), text: t.slice(m[0].length).trim() } : { speaker: null, text: t };
  });
}

/** Trim stopwords off the ends of a capitalised run ("Hey Mel" → "Mel", "Thanks Caroline" → "Caroline"). */
function trimRun(surface: string): string | null {
  const ws = words(stripPossessive(surface.replace(/[-'’]+$/u, ""))).map(stripPossessive);
  while (ws.length && (STOPWORDS.has(lower(ws[0]!)) || CONNECTORS.has(lower(ws[0]!)))) ws.shift();
  while (ws.length && (STOPWORDS.has(lower(ws.at(-1)!)) || CONNECTORS.has(lower(ws.at(-1)!)))) ws.pop();
  if (!ws.length) return null;
  const name = ws.join(" ");
  return name.length >= 2 ? name : null;
}

function atSentenceStart(text: string, index: number): boolean {
  const before = text.slice(Math.max(0, index - 4), index);
  return index === 0 || /(?:^|[.!?…:;"“(\n])\s*["“'‘(]?\s*$/u.test(before) || /^\s*$/u.test(text.slice(0, index));
}

function typeCue(text: string, index: number, surface: string): EntityType | null {
  if (ORG_WORDS.test(surface)) return "organization";
  if (PLACE_WORDS.test(surface)) return "place";
  if (EVENT_WORDS.test(surface)) return "event";
  const prev = /([\p{L}]+)\s+$/u.exec(text.slice(Math.max(0, index - 24), index))?.[1];
  if (prev && PLACE_CUES.has(lower(prev))) return "place";
  return null;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Dictionary lookups: every canonical name and alias (lower-case) → the canonical name. */
export function dictionaryIndex(dictionary: Dictionary | undefined): Map<string, string> {
  const index = new Map<string, string>();
  for (const [canonical, aliases] of Object.entries(dictionary ?? {})) {
    for (const form of [canonical, ...aliases]) if (form.trim()) index.set(lower(form.trim()), canonical.trim());
  }
  return index;
}

function dictionaryPattern(index: Map<string, string>): RegExp | null {
  if (!index.size) return null;
  const forms = [...index.keys()].sort((a, b) => b.length - a.length).map(escapeRegex);
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${forms.join("|")})(?:['’]s)?(?![\\p{L}\\p{N}])`, "giu");
}

/** The names one text mentions (turn speakers included), in order. */
export function extractMentions(content: string, dictionary?: Map<string, string>): Mention[] {
  const index = dictionary ?? new Map<string, string>();
  const pattern = dictionaryPattern(index);
  const out: Mention[] = [];
  for (const turn of turnsOf(content)) {
    if (turn.speaker) out.push({ surface: turn.speaker, type: "person", speaker: true, ...(index.has(lower(turn.speaker)) ? { canonical: index.get(lower(turn.speaker))! } : {}) });
    const taken: Array<[number, number]> = [];
    if (pattern) {
      for (const m of turn.text.matchAll(pattern)) {
        const surface = stripPossessive(m[0]);
        out.push({ surface, type: typeCue(turn.text, m.index, surface), canonical: index.get(lower(surface))! });
        taken.push([m.index, m.index + m[0].length]);
      }
    }
    for (const m of turn.text.matchAll(NAME)) {
      const start = m.index;
      if (taken.some(([a, b]) => start < b && start + m[0].length > a)) continue;
      const surface = trimRun(m[0]);
      if (!surface) continue;
      const offset = m[0].indexOf(surface.split(" ")[0]!);
      const at = start + Math.max(0, offset);
      out.push({ surface, type: typeCue(turn.text, at, surface), ...(atSentenceStart(turn.text, at) ? { initial: true } : {}) });
    }
  }
  return out;
}

/** What resolution needs of one input record. */
export interface MentionSource {
  recordId: string;
  /** ISO time of the source (its `time.created_at`), or null. */
  time: string | null;
  mentions: Mention[];
}

export interface ResolvedEntity extends EntityMeta {
  /** The input records that mention it, oldest first. */
  sources: string[];
}

interface SurfaceGroup {
  key: string;
  forms: Map<string, number>;
  count: number;
  nonInitial: number;
  speaker: boolean;
  canonical: string | null;
  votes: Map<EntityType, number>;
  sources: Map<string, string | null>;
  months: Map<string, number>;
}

/** The stable id of an entity of a scope (the contract: "ent_" + sha256(scope + canonical lower-case name)). */
export function entityId(scope: string, name: string): string {
  return `ent_${sha256(scope + lower(name)).slice(0, 16)}`;
}

const firstWord = (s: string) => s.split(" ")[0]!;

/** The group `short` belongs to, among `groups`: a unique longer name it is a prefix or nickname of. */
function mergeTargets(short: SurfaceGroup, groups: SurfaceGroup[]): SurfaceGroup[] {
  const s = short.key;
  if (s.includes(" ") || s.length < 3) return [];
  const nick = NICKNAMES[s] ?? [];
  return groups.filter((g) => {
    if (g === short || g.key.length <= s.length) return false;
    const head = firstWord(g.key);
    // A speaker's label is their name: it only joins a fuller form of itself ("Caroline Smith").
    if (short.speaker) return head === s;
    return head.startsWith(s) || nick.includes(head);
  });
}

/** Mentions per cluster root. */
function clusterCount(groups: SurfaceGroup[], find: (g: SurfaceGroup) => SurfaceGroup): Map<SurfaceGroup, number> {
  const counts = new Map<SurfaceGroup, number>();
  for (const g of groups) counts.set(find(g), (counts.get(find(g)) ?? 0) + g.count);
  return counts;
}

/**
 * Which of several longer names a short one abbreviates: the only one; else the only speaker or
 * dictionary entity among them; else one that is mentioned at least three times as often as the
 * next ("Mel" → "Melanie", not the one-off "Mell"). Otherwise it is ambiguous and stays apart.
 */
function mergeTarget(roots: SurfaceGroup[], counts: Map<SurfaceGroup, number>): SurfaceGroup | undefined {
  if (roots.length <= 1) return roots[0];
  const known = roots.filter((r) => r.speaker || r.canonical);
  if (known.length === 1) return known[0];
  const ranked = [...roots].sort((a, b) => (counts.get(b) ?? 0) - (counts.get(a) ?? 0));
  return (counts.get(ranked[0]!) ?? 0) >= 3 * (counts.get(ranked[1]!) ?? 0) ? ranked[0] : undefined;
}

/**
 * Entity resolution for one scope: the names its records mention, merged (case, possessive,
 * prefix/nickname, dictionary) into entities with a canonical name (the dictionary's, else a
 * speaker's, else the most frequent full form), aliases, a type and mention counts.
 */
export function resolveEntities(
  scope: string,
  sources: MentionSource[],
  dictionary?: Map<string, string>,
  options: {
    /**
     * Words the scope's texts also use in lower case. A name seen only at the start of sentences
     * is dropped when it is one of them ("Sounds great!") and kept otherwise ("Oscar barked.").
     * Without it, every single word seen only at sentence starts is dropped.
     */
    lowercaseWords?: ReadonlySet<string>;
  } = {},
): ResolvedEntity[] {
  const index = dictionary ?? new Map<string, string>();
  const groups = new Map<string, SurfaceGroup>();
  for (const src of sources) {
    for (const m of src.mentions) {
      const canonical = m.canonical ?? index.get(lower(m.surface)) ?? null;
      // Dictionary forms group under their canonical name; everything else by its lower-case form.
      const key = canonical ? lower(canonical) : lower(m.surface);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { key, forms: new Map(), count: 0, nonInitial: 0, speaker: false, canonical: null, votes: new Map(), sources: new Map(), months: new Map() }));
      g.forms.set(m.surface, (g.forms.get(m.surface) ?? 0) + 1);
      g.count += 1;
      if (!m.initial) g.nonInitial += 1;
      if (m.speaker) g.speaker = true;
      if (canonical) g.canonical = canonical;
      if (m.type) g.votes.set(m.type, (g.votes.get(m.type) ?? 0) + 1);
      g.sources.set(src.recordId, src.time);
      if (src.time) g.months.set(src.time.slice(0, 7), (g.months.get(src.time.slice(0, 7)) ?? 0) + 1);
    }
  }
  // A capitalised word seen only at the start of sentences is most likely not a name.
  // Seen only at sentence starts: a common word capitalised there, or a name?
  const common = (g: SurfaceGroup) => {
    if (!options.lowercaseWords) return true;
    return !g.key.includes(" ") && options.lowercaseWords.has(g.key);
  };
  const strong = [...groups.values()].filter((g) => g.speaker || g.canonical || g.nonInitial > 0 || !common(g));
  // ...unless it is a short form of a name seen elsewhere ("Mel, look at this!").
  const strongCounts = new Map(strong.map((g) => [g, g.count]));
  const kept = [
    ...strong,
    ...[...groups.values()].filter((g) => !strongCounts.has(g) && mergeTarget(mergeTargets(g, strong), strongCounts) !== undefined),
  ];

  // Union-find: shorter names join the unique longer name they abbreviate.
  const parent = new Map<SurfaceGroup, SurfaceGroup>(kept.map((g) => [g, g]));
  const find = (g: SurfaceGroup): SurfaceGroup => {
    let r = g;
    while (parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  const byLength = [...kept].sort((a, b) => a.key.length - b.key.length || (a.key < b.key ? -1 : 1));
  for (const short of byLength) {
    if (short.canonical) continue; // the dictionary decides what its names are
    const roots = [...new Set(mergeTargets(short, kept).map(find))].filter((r) => r !== find(short));
    const target = mergeTarget(roots, clusterCount(kept, find));
    // Two speakers never merge into each other by prefix ("Jo" and "Jon" talking).
    if (target && !(short.speaker && target.speaker)) parent.set(find(short), target);
  }
  const clusters = new Map<SurfaceGroup, SurfaceGroup[]>();
  for (const g of kept) {
    const r = find(g);
    clusters.set(r, [...(clusters.get(r) ?? []), g]);
  }

  const entities: ResolvedEntity[] = [];
  for (const members of clusters.values()) {
    const forms = new Map<string, number>();
    for (const g of members) for (const [f, n] of g.forms) forms.set(f, (forms.get(f) ?? 0) + n);
    // The most frequent casing of each lower-case form.
    const byLower = new Map<string, { form: string; n: number; total: number }>();
    for (const [f, n] of forms) {
      const cur = byLower.get(lower(f));
      if (!cur) byLower.set(lower(f), { form: f, n, total: n });
      else {
        cur.total += n;
        if (n > cur.n) Object.assign(cur, { form: f, n });
      }
    }
    const candidates = [...byLower.values()];
    const dictionaryName = members.find((g) => g.canonical)?.canonical;
    const speaker = members.filter((g) => g.speaker).sort((a, b) => b.count - a.count)[0];
    const isPrefix = (c: string) => candidates.some((o) => lower(o.form) !== c && lower(o.form).startsWith(c));
    const full = candidates.filter((c) => !isPrefix(lower(c.form)));
    const rank = (a: { form: string; total: number }, b: { form: string; total: number }) =>
      b.total - a.total || b.form.length - a.form.length || (a.form < b.form ? -1 : 1);
    const name =
      dictionaryName ??
      (speaker ? (byLower.get(speaker.key)?.form ?? speaker.key) : (full.sort(rank)[0] ?? candidates.sort(rank)[0]!).form);
    const aliases = candidates
      .map((c) => c.form)
      .filter((f) => lower(f) !== lower(name))
      .sort((a, b) => (a < b ? -1 : 1));
    const votes = new Map<EntityType, number>();
    for (const g of members) for (const [t, n] of g.votes) votes.set(t, (votes.get(t) ?? 0) + n);
    const voted = [...votes.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0];
    // No cue: a single capitalised word is a person, unless the texts also use it in lower case
    // (a common word capitalised at a line or sentence start: "Art", "Honestly").
    const lowercaseToo = !name.includes(" ") && !!options.lowercaseWords?.has(lower(name));
    const type: EntityType = members.some((g) => g.speaker) ? "person" : (voted ?? (name.includes(" ") || lowercaseToo ? "other" : "person"));
    const srcs = new Map<string, string | null>();
    const months: Record<string, number> = {};
    let mentions = 0;
    for (const g of members) {
      mentions += g.count;
      for (const [id, t] of g.sources) srcs.set(id, t);
      for (const [m, n] of g.months) months[m] = (months[m] ?? 0) + n;
    }
    const ordered = [...srcs.entries()].sort((a, b) => ((a[1] ?? "") < (b[1] ?? "") ? -1 : (a[1] ?? "") > (b[1] ?? "") ? 1 : a[0] < b[0] ? -1 : 1));
    const times = ordered.map(([, t]) => t).filter((t): t is string => !!t);
    entities.push({
      id: entityId(scope, name),
      name,
      aliases,
      type,
      mentions,
      firstSeen: times[0] ?? null,
      lastSeen: times.at(-1) ?? null,
      months: Object.fromEntries(Object.entries(months).sort()),
      sources: ordered.map(([id]) => id),
    });
  }
  return entities.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** The words the texts use in lower case (what a capitalised word at a sentence start may just be). */
export function lowercaseWords(texts: Iterable<string>): Set<string> {
  const words = new Set<string>();
  for (const text of texts) for (const m of text.matchAll(/(?<![\p{L}'’])\p{Ll}[\p{Ll}'’-]*/gu)) words.add(m[0]);
  return words;
}

/** The entity record's one-line card. */
export function entityCard(e: EntityMeta): string {
  const also = e.aliases.length ? ` Also: ${e.aliases.join(", ")}.` : "";
  const span = e.firstSeen ? ` ${e.firstSeen.slice(0, 10)}${e.lastSeen && e.lastSeen !== e.firstSeen ? ` – ${e.lastSeen.slice(0, 10)}` : ""}.` : "";
  return `${e.name} (${e.type}).${also} Mentioned ${e.mentions} time${e.mentions === 1 ? "" : "s"}${span ? "," + span : "."}`;
}

/** Name and alias lookup of a scope's entities (lower-case form → entity), what relations link by. */
export function entityLookup(entities: ReadonlyArray<Pick<EntityMeta, "id" | "name" | "aliases">>): Map<string, string> {
  const lookup = new Map<string, string>();
  // Canonical names win over aliases that collide with them.
  for (const e of entities) for (const a of e.aliases) if (!lookup.has(lower(a))) lookup.set(lower(a), e.id);
  for (const e of entities) lookup.set(lower(e.name), e.id);
  return lookup;
}
