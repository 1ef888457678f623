/**
 * The offline fact extractor for conversations (the `extract-list` task of the offline model when
 * its input is a transcript of "Speaker: text" turns): what a model asked for "the facts worth
 * remembering" keeps, without a model.
 *
 * - every informative sentence of every turn is kept (no cap: a cap is what made offline Memex and
 *   Mem0 lose half of what they were given), in order;
 * - a compound sentence is split where a new clause with its own subject starts ("…, and I …",
 *   "…; she …", "… but we …");
 * - the first person is resolved to the turn's speaker ("I moved" → "Caroline moved", "my dog" →
 *   "Caroline's dog"), so a fact stands alone;
 * - each fact carries the speaker and the 1-based number of the turn it came from (the split step
 *   stores them under `custom`, so provenance reaches the turn); the time is the input's own
 *   (`time.created_at`, inherited by the fact record).
 *
 * Small talk ("Thanks!", "Wow, that's great!", "Long time no see!") and questions ("How are you?", "What inspired
 * you?") are not informative: a kept sentence states something, with at least two content words.
 */
import { conversationTurns } from "../engine/turns";
import { parseState, type StateFact } from "../engine/state/parse";
import { LEAD_IN } from "../engine/state/slots";
import { splitSentences, terms } from "../text/text-rank";

export interface ConversationFact {
  fact: string;
  speaker: string;
  /** 1-based turn number within the conversation (the numbering of the `turns` operator). */
  turn: number;
  /** The slot the fact sets or ends (residence, employer, …; see engine/state), read with its speaker. */
  state?: StateFact;
}

/**
 * The assistant's side of a chat (ChatGPT, Claude exports: "assistant"): its small talk, advice and
 * acknowledgements are not the user's facts, and what it repeats of the user's facts the user said first.
 */
