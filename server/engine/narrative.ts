/**
 * Synapse's narrative entities, extracted with no model: what a conversation says about how its
 * speakers feel (MentalState: mood, energy level), what they struggle with (Tension: description,
 * open or resolved) and where they are (Environment: location type, vibe). Deterministic and
 * extractive: first-person sentences matched against small lexicons, each finding keeps the
 * sentence it came from as evidence. A model step (prompt + structured `output`) does the same
 * job with understanding; this operator is the offline path and the baseline to beat.
 */
import { splitSentences } from "../text/text-rank";
import { conversationTurns, TURN_LABEL } from "./turns";

export interface MentalState {
  who: string;
  mood: string[];
  energy_level: "high" | "medium" | "low";
  evidence: string;
}
export interface Tension {
  who: string;
  description: string;
  status: "open" | "resolved";
}
export interface Environment {
  who: string;
  location_type: string;
  vibe: string;
  evidence: string;
}
export interface Narrative {
  mental_state: MentalState[];
  tensions: Tension[];
  environment: Environment[];
}

/** At most this many findings of each kind per record (the first ones, in conversation order). */
const MAX_PER_KIND = 6;
const MAX_EVIDENCE_CHARS = 240;

const HIGH_ENERGY = ["excited", "thrilled", "energized", "motivated", "pumped", "inspired", "ecstatic", "eager", "enthusiastic"];
const LOW_ENERGY = ["tired", "exhausted", "drained", "sleepy", "burned out", "burnt out", "overwhelmed", "sick", "worn out"];
const MOODS = [
  ...HIGH_ENERGY,
  ...LOW_ENERGY,
  "happy", "glad", "proud", "grateful", "thankful", "relieved", "calm", "content", "hopeful", "joyful", "optimistic", "confident",
  "peaceful", "loved", "blessed", "sad", "upset", "angry", "frustrated", "annoyed", "stressed", "anxious", "nervous", "worried",
  "scared", "afraid", "lonely", "depressed", "bored", "confused", "disappointed", "hurt", "heartbroken", "grieving", "curious",
];
const TENSION_CUES = [
  "struggl", "stuck", "problem", "issue", "worried about", "can't", "cannot", "hard to", "hard time", "difficult", "challeng",
  "conflict", "deadline", "behind on", "failing", "failed", "broke", "bug", "error", "figure out", "dealing with", "trouble",
  "not sure how", "don't know how", "pressure", "overwhelm", "tough",
];
/** A problem the speaker got past: a tension in itself, resolved. */
const SOLVED_CUES = ["solved", "fixed", "resolved", "worked out", "figured out", "overcame", "got through", "sorted out"];
const RESOLVED_CUES = ["finally", "managed to", ...SOLVED_CUES];
const PLACES: Array<[string, string[]]> = [
  ["home", ["at home", "my house", "my apartment", "my place", "my room", "our house", "my flat", "my kitchen", "my garden"]],
  ["work", ["office", "at work", "workplace", "my desk", "the studio", "my shop"]],
  ["outdoors", ["park", "beach", "mountain", "hike", "hiking", "forest", "lake", "camping", "outdoors", "trail", "outside"]],
  ["travel", ["trip", "airport", "hotel", "flight", "abroad", "vacation", "traveling", "travelling", "road trip"]],
  ["school", ["school", "campus", "class", "university", "college", "library", "lecture"]],
  ["venue", ["cafe", "café", "coffee shop", "restaurant", "bar", "concert", "museum", "festival", "party", "gallery"]],
  ["gym", ["gym", "yoga studio", "pool"]],
  ["care", ["hospital", "clinic", "doctor's office", "therapist"]],
];
const VIBES = ["cozy", "quiet", "busy", "noisy", "calm", "peaceful", "relaxing", "beautiful", "crowded", "chaotic", "hectic", "serene", "lively", "stressful", "fun", "loud", "gorgeous", "cold", "sunny", "rainy"];

const FIRST_PERSON = /\b(i|i'm|i've|i'd|i'll|im|me|my|myself|we|we're|we've|our|us)\b/i;

