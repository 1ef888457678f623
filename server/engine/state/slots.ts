/**
 * The slot vocabulary of change of state (DESIGN §8 "Change of state in memory"): the typed
 * attributes a person has one value of at a time, the words that name them (synonyms), how a
 * memory of each is written, and the discourse around a statement that carries no meaning
 * (lead-ins). Data only: the offline parser (state/parse.ts), the consolidate rule and the
 * model's structured output all read it. Add a slot here and every part of the pipeline knows it.
 */

export const SLOT_NAMES = ["residence", "employer", "role", "partner", "pet", "hobby", "diet", "device"] as const;
export type SlotName = (typeof SLOT_NAMES)[number];

export interface SlotDef {
  /** What the memory of a value says ("Ana lives in Porto"); `detail` is the pet's species and the like. */
  canonical: (subject: string, value: string, detail?: string) => string;
  /** What a memory says when the value ended (kept by add-only memory beside the value it ends). */
  ended: (subject: string, value: string | null) => string;
  /** Words of a question (or a fact) that ask about this slot. */
  synonyms: string[];
  /** A household fact told with "we" is the speaker's ("we moved to Porto" → the user moved). */
  household: boolean;
}

export const SLOTS: Record<SlotName, SlotDef> = {
  residence: {
    canonical: (s, v) => `${s} lives in ${v}`,
    ended: (s, v) => `${s} no longer lives in ${v ?? "the same city"}`,
    synonyms: ["live", "lives", "living", "city", "address", "home", "apartment", "flat", "based", "reside", "relocated", "moved", "place"],
    household: true,
  },
  employer: {
    canonical: (s, v) => `${s} works for ${v}`,
    ended: (s, v) => `${s} no longer works for ${v ?? "the same company"}`,
    synonyms: ["company", "employer", "work for", "works for", "works at", "job at", "hired", "hire", "joined"],
    household: false,
  },
  role: {
    canonical: (s, v) => `${s}'s job title is ${v}`,
    ended: (s, v) => `${s}'s job title is no longer ${v ?? "the same"}`,
    synonyms: ["job title", "title", "role", "position", "promoted", "works as"],
    household: false,
  },
  partner: {
    canonical: (s, v) => `${s}'s partner is ${v}`,
    ended: (s, v) => `${s} no longer has a partner${v ? ` (${s} is no longer with ${v})` : ""}`,
    synonyms: ["partner", "boyfriend", "girlfriend", "husband", "wife", "spouse", "fiancé", "fiancée", "dating", "married", "seeing"],
    household: false,
  },
  pet: {
    canonical: (s, v, kind) => `${s}'s pet is a ${kind ?? "pet"} named ${v}`,
    ended: (s, v) => `${s} no longer has a pet${v ? ` (${v} is gone)` : ""}`,
    synonyms: ["pet", "dog", "cat", "puppy", "kitten", "rabbit", "parrot", "hamster", "beagle", "bird", "fish", "turtle", "horse"],
    household: true,
  },
  hobby: {
    canonical: (s, v) => `${s}'s hobby is ${v}`,
    ended: (s, v) => `${s} no longer has the hobby ${v ?? ""}`.trim(),
    synonyms: ["hobby", "hobbies", "into", "pastime", "free time", "unwind"],
    household: false,
  },
  diet: {
    canonical: (s, v) => `${s}'s diet is ${v}`,
    ended: (s, v) => `${s}'s diet is no longer ${v ?? "the same"}`,
    synonyms: ["diet", "eat", "eats", "food"],
    household: true,
  },
  device: {
    canonical: (s, v) => `${s}'s phone is a ${v}`,
    ended: (s, v) => `${s} no longer uses the phone ${v ?? ""}`.trim(),
    synonyms: ["phone", "smartphone", "mobile", "device"],
    household: false,
  },
};

/** Pet species (a pet's value is its name; the species is its detail). */
export const PET_KINDS = SLOTS.pet.synonyms.filter((w) => w !== "pet");

/** Diets named by an adjective ("I'm keto now"). */
export const DIETS = ["vegan", "vegetarian", "pescatarian", "keto", "gluten-free", "paleo", "low-carb", "dairy-free", "flexitarian", "carnivore", "halal", "kosher"];

/**
 * Words before the statement that carry no fact: news markers, discourse markers, interjections
 * ("Big news: …", "Quick update — …", "So, …", "Guess what? …"), stripped before parsing.
 */
export const LEAD_IN = /^(?:(?:(?:big|some|quick|small|little|sad|good|great|exciting|happy|fun|bad|personal|life|huge)\s+)*(?:news|update|announcement)(?:,\s*\w+\s+kind)?\s*(?:[:—–-]+|!)\s*|(?:guess what|fyi|btw|by the way|anyway|well|so|okay|ok|also|oh|honestly|update|heads up)\b[?!:,—–-]*\s+|[A-Za-z]+ly,\s+|(?:sadly|finally|luckily|unfortunately|happily|thankfully)\s+)+/i;

/** Words that say a statement holds now (and what came before does not). */
export const NOW_WORDS = /\b(?:now|these days|nowadays|currently|at the moment|lately|from now on|as of|starting|any more|anymore|no longer|still|today)\b/i;

/** Slots a person may hold several values of at once (two pets, two hobbies): a new value replaces the old one only when the fact says so ("now", "instead", "swapped", "new hobby"). */
export const MULTI_VALUED = new Set<SlotName>(["pet", "hobby"]);

/** Phone brands and models (a device is named by its brand). */
export const DEVICE_BRANDS = ["iPhone", "Pixel", "Galaxy", "Fairphone", "OnePlus", "Xperia", "Moto", "Motorola", "Nothing Phone", "Nokia", "Huawei", "Xiaomi", "Redmi", "Oppo", "BlackBerry"];

/** Nouns a job title ends with ("data analyst", "head of marketing" is matched by its head). */
export const ROLE_NOUNS = [
  "analyst", "manager", "designer", "engineer", "developer", "director", "practitioner", "scientist", "coordinator", "architect", "teacher", "nurse", "lead", "officer", "consultant",
  "accountant", "lawyer", "doctor", "researcher", "specialist", "administrator", "editor", "writer", "intern", "associate", "assistant", "executive", "president", "founder", "chef", "technician", "supervisor", "strategist", "marketing", "sales", "operations",
];
