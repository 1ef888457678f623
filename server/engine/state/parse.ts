/**
 * The offline reading of a statement as a change of state: whose attribute (first person resolved,
 * "we" resolved to the speaker's household, lead-ins stripped), which typed slot (state/slots.ts),
 * which value, and whether it holds now or ended ("no longer", "used to … but now", "broke up",
 * a pet's name with "passed away"). A value without a slot ("Rex died", "I left Lisbon") is
 * resolved by consolidation against the memories that hold that value.
 */
import { DEVICE_BRANDS, DIETS, LEAD_IN, PET_KINDS, ROLE_NOUNS, SLOTS, SLOT_NAMES, type SlotName } from "./slots";

export type Polarity = "current" | "ended";

export interface StateFact {
  subject: string;
  /** Null: a value whose slot the memories say ("Rex died"). */
  slot: SlotName | null;
  value: string | null;
  /** The pet's species and the like. */
  detail?: string;
  polarity: Polarity;
  /** The value this one replaces, when the statement names it ("from Lisbon to Porto"). */
  old?: string;
  /** The statement says the new value replaces what held before ("now", "instead", "swapped"). */
  replaces?: boolean;
}

const S = "\u00a7"; // the subject, after resolution
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const alt = (xs: readonly string[]) => xs.map(esc).sort((a, b) => b.length - a.length).join("|");

/** A proper noun (one or more capitalized words: "Porto", "Alpine Ski House", "Pixel 8"). */
const PN = String.raw`[A-Z][\p{L}\p{N}&'-]*(?: (?:of |de |da |&|and (?=[A-Z]))?[A-Z0-9][\p{L}\p{N}&'-]*)*`;
/** A common-noun value, up to where the clause goes on. */
const VAL = String.raw`[\p{L}\p{N}][\p{L}\p{N}' -]*?`;
const END = String.raw`(?=\s+(?:now|these days|nowadays|again|anymore|any more|as of|as a hobby|as ${S}'s phone|by trade|on ${S}'s team|since|this|last|from now on|on (?:monday|the same team)|and|but|so|after|for|with|at|in|too|already|position|role|class|diet|household|instead|full[- ]time|in months)\b|\s*[.,;:!?()\u2014\u2013]|\s*$)`;
const KIND = `(?<kind>${alt(PET_KINDS)})`;
const DIET = `(?<v>${alt(DIETS)})`;
const DEVICE = String.raw`(?<v>(?:${alt(DEVICE_BRANDS)})(?: [A-Z0-9][\p{L}\p{N}+]*){0,2})`;
const ROLE = String.raw`(?<v>[\p{L}][\p{L} -]*?\b(?:${alt(ROLE_NOUNS)})(?: of [\p{L}]+)?)`;
/** An adverb between the subject and its verb ("we just moved"). */
const ADV = String.raw`(?:(?:just|finally|recently|now|also|already|officially|actually|happily) )?`;
const ART = String.raw`(?:(?:a|an|the|${S}'s|new) )*`;

interface Rule {
  slot: SlotName | null;
  polarity: Polarity;
  re: RegExp;
}