function phraseRegex(phrases: readonly string[], prefixOnly = false): RegExp {
  const alternatives = phrases.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/'/g, "['’]"));
  return new RegExp(`\\b(${alternatives.join("|")})${prefixOnly ? "" : "\\b"}`, "gi");
}
const MOOD_RE = phraseRegex(MOODS);
const TENSION_RE = phraseRegex(TENSION_CUES, true);
const RESOLVED_RE = phraseRegex(RESOLVED_CUES);
const SOLVED_RE = phraseRegex(SOLVED_CUES);
const PLACE_RES = PLACES.map(([type, phrases]) => [type, phraseRegex(phrases)] as const);
const VIBE_RE = phraseRegex(VIBES);

const matches = (re: RegExp, text: string) => [...new Set([...text.matchAll(re)].map((m) => m[1]!.toLowerCase().replace(/’/g, "'")))];
const clip = (s: string) => {
  const text = s.replace(/\s+/g, " ").trim();
  return text.length <= MAX_EVIDENCE_CHARS ? text : `${text.slice(0, MAX_EVIDENCE_CHARS - 1)}…`;
};

function energyOf(moods: readonly string[]): MentalState["energy_level"] {
  if (moods.some((m) => LOW_ENERGY.includes(m))) return "low";
  if (moods.some((m) => HIGH_ENERGY.includes(m))) return "high";
  return "medium";
}

/** Each turn's speaker ("Caroline", "user") and sentences; text without turns is one unnamed speaker. */
function speakerSentences(content: string): Array<{ who: string; sentence: string }> {
  const { turns } = conversationTurns(content);
  const parts = turns.length ? turns : [content];
  const out: Array<{ who: string; sentence: string }> = [];
  for (const turn of parts) {
    const label = turns.length ? TURN_LABEL.exec(turn) : null;
    const who = label ? label[1]!.trim() : "";
    const body = label ? turn.slice(label[0].length) : turn;
    for (const sentence of splitSentences(body)) out.push({ who, sentence });
  }
  return out;
}

export function extractNarrative(content: string): Narrative {
  const narrative: Narrative = { mental_state: [], tensions: [], environment: [] };
  for (const { who, sentence } of speakerSentences(content)) {
    if (!FIRST_PERSON.test(sentence)) continue;
    const moods = matches(MOOD_RE, sentence);
    if (moods.length && narrative.mental_state.length < MAX_PER_KIND) {
      narrative.mental_state.push({ who, mood: moods, energy_level: energyOf(moods), evidence: clip(sentence) });
    }
    if ((matches(TENSION_RE, sentence).length || matches(SOLVED_RE, sentence).length) && narrative.tensions.length < MAX_PER_KIND) {
      narrative.tensions.push({ who, description: clip(sentence), status: matches(RESOLVED_RE, sentence).length ? "resolved" : "open" });
    }
    const place = PLACE_RES.find(([, re]) => {
      re.lastIndex = 0;
      return re.test(sentence);
    });
    if (place && narrative.environment.length < MAX_PER_KIND) {
      narrative.environment.push({ who, location_type: place[0], vibe: matches(VIBE_RE, sentence).join(", "), evidence: clip(sentence) });
    }
  }
  return narrative;
}

/** The narrative as text a person (and full-text search) reads: one line per finding. */
export function narrativeText(n: Narrative): string {
  const name = (who: string) => (who ? `${who}: ` : "");
  const lines = [
    ...n.mental_state.map((m) => `Mental state — ${name(m.who)}${m.mood.join(", ")} (energy ${m.energy_level}). "${m.evidence}"`),
    ...n.tensions.map((t) => `Tension (${t.status}) — ${name(t.who)}${t.description}`),
    ...n.environment.map((e) => `Environment — ${name(e.who)}${e.location_type}${e.vibe ? `, ${e.vibe}` : ""}. "${e.evidence}"`),
  ];
  return lines.length ? lines.join("\n") : "No mental state, tension or environment mentioned.";
}
