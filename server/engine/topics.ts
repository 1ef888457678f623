/**
 * Topic classification with no model (Pyramid's mental models, offline): the label whose keywords
 * share the most stemmed terms with the text, ties to the earlier label, `fallback` when none
 * match. Deterministic, so an aggregate by `custom.topic` groups the same way on every run.
 */
import { stemmer } from "stemmer";

/**
 * Life areas most conversations touch, each with everyday vocabulary of that area; a step can name
 * its own (`topics` on the operator). The lists are general on purpose: common words of each area,
 * of similar length, never the themes or wording of a benchmark conversation (an offline operator
 * tuned to one data set scores that data set, not memory). A word belongs to one area only.
 */
export const DEFAULT_TOPICS: Readonly<Record<string, readonly string[]>> = {
  work: ["job", "work", "career", "office", "boss", "colleague", "coworker", "company", "salary", "interview", "meeting", "client", "promotion", "business", "manager", "project", "deadline", "shift", "hire", "employer"],
  family: ["family", "kid", "child", "children", "son", "daughter", "mom", "dad", "mother", "father", "sister", "brother", "wife", "husband", "parent", "grandmother", "grandfather", "baby", "cousin", "relative"],
  relationships: ["friend", "friendship", "partner", "date", "dating", "boyfriend", "girlfriend", "relationship", "marriage", "wedding", "neighbor", "neighbour", "breakup", "love", "romance", "couple", "engagement", "anniversary", "roommate", "acquaintance"],
  health: ["health", "doctor", "sick", "ill", "illness", "gym", "exercise", "workout", "diet", "sleep", "therapy", "therapist", "hospital", "medicine", "injury", "pain", "nurse", "fitness", "stress", "mental"],
  hobbies: ["hobby", "music", "paint", "painting", "book", "read", "reading", "game", "sport", "art", "craft", "draw", "drawing", "photography", "cook", "cooking", "garden", "gardening", "dance", "movie"],
  travel: ["trip", "travel", "flight", "vacation", "holiday", "beach", "visit", "city", "country", "abroad", "hotel", "tour", "journey", "airport", "passport", "luggage", "sightseeing", "destination", "train", "cruise"],
  technology: ["code", "coding", "python", "javascript", "api", "server", "database", "app", "software", "bug", "deploy", "computer", "program", "model", "data", "phone", "internet", "website", "laptop", "device"],
  learning: ["learn", "study", "class", "course", "school", "university", "college", "degree", "exam", "research", "teacher", "student", "education", "lesson", "homework", "lecture", "semester", "graduate", "tutor", "scholarship"],
  beliefs: ["belief", "faith", "religion", "church", "prayer", "god", "spiritual", "value", "culture", "tradition", "heritage", "identity", "politics", "vote", "cause", "volunteer", "charity", "activism", "principle", "ethics"],
};
export const DEFAULT_TOPIC_FALLBACK = "general";

const WORD = /[a-z0-9]+/g;

function stems(text: string): Set<string> {
  return new Set((text.toLowerCase().match(WORD) ?? []).map((w) => stemmer(w)));
}

const compiled = new WeakMap<object, Array<[string, Set<string>]>>();

function compile(topics: Readonly<Record<string, readonly string[]>>): Array<[string, Set<string>]> {
  let hit = compiled.get(topics);
  if (!hit) {
    hit = Object.entries(topics).map(([label, words]) => [label, new Set([label, ...words].flatMap((w) => [...stems(w)]))]);
    compiled.set(topics, hit);
  }
  return hit;
}

export function classifyTopic(text: string, topics: Readonly<Record<string, readonly string[]>> = DEFAULT_TOPICS, fallback = DEFAULT_TOPIC_FALLBACK): string {
  const words = stems(text);
  let best = fallback;
  let bestScore = 0;
  for (const [label, keys] of compile(topics)) {
    let score = 0;
    for (const k of keys) if (words.has(k)) score += 1;
    if (score > bestScore) {
      best = label;
      bestScore = score;
    }
  }
  return best;
}
