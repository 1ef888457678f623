/**
 * Topic classification with no model (Pyramid's mental models, offline): the label whose keywords
 * share the most stemmed terms with the text, ties to the earlier label, `fallback` when none
 * match. Deterministic, so an aggregate by `custom.topic` groups the same way on every run.
 */
import { stemmer } from "stemmer";

/** Life areas most conversations touch; a step can name its own (`topics` on the operator). */
export const DEFAULT_TOPICS: Readonly<Record<string, readonly string[]>> = {
  work: ["job", "work", "career", "office", "boss", "colleague", "coworker", "company", "salary", "interview", "meeting", "client", "promotion", "business", "manager"],
  family: ["family", "kid", "child", "children", "son", "daughter", "mom", "dad", "mother", "father", "sister", "brother", "wife", "husband", "parent", "grandma", "grandpa", "baby", "adopt"],
  relationships: ["friend", "friendship", "partner", "date", "dating", "boyfriend", "girlfriend", "relationship", "marriage", "wedding", "community", "support"],
  health: ["health", "doctor", "sick", "ill", "gym", "exercise", "workout", "diet", "sleep", "therapy", "therapist", "hospital", "run", "running", "yoga", "stress", "mental"],
  hobbies: ["paint", "painting", "music", "guitar", "piano", "book", "read", "reading", "game", "hike", "camping", "art", "photography", "cook", "cooking", "bake", "garden", "dance", "pottery", "sing"],
  travel: ["trip", "travel", "flight", "vacation", "beach", "visit", "city", "country", "abroad", "hotel", "tour", "road"],
  technology: ["code", "coding", "python", "javascript", "api", "server", "database", "app", "software", "bug", "deploy", "computer", "program", "model", "data"],
  learning: ["learn", "study", "class", "course", "school", "university", "college", "degree", "exam", "research", "teacher", "student", "education"],
  identity: ["identity", "transgender", "gender", "lgbtq", "pride", "faith", "religion", "belief", "value", "culture", "heritage"],
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