const ASSISTANT = /^(?:assistant|ai|bot|chatgpt|gpt|claude|gemini|model|system|tool)$/i;
/** The assistant restating what the user told it. */
const CONFIRMS = /\b(?:as )?you(?:'ve| have)? (?:told|said to|mentioned to|shared with|wrote to) me(?: that)?\b|\bas you (?:said|mentioned)\b,?/i;
export const isAssistantSpeaker = (speaker: string) => ASSISTANT.test(speaker.trim());

/** A speaker label ("Caroline", "user", "tool (python)") as a name: the part before any "(…)". */
function speakerName(label: string): string {
  return label.replace(/\s*\(.*\)\s*$/, "").trim();
}

const SUBJECT = String.raw`(?:I|I'm|I've|I'd|I'll|we|we're|we've|he|she|they|they're|my|our|his|her|their|it's)`;
/** Where a compound sentence splits: a conjunction (or a semicolon) followed by a new subject. */
const CLAUSE_BREAK = new RegExp(String.raw`\s*(?:;\s+|,?\s+(?:and|but|so)\s+)(?=${SUBJECT}\b)`, "g");

/** The clauses of a sentence that each have their own subject; a clause too short to stand alone stays with the one before. */
export function splitCompound(sentence: string): string[] {
  const s = sentence.replace(/’/g, "'");
  const parts = s.split(CLAUSE_BREAK).map((p) => p.trim()).filter(Boolean);
  const out: string[] = [];
  let carry = "";
  for (const p of parts) {
    const joined = carry ? `${carry} ${p}` : p;
    if (terms(joined).length < 2) carry = joined;
    else if (out.length && terms(p).length < 2) out[out.length - 1] = `${out[out.length - 1]!.replace(/[.!?]+$/, "")} and ${p}`;
    else {
      out.push(joined);
      carry = "";
    }
  }
  if (carry) out.push(carry);
  return out.map((p) => {
    const t = p.replace(/^[,;\s]+/, "");
    const capital = t.charAt(0).toUpperCase() + t.slice(1);
    return /[.!?]$/.test(capital) ? capital : `${capital}.`;
  });
}

/** The first person of `text` resolved to `speaker` ("I'm" → "Ana is", "my" → "Ana's", "me" → "Ana"). */
export function resolveFirstPerson(text: string, speaker: string): string {
  if (!speaker) return text;
  const own = `${speaker}'s`;
  return text
    .replace(/’/g, "'")
    .replace(/\bI'm\b/g, `${speaker} is`)
    .replace(/\bI am\b/g, `${speaker} is`)
    .replace(/\bI've\b/g, `${speaker} has`)
    .replace(/\bI have\b/g, `${speaker} has`)
    .replace(/\bI'd\b/g, `${speaker} would`)
    .replace(/\bI'll\b/g, `${speaker} will`)
    .replace(/\bI don't\b/g, `${speaker} doesn't`)
    .replace(/\bI do\b/g, `${speaker} does`)
    .replace(/\bI (?=[a-z])([^.!?;,]*)/g, (_, rest: string) => `${speaker} ${conjugate(rest)}`)
    .replace(/\bI\b/g, speaker)
    .replace(/\b[Mm]yself\b/g, speaker)
    .replace(/\b[Mm]ine\b/g, own)
    .replace(/\bMy\b/g, own)
    .replace(/\bmy\b/g, own)
    .replace(/\bme\b/g, speaker);
}

/** Words of greetings, thanks and reactions: a sentence made only of these (and names) is small talk. */
const SMALL_TALK = new Set(
  "hey hi hello bye goodbye thanks thank welcome wow whoa omg yay congrats congratulations cool nice great awesome amazing wonderful fantastic lovely sweet glad happy good see talk soon later care totally absolutely definitely sure yeah yes okay ok haha lol sounds sound fun proud love day".split(" "),
);

/**
 * Fixed phatic expressions of English: greetings, catching up, well-wishing and leave-taking, whose
 * words ("long", "time", "wanted", "say", "hope", "hear") carry content elsewhere but nothing here.
 * They are removed before counting a sentence's content words, so "Long time no see!" and "Just
 * wanted to say hi!" are small talk while "It took a long time to see the doctor." is not. Only
 * whole expressions are listed (never single words), so no statement loses a word it needs.
 */
const PHATIC = new RegExp(
  [
    String.raw`long time no (?:see|talk|chat|hear)`,
    String.raw`(?:just )?(?:wanted|want|thought I'd|I'd like) to (?:say (?:hi|hello|hey)|check in|catch up|reach out)`,
    String.raw`(?:say|said) (?:hi|hello|hey)`,
    String.raw`(?:catch|catching|caught) up`,
    String.raw`check(?:ing)? in`,
    String.raw`how (?:are|have) you(?: been)?(?: doing)?`,
    String.raw`how's (?:it going|everything|life)`,
    String.raw`what's (?:up|new)`,
    String.raw`(?:it's |it is |so )?(?:nice|good|great|lovely) to (?:see|hear from|meet|talk to|chat with|catch up with) you(?: again)?`,
    String.raw`hope (?:you're|you are|you've been|all is|everything is|things are)(?: doing)? (?:well|good|great|okay|ok)`,
    String.raw`hope you (?:have|had|enjoy) (?:a )?(?:good|great|nice|lovely|wonderful) (?:day|night|evening|weekend|week|time|one)`,
    String.raw`have (?:a )?(?:good|great|nice|lovely|wonderful) (?:day|night|evening|weekend|week|time|one)`,
    String.raw`take care`,
    String.raw`(?:talk|speak|chat) (?:to you )?(?:soon|later)`,
    String.raw`see (?:you|ya) (?:soon|later|around|next time)`,
  ].join("|"),
  "gi",
);

/** Is this sentence worth remembering (not small talk)? */
function informative(sentence: string): boolean {
  const words = terms(sentence.replace(/’/g, "'").replace(PHATIC, " "));
  const names = new Set((sentence.match(/(?<=\S\s+)\p{Lu}\p{Ll}+/gu) ?? []).map((w) => w.toLowerCase()));
  const content = words.filter((w) => !SMALL_TALK.has(w) && !names.has(w));
  // A question asks; it states nothing to remember (the answer, in the next turn, is the fact).
  if (content.length === 0 || /\?["')\]]*$/.test(sentence.trim())) return false;
  return words.length >= 2;
}

/** Past tenses and modals that take no third-person "s" ("I went" → "Ana went", "I live" → "Ana lives"). */
const NO_S = new Set(
  "was were did had could would should might must can will shall may went got made saw took came gave told said thought found felt knew left met ran bought brought kept began became held heard paid sent sat stood spent taught wrote won lost read put set let cut hit hurt quit ate drove flew grew threw wore chose broke spoke fell forgot understood used also really still just never always usually often even only already".split(" "),
);
const ADVERBS = /^(?:no longer|also|really|still|just|never|always|usually|often|even|only|already|actually|totally|recently|finally) /;

/** "Ana live in Porto" → "Ana lives in Porto": the present tense after a resolved "I" takes its "s". */
function conjugate(rest: string): string {
  const adverb = ADVERBS.exec(rest)?.[0] ?? "";
  const after = rest.slice(adverb.length);
  const m = /^([a-z]+)\b/.exec(after);
  if (!m) return rest;
  const verb = m[1]!;
  if (NO_S.has(verb) || /(?:ed|ing|s)$/.test(verb) || verb.length < 2) return rest;
  const third = verb === "have" ? "has" : verb === "do" ? "does" : verb === "go" ? "goes" : /(?:sh|ch|x|z|o)$/.test(verb) ? `${verb}es` : /[^aeiou]y$/.test(verb) ? `${verb.slice(0, -1)}ies` : `${verb}s`;
  return `${adverb}${third}${after.slice(verb.length)}`;
}

/** "you"/"your" of a question resolved to the one it asks (`listener`), its first person to the asker. */
function resolvePersons(question: string, asker: string, listener: string): string {
  const second = question
    .replace(/’/g, "'")
    .replace(/\b(have|are|were|do)\s+you\b/gi, (_, verb: string) => `${{ have: "has", are: "is", were: "was", do: "does" }[verb.toLowerCase() as "have"]} you`)
    .replace(/\b[Yy]ours\b/g, `${listener}'s`)
    .replace(/\b[Yy]our\b/g, `${listener}'s`)
    .replace(/\b[Yy]ou\b/g, listener);
  return resolveFirstPerson(second, asker);
}

/**
 * The question a turn answers, as context for its first fact: the last sentence of the turn before,
 * by another speaker, when it asks something with content ("How long have you been painting?",
 * not "How are you?"). Its persons are resolved and its question mark dropped, so the fact reads
 * as one statement and still quotes no sentence of the question's own turn (the fact's turn is
 * the answer's).
 */
function askedBefore(previous: { speaker: string; body: string } | null, speaker: string): string | null {
  if (!previous || previous.speaker === speaker) return null;
  const last = splitSentences(previous.body, { code: "skip" }).at(-1)?.trim() ?? "";
  if (!/\?["')\]]*$/.test(last)) return null;
  const words = terms(last).filter((w) => !SMALL_TALK.has(w));
  if (words.length < 2) return null;
  return resolvePersons(last, previous.speaker, speaker).replace(/[?"')\]\s]+$/, "");
}

/**
 * Facts of a conversation, or null when the text has no "Speaker: text" turns. The first fact of a
 * turn that answers the question before it carries that question ("Seven years now." after "How
 * long have you been practicing art?" → "Seven years now (asked: how long has Melanie been
 * practicing art)"), as a model would write the answer as a statement about the question.
 */
export function conversationFacts(content: string): ConversationFact[] | null {
  const { turns } = conversationTurns(content);
  if (turns.length === 0) return null;
  const out: ConversationFact[] = [];
  let previous: { speaker: string; body: string } | null = null;
  let lastUser: string | null = null;
  turns.forEach((turn, i) => {
    const m = /^([^:\n]{1,60}):\s+([\s\S]*)$/.exec(turn);
    if (!m) {
      previous = null;
      return;
    }
    const speaker = speakerName(m[1]!);
    const body = m[2]!.replace(/\s+/g, " ").trim();
    if (isAssistantSpeaker(speaker)) {
      // Only what the assistant confirms of the user's own facts ("You told me the key is under the
      // frog") is kept, as the user's; its small talk, advice and acknowledgements are not facts.
      const user = lastUser ?? "user";
      for (const sentence of splitSentences(body, { code: "skip" })) {
        const said = sentence.replace(/\s+/g, " ").trim().replace(/[’]/g, "'");
        if (!CONFIRMS.test(said)) continue;
        const fact = said
          .replace(CONFIRMS, `${user} said`)
          .replace(/\b(?:you are|you're)\b/gi, `${user} is`)
          .replace(/\b(?:you have|you've)\b/gi, `${user} has`)
          .replace(/\byours\b/gi, `${user}'s`)
          .replace(/\byour\b/gi, `${user}'s`)
          .replace(/\byou\b/gi, user);
        out.push({ fact: fact.charAt(0).toUpperCase() + fact.slice(1), speaker: user, turn: i + 1 });
      }
      previous = { speaker, body };
      return;
    }
    lastUser = speaker;
    let asked = askedBefore(previous, speaker);
    for (const sentence of splitSentences(body, { code: "skip" })) {
      const whole = sentence.replace(/\s+/g, " ").trim();
      // A sentence that states one change of state as a whole ("I used to have a dog named Rex, but
      // he died", "I left Adatum and joined Contoso") stays one fact: its clauses alone say less.
      const wholeState = parseState(whole, speaker);
      const split = splitCompound(whole);
      const keepWhole =
        wholeState?.slot &&
        (wholeState.old || wholeState.polarity === "ended" || /\b(?:used to|no longer|but)\b/i.test(whole) || !split.some((c) => parseState(c, speaker)?.value === wholeState.value));
      const clauses = keepWhole ? [whole] : split;
      for (const said of clauses) {
        // A change of state is a fact however short or phrased as a question ("I'm keto now.",
        // "Guess who's the newest hire at Vandelay?"); its lead-in ("Big news:") is not.
        const state = parseState(said, speaker);
        if (!state && !informative(said)) continue;
        const stripped = state ? said.replace(LEAD_IN, "") : said;
        const clause = stripped ? stripped.charAt(0).toUpperCase() + stripped.slice(1) : said;
        let fact = resolveFirstPerson(clause, speaker);
        if (asked) {
          fact = `${fact.replace(/[.!]+$/, "")} (asked: ${asked.charAt(0).toLowerCase()}${asked.slice(1)}).`;
          asked = null;
        }
        out.push({ fact, speaker, turn: i + 1, ...(state ? { state } : {}) });
      }
    }
    previous = { speaker, body };
  });
  return out;
}