/** A rule from alternatives that may reuse group names (v, old, kind): each gets a number of its own. */
function r(slot: SlotName | null, polarity: Polarity, source: string): Rule {
  let n = 0;
  const numbered = source.replace(/\(\?<(v|old|kind)\d*>/g, (_, name: string) => `(?<${name}${n++}>`);
  return { slot, polarity, re: new RegExp(numbered, "gu") };
}

/** Ended states: what no longer holds. */
const ENDED: Rule[] = [
  r("partner", "ended", String.raw`${S} is single|single again|(?:${S} and (?<v>${PN})|(?<v2>${PN}) and ${S}) (?:broke up|split up|separated|called it off|divorced|are over)|${S} (?:broke up|split up|separated) with (?<v3>${PN})|${S} is no longer (?:with|seeing|dating|married to) (?<v4>${PN})|relationship with (?<v5>${PN}) (?:ended|is over)|divorce from (?<v6>${PN})|${S} (?:broke up|split up|separated|called it off)\b|used to be (?:with|married to) (?<v7>${PN}),? but (?:${S} )?(?:separated|split|broke up|divorced)`),
  r("pet", "ended", String.raw`(?:${S}'s |the )?${KIND},? (?<v>${PN}),? (?:has |had )?(?:passed away|died|ran away|is gone|is no longer with ${S}|was put down)|(?:had to )?put (?<v2>${PN}) down|rehomed (?<v3>${PN})|lost (?<v4>${PN}),? ${S}'s ${KIND}|used to have an? ${KIND} (?:named|called) (?<v5>${PN}),? but (?:he|she|it|they) (?:died|passed away|ran away)`),
  r(null, "ended", String.raw`(?:^|\bthe |\b${S}'s )(?<v>${PN}) (?:has |had )?(?:passed away|died|ran away(?: and never came back)?|is gone|broke|is no longer with ${S})`),
  r("hobby", "ended", String.raw`${S} (?:no longer|doesn't|does not|won't|will not) (?:go|do|play|practi[cs]e|enjoy) (?<v>${VAL})${END}|${S} (?:gave up|quit|stopped|is done with|has given up) (?<v2>${VAL})${END}|(?<v3>${VAL}) is not for ${S} any ?more|no more (?<v4>${VAL}) for ${S}|${S} (?:haven't|hasn't|has not) done (?<v5>${VAL}) in|${S} (?:don't|doesn't) do (?<v6>${VAL}) any ?more|used to (?:love|do|enjoy|play) (?<v7>${VAL}),? but (?:${S} )?(?:stopped|quit|gave (?:it )?up)`),
  r("employer", "ended", String.raw`${S} (?:no longer works?|doesn't work|does not work) (?:at|for) (?<v>${PN})|${S} ${ADV}(?:left|quit|lost) (?:(?:${S}'s|his|her|their) (?:job|position) (?:at|with) )?(?<v2>${PN})`),
  r(null, "ended", String.raw`${S} (?:is |does |has )?no longer (?:\p{L}+ )?(?:as |in |at |with |for |a |an |the |${S}'s )*(?<v>${VAL})${END}|no longer in (?<v2>${PN})|${S} used to (?:\p{L}+ ){1,2}?(?:in |at |for |with |a |an |the )*(?<v3>${VAL})${END}|${S} (?:left|after years in) (?<v4>${PN})|after (?:\p{L}+ )?(?:years|months) (?:in|at) (?<v5>${PN})|used to be (?:a |an )?(?<v6>${VAL})${END}`),
];

/** Current states: a value that holds. */
const CURRENT: Rule[] = [
  // residence
  r("residence", "current", String.raw`${S} ${ADV}(?:has )?${ADV}(?:moved|relocated|relocating|moving|moved back|packed up and moved|settled)\b(?:[^.]*?\bfrom (?<old>${PN}))?[^.]*?\b(?:to|in) (?<v>${PN})`),
  r("residence", "current", String.raw`(?:${S} |\b)(?:lives?|living|lived|is based|based|resides?|residing|settled|staying|is staying) in (?<v>${PN})|(?:rents?|renting|found|bought|has) (?:an? |${S}'s )?(?:new )?(?:apartment|flat|house|home|place) in (?<v2>${PN})|${S}'s (?:new )?(?:address|flat|apartment|place|home|house)(?: is)? in (?<v3>${PN})|home (?:for ${S} )?is (?<v4>${PN})|(?<v5>${PN}) is (?:${S}'s )?home|${S} is in (?<v6>${PN}) now|${S}'s (?:new )?place in (?<v7>${PN})|address is (?<v8>${PN})`),
  // employer
  r("employer", "current", String.raw`(?:newest|new|latest) hire at (?<v>${PN})|(?:works?|working|worked|employed|a job|job|position|started) (?:at|for|with|by) (?<v2>${PN})|${S}'s employer is (?<v3>${PN})|(?:joined|hired by|an offer from|first (?:week|day|month) at|an? (?<v4>${PN}) employee|${S} is at) (?<v5>${PN})|(?:years|months) at (?<old>${PN}),? ${S} (?:switched|moved|went) to (?<v6>${PN})|left (?<old2>${PN}) and joined (?<v7>${PN})|${S} is an? (?<v8>${PN}) employee`),
  // role
  r("role", "current", String.raw`promoted(?: ${S})? to (?:be )?${ART}(?<v>${VAL})${END}|(?:job )?title (?:is|changed to|is now) (?:now )?${ART}(?<v2>${VAL})${END}|${S}'s (?:new )?(?:role|position|job)(?: at work| on ${S}'s team)? is (?:now )?${ART}(?<v3>${VAL})${END}|${S} (?:works?|working|worked) as ${ART}(?<v4>${VAL})${END}|made ${S} ${ART}${ROLE.replace("<v>", "<v5>")}${END}|into the (?<v6>${VAL}) (?:position|role)|(?:${S} is|${S} has been|officially|${S} became|as) (?:officially )?(?:a|an|the) ${ROLE}${END}|switched from (?:being )?${ART}(?<old>${VAL}) to ${ROLE}${END}`),
  // partner
  r("partner", "current", String.raw`${S}'s (?:new )?(?:partner|boyfriend|girlfriend|husband|wife|fianc[ée]e?|spouse),? (?:is )?(?<v>${PN})|${S} is (?:married|engaged) to (?<v2>${PN})|got (?:engaged|married) to (?<v3>${PN})|${S} (?:has )?been (?:with|dating|seeing) (?<v4>${PN})|${S} is (?:with|seeing|dating) (?<v5>${PN})|seeing someone:? (?<v6>${PN})|(?:^|\b)(?<v7>${PN}) and ${S} (?:are dating|are together|moved in together|live together|got engaged|got married|have been dating|are a couple)|divorce from (?<old>${PN}),? ${S} met (?<v8>${PN})|(?:^|\b)(?<v9>${PN}) is ${S}'s (?:new )?(?:partner|boyfriend|girlfriend|husband|wife|fianc[ée]e?|spouse)`),
  // pet
  r("pet", "current", String.raw`(?:has|have|adopted|got|rescued|brought home|bought|walk|walks)\s+(?:a |an |${S}'s )?(?:new )?${KIND},?[^.]*?\b(?:named|called|name is)\s+(?:him |her |it )?(?<v>${PN})|${S}'s (?:new )?${KIND},? (?<v2>${PN})|(?:^|\b)(?<v3>${PN}),? (?:${S}'s|the|a) (?:new )?${KIND}|(?:^|\b)(?<v4>${PN}) the ${KIND}|meet (?<v5>${PN}),? ${S}'s (?:new )?${KIND}|hi to (?<v6>${PN}),? the ${KIND}|new ${KIND} now:? (?<v7>${PN})|${KIND}[^.]*?\b(?:named|called) (?:him |her |it )?(?<v8>${PN})`),
  // diet
  r("diet", "current", String.raw`${S} (?:is|went|goes|has been|is trying|eats?|is eating|follows?|started|is on|am) (?:an? |a strict )?${DIET}\b|${S}'s diet is ${DIET.replace("<v>", "<v2>")}|(?:put ${S} on|is trying|trying) an? ${DIET.replace("<v>", "<v3>")}|(?:^|\b)${DIET.replace("<v>", "<v4>")} from now on|(?:switched|changed) from (?<old>${alt(DIETS)}) to ${DIET.replace("<v>", "<v5>")}|an? ${DIET.replace("<v>", "<v6>")} (?:household|diet)`),
  // device
  r("device", "current", String.raw`(?:has|have|got|bought|upgraded to|switched (?:from (?:${S}'s )?(?<old>(?:${alt(DEVICE_BRANDS)})[\p{L}\p{N} ]*?) )?to|unboxed|uses?|using|on|carry|carries|gave ${S}|is|phone(?::| is)) (?:a |an |the |${S}'s )?(?:new )?${DEVICE}|${S}'s (?:new )?${DEVICE}`),
  // hobby
  r("hobby", "current", String.raw`${S}'s (?:new )?hobby is (?<v>${VAL})${END}|${S} is (?:really |totally |so |now )?(?:into|obsessed with|hooked on) (?<v2>${VAL})${END}|${S} (?:has )?(?:taken|took|picked) up (?<v3>${VAL})${END}|${S} (?:spends?|spent) (?:${S}'s |most |all )?(?:weekends|evenings|free time) (?:on |doing )?(?<v4>${VAL})${END}|(?:^|\b)(?<v5>${VAL}) is (?:how ${S} unwinds?|${S}'s thing|${S}'s hobby)|free time goes to (?<v6>${VAL})${END}|signed up for an? (?<v7>${VAL}) class|swapped (?<old>${VAL}) for (?<v8>${VAL})${END}|gave up (?<old2>${VAL}) and started (?<v9>${VAL})${END}|(?:${S} )?started (?<v10>${VAL}) this month|but now (?:${S} is|it's) (?:all )?into (?<v11>${VAL})${END}|; it's (?<v12>${VAL}) now|${S} (?:really )?(?:loves?|enjoys?) (?<v13>(?:\p{L}+ )?\p{L}+ing)${END}`),
];

const PARTNER_WORDS = /^(?:wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|spouse)$/u;
const RELATIVE = new RegExp(
  String.raw`^(?:\p{L}+ ){0,3}?${S}'s (?:new |best |old |little |big |younger |older )?(sister|brother|mother|father|mom|mum|dad|friend|son|daughter|kids?|children|child|cousin|aunt|uncle|colleague|coworker|boss|manager|neighbou?r|grandma|grandpa|grandmother|grandfather|parents|roommate|wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|spouse)\b(?: ${PN})?,? (?!is (?:now )?${PN}(?:[.!,]|$))`,
  "u",
);

/** Words that start a sentence, not a name ("That's the dog" names no dog). */
const NOT_A_NAME = /^(?:that|that's|this|these|those|it|it's|here|here's|there|there's|he|she|they|what|who|and|but|so|the|a|an|thanks|yes|no)$/iu;

/** Subject resolution: the speaker's first person (and their household's "we") becomes the subject mark. */
function resolve(text: string, speaker: string | undefined): { work: string; subject: string } | null {
  let t = text.replace(/[’‘]/g, "'").replace(/\s*\(asked: [^)]*\)/g, "").trim();
  for (let i = 0; i < 3; i++) {
    const m = LEAD_IN.exec(t);
    if (!m || !m[0]) break;
    t = t.slice(m[0].length);
  }
  let subject = speaker;
  if (!subject) {
    const m = /^([A-Z][\p{L}-]*|user)(?='s\b| (?:is|has|was|had|no|used|lives?|works?|moved|got|adopted|and|quit|left|gave|started|became|switched|broke|went|eats?)\b)/u.exec(t);
    if (!m) return null;
    subject = m[1]!;
  }
  const name = esc(subject);
  const w = t
    .replace(new RegExp(`\\b${name}'s\\b`, "g"), `${S}'s`)
    .replace(new RegExp(`\\b${name}\\b`, "g"), S)
    .replace(/\b(?:I'm|I am|[Ww]e're|[Ww]e are)\b/g, `${S} is`)
    .replace(/\b(?:I've|I have|[Ww]e've|[Ww]e have)\b/g, `${S} has`)
    .replace(/\b(?:[Mm]y|[Oo]ur|[Mm]ine|[Oo]urs)\b/g, `${S}'s`)
    .replace(/\b(?:I|[Ww]e|me|us|[Mm]yself|[Oo]urselves)\b/g, S)
    .replace(/\bMe!?$/, S);
  return { work: w, subject };
}

interface Match {
  slot: SlotName | null;
  polarity: Polarity;
  value: string;
  old?: string;
  kind?: string;
  /** Where the value starts, and where the match ends, in the text. */
  start: number;
  index: number;
}

function clean(value: string, slot: SlotName | null): string {
  let v = value.trim().replace(new RegExp(`^(?:(?:a|an|the|new|${S}'s|${S})\\s+)+`, "u"), "").replace(/\s+(?:diet|phone|position|role|class|hobby)$/u, "").trim();
  if (slot && ["partner", "pet", "residence", "employer"].includes(slot)) v = v.charAt(0).toUpperCase() + v.slice(1);
  return v;
}

function matches(rules: Rule[], work: string): Match[] {
  const out: Match[] = [];
  for (const rule of rules) {
    rule.re.lastIndex = 0;
    for (const m of work.matchAll(rule.re)) {
      const groups = m.groups ?? {};
      const entry = Object.entries(groups).find(([k, v]) => /^v\d*$/.test(k) && v);
      const kind = Object.entries(groups).find(([k, v]) => /^kind\d*$/.test(k) && v)?.[1];
      if (!entry) {
        // "I'm single again", "we broke up": an end without a value.
        if (rule.polarity === "ended" && rule.slot) out.push({ slot: rule.slot, polarity: "ended", value: "", start: m.index ?? 0, index: (m.index ?? 0) + m[0].length });
        continue;
      }
      const old = Object.entries(groups).find(([k, v]) => /^old\d*$/.test(k) && v)?.[1];
      const value = clean(entry[1]!, rule.slot);
      if (!value || value.includes(S) || NOT_A_NAME.test(value)) continue;
      if (rule.slot === "hobby" && new RegExp(`^(?:(?:his|her|their|${S}'s) )?(?:working|work|a job|a new job|job|school|college|dating|seeing)\\b`, "u").test(value)) continue;
      out.push({ slot: rule.slot, polarity: rule.polarity, value, ...(old ? { old: clean(old, rule.slot) } : {}), ...(kind ? { kind } : {}), start: (m.index ?? 0) + Math.max(0, m[0].lastIndexOf(entry[1]!)), index: (m.index ?? 0) + m[0].length });
    }
  }
  return out;
}

const REPLACES = /\b(?:now|these days|nowadays|lately|instead|swapped|new hobby|from now on|any more|anymore|no longer|used to|all (?:\p{L}+ )?free time)\b/iu;

/**
 * The state a statement sets or ends, or null when it states none. `speaker`: whose first person
 * the statement is in (the offline extractor's turn speaker); without it, a third-person fact's
 * first word is its subject ("Ana moved to Porto").
 */
export function parseState(text: string, speaker?: string): StateFact | null {
  const resolved = resolve(text, speaker);
  if (!resolved) return null;
  const { work, subject } = resolved;
  if (!work.includes(S) && !/^[A-Z\p{Lu}]|^\p{Ll}+ the /u.test(work)) {
    // Neither the subject nor a name leads: nothing of the subject's (a pet's name may still lead).
  }
  // A sentence's first word is read both as it is (a name: "Tom and I …") and lowercased ("Home is …").
  const variants = work.charAt(0) === S ? [work] : [work.charAt(0).toLowerCase() + work.slice(1), work];
  const all = (rules: Rule[]) => {
    const seen = new Set<string>();
    return variants.flatMap((v) => matches(rules, v)).filter((m) => {
      const key = m.value.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  // A statement about someone of the subject's ("Ana's sister Marta lives in Faro") is not the
  // subject's state — but a partner's name is ("My girlfriend Greta is a teacher").
  const relative = RELATIVE.exec(work);
  const aboutOther = relative ? (PARTNER_WORDS.test(relative[1]!) ? (m: Match) => m.slot !== "partner" : () => true) : () => false;
  const ended = all(ENDED).filter((m) => !aboutOther(m));
  const endedValues = new Set(ended.map((e) => e.value.toLowerCase()));
  const current = all(CURRENT)
    .filter((m) => !aboutOther(m))
    // A value inside what an end says ("no longer works as a nurse") is not a current one.
    .filter((c) => !endedValues.has(c.value.toLowerCase()) && c.value.toLowerCase() !== c.old?.toLowerCase() && !ended.some((e) => c.start >= e.start && c.start < e.index))
    // The latest value stated wins ("used to …, but now …"); a hobby only when no other slot is stated
    // ("started working at Acme" is a job, not a pastime).
    .sort((a, b) => (a.slot === "hobby" ? 1 : 0) - (b.slot === "hobby" ? 1 : 0) || b.index - a.index);
  const now = current[0];
  if (now) {
    const old = now.old ?? ended.find((e) => e.slot === now.slot || e.slot === null)?.value;
    return {
      subject,
      slot: now.slot,
      value: now.value,
      polarity: "current",
      ...(now.kind ? { detail: now.kind } : {}),
      ...(old ? { old } : {}),
      ...(REPLACES.test(work) || old ? { replaces: true } : {}),
    };
  }
  const rank = (m: Match) => (m.slot === null ? 4 : m.slot === "hobby" ? 2 : 0) + (m.value ? 0 : 1);
  const end = ended.sort((a, b) => rank(a) - rank(b) || a.index - b.index)[0];
  if (end) return { subject, slot: end.slot, value: end.value || null, polarity: "ended", ...(end.kind ? { detail: end.kind } : {}) };
  return null;
}

/** The memory text of a state that holds ("user lives in Porto"). */
export function canonicalText(state: StateFact): string {
  if (!state.slot || !state.value) return "";
  return SLOTS[state.slot].canonical(state.subject, state.value, state.detail);
}

export const isSlot = (s: string): s is SlotName => (SLOT_NAMES as readonly string[]).includes(s);
