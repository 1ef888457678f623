/**
 * The names a question holds, for graph retrieval: its tokens (possessives stripped), its word
 * n-grams to look entity names up by, the longest entity name or alias matched at each position,
 * capitalised words that look like names but matched no entity, and whether it asks about time.
 */

/** Longest entity name, in words, looked up in a question. */
const MAX_NAME_WORDS = 5;

/** Words that start a question or a sentence capitalized without being names. */
const NOT_NAMES = new Set(
  (
    "i i'm a an the what when where who whom whose which why how did do does is are was were has have had will would could should can may might " +
    "tell give show list describe name please remind summarize explain find let if and or but in on at of for to from with about after before since during " +
    "january february march april june july august september october november december monday tuesday wednesday thursday friday saturday sunday " +
    "yes no ok okay hi hello dear mr mrs ms dr"
  ).split(" "),
);

export interface QuestionToken {
  /** Normalized: lower case, alphanumerics only. */
  norm: string;
  /** As written (for names). */
  text: string;
  capitalized: boolean;
}

/** Possessives stripped ("Alice's", "James'"), split on anything but letters and digits. */
export function questionTokens(question: string): QuestionToken[] {
  const text = question.replace(/([\p{L}\p{N}])['’]s\b/gu, "$1").replace(/(s)['’](?=\s|$|[^\p{L}\p{N}])/gu, "$1");
  return (text.match(/[\p{L}\p{N}]+/gu) ?? []).map((t) => ({ norm: t.toLowerCase(), text: t, capitalized: /^\p{Lu}/u.test(t) }));
}

/** A name in the form SQL compares it in: lower case, runs of non-alphanumerics as one space. */
export function normalizeName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** The question's word n-grams (1 to MAX_NAME_WORDS words), normalized: what entity names are looked up by. */
export function questionPhrases(tokens: QuestionToken[]): string[] {
  const out = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    for (let n = 1; n <= MAX_NAME_WORDS && i + n <= tokens.length; n++) {
      out.add(
        tokens
          .slice(i, i + n)
          .map((t) => t.norm)
          .join(" "),
      );
    }
  }
  return [...out];
}

export interface EntityMatch<E> {
  entity: E;
  matched: string;
  start: number;
  end: number;
}

/**
 * The entities the question names: at each position the longest surface form (name or alias)
 * that matches there wins, left to right; entities sharing that surface (one per scope) all match.
 */
export function matchEntities<E extends { name: string; aliases: string[] }>(tokens: QuestionToken[], entities: E[]): Array<EntityMatch<E>> {
  const bySurface = new Map<string, E[]>();
  for (const e of entities) {
    for (const surface of [e.name, ...e.aliases]) {
      const key = normalizeName(surface);
      if (!key || key.split(" ").length > MAX_NAME_WORDS) continue;
      const list = bySurface.get(key) ?? [];
      if (!list.includes(e)) list.push(e);
      bySurface.set(key, list);
    }
  }
  const out: Array<EntityMatch<E>> = [];
  for (let i = 0; i < tokens.length; ) {
    let hit: { key: string; n: number } | null = null;
    for (let n = Math.min(MAX_NAME_WORDS, tokens.length - i); n >= 1 && !hit; n--) {
      const key = tokens
        .slice(i, i + n)
        .map((t) => t.norm)
        .join(" ");
      if (bySurface.has(key)) hit = { key, n };
    }
    if (!hit) {
      i++;
      continue;
    }
    for (const entity of bySurface.get(hit.key)!) out.push({ entity, matched: hit.key, start: i, end: i + hit.n });
    i += hit.n;
  }
  return out;
}

/**
 * Capitalized words of the question outside `taken` spans that look like names (not question
 * words, months or days), runs of them joined ("New York").
 */
export function nameCandidates(tokens: QuestionToken[], taken: Array<{ start: number; end: number }> = []): string[] {
  const inTaken = (i: number) => taken.some((s) => i >= s.start && i < s.end);
  const names: string[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length) names.push(run.join(" "));
    run = [];
  };
  tokens.forEach((t, i) => {
    const name = t.capitalized && !inTaken(i) && !NOT_NAMES.has(t.norm) && !/^\p{N}+$/u.test(t.text) && t.text.length > 1;
    if (name) run.push(t.text);
    else flush();
  });
  flush();
  return [...new Set(names)];
}

const TEMPORAL = /\b(when|before|after|since|until|used to|anymore|no longer|still|chang\w*|previous\w*|earlier|former\w*|ago|first|last|history|over time)\b/i;

export function isTemporalQuestion(question: string): boolean {
  return TEMPORAL.test(question);
}
