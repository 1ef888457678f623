/**
 * SynthexBench (the seed's §9.3): a synthetic multi-month chat history, deterministic from a seed,
 * with questions designed around altitude and provenance:
 * - `planted` (leaf bypass): a verbatim detail said once in one conversation among filler — the
 *   kind of wording a summary abstracts away; expected at the leaf (transcript) altitude.
 * - `freshness`: a fact that changes over time (where the user lives, their manager…); the later
 *   value must win over the stale one; expected at summary altitude.
 * - `emergent`: a trend that exists only across months (a hobby mentioned more and more often);
 *   no single conversation states it; answerable at monthly altitude, traced to several sessions.
 * - `temporal`: when something happened (the conversation's date).
 * One sample per simulated user (scope `synthexbench:user-<n>`); sizes from tiny (tests) to large (bench).
 */
import type { Dataset, LoadResult, Question, Sample, Session } from "./types";
import { MONTH_NAMES } from "../text/months";
import { seededRandom } from "./bootstrap";

export const SYNTHEXBENCH_SIZES = {
  tiny: { users: 1, months: 3, perMonth: 4 },
  small: { users: 2, months: 6, perMonth: 6 },
  medium: { users: 4, months: 12, perMonth: 10 },
  large: { users: 10, months: 12, perMonth: 30 },
} as const;
export type SynthexBenchSize = keyof typeof SYNTHEXBENCH_SIZES;

const NAMES = ["Avery", "Blake", "Casey", "Devon", "Emery", "Finley", "Harper", "Jordan", "Kai", "Logan", "Morgan", "Quinn"];
const FILLER_TOPICS = [
  ["recipes", "I tried a new lentil soup recipe with cumin and lemon.", "Lentils with cumin are a classic; lemon brightens them."],
  ["weather", "It rained all week and the garden is soaked.", "Rainy weeks are good for the soil at least."],
  ["movies", "We watched an old detective film on Saturday night.", "Classic detective films age surprisingly well."],
  ["commute", "The train was late again this morning.", "Late trains are frustrating; maybe leave a bit earlier."],
  ["fitness", "I did a short run around the park before work.", "Short morning runs are a great habit."],
  ["books", "I started a thick novel about a lighthouse family.", "Long family sagas reward patience."],
  ["work", "The quarterly planning meeting ran over time.", "Planning meetings often do; a tight agenda helps."],
  ["shopping", "I need new shoes before the winter starts.", "Waterproof shoes are worth it for winter."],
] as const;
const PLANTED = [
  ["Where is the spare house key hidden?", "the spare house key is under the green ceramic owl", "under the green ceramic owl"],
  ["What is the code of the gym locker?", "my gym locker code is 4719", "4719"],
  ["What is the wifi password at the cabin?", "the cabin wifi password is heron-lantern-88", "heron-lantern-88"],
  ["What did the vet say the cat is allergic to?", "the vet said our cat is allergic to salmon skin", "salmon skin"],
  ["Which seat did the user book for the opera?", "I booked seat K14 in the balcony for the opera", "K14"],
  ["What colour is the new bicycle?", "I bought a mustard yellow bicycle with a wicker basket", "mustard yellow"],
] as const;
const FRESH = [
  { question: "Which city does the user live in now?", say: (v: string) => `We live in ${v} these days.`, values: ["Porto", "Lisbon", "Valencia", "Lyon"] },
  { question: "Who is the user's manager now?", say: (v: string) => `My manager is ${v} now.`, values: ["Priya", "Tomasz", "Ingrid", "Mateo"] },
  { question: "Which programming language does the user's team use now?", say: (v: string) => `Our team writes everything in ${v} now.`, values: ["Python", "Kotlin", "Go", "Elixir"] },
] as const;
const TRENDS = [
  ["pottery", "I spent the evening at the pottery wheel again.", "How is the pottery going?"],
  ["birdwatching", "I saw a kingfisher on my birdwatching walk.", "Birdwatching sounds peaceful."],
  ["chess", "I played three online chess games tonight.", "Chess is a great way to unwind."],
] as const;

/** Generates the benchmark; the same seed and size always give the same dataset. */
export function generateSynthexBench(options: { seed?: number; size?: SynthexBenchSize | string } = {}): LoadResult {
  const seed = options.seed ?? 1;
  const sizeName = (options.size ?? "small") as SynthexBenchSize;
  const size = SYNTHEXBENCH_SIZES[sizeName];
  if (!size) throw new Error(`Unknown SynthexBench size "${options.size}": use ${Object.keys(SYNTHEXBENCH_SIZES).join(", ")}.`);
  const rand = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const samples: Sample[] = [];
  const questions: Question[] = [];
  for (let u = 0; u < size.users; u++) {
    const sampleId = `user-${u + 1}`;
    const name = NAMES[(u + seed) % NAMES.length]!;
    const sessions: Session[] = [];
    const total = size.months * size.perMonth;
    // Where the planted facts, value changes and trend mentions go.
    const planted = PLANTED.slice(0, Math.min(PLANTED.length, 2 + Math.floor(total / 20))).map((p) => ({ p, at: Math.floor(rand() * total) }));
    const fresh = FRESH.map((f) => {
      const values = [...f.values].sort(() => rand() - 0.5).slice(0, 2);
      const first = Math.floor(rand() * Math.max(1, Math.floor(total / 3)));
      const later = Math.min(total - 1, Math.floor(total / 2) + Math.floor(rand() * Math.max(1, Math.floor(total / 2))));
      return { f, values, first, later };
    });
    const trend = TRENDS[(u + seed) % TRENDS.length]!;
    for (let c = 0; c < total; c++) {
      const month = Math.floor(c / size.perMonth);
      const year = 2024 + Math.floor(month / 12);
      const day = 1 + Math.floor(((c % size.perMonth) * 27) / size.perMonth);
      const time = new Date(Date.UTC(year, month % 12, day, 9 + (c % 8), 0)).toISOString();
      const sid = String(c + 1);
      const lines: Array<[string, string]> = [];
      const say = (speaker: string, text: string) => lines.push([speaker, text]);
      const filler = pick(FILLER_TOPICS);
      say(name, filler[1]);
      say("Assistant", filler[2]);
      for (const { p, at } of planted) if (at === c) say(name, `By the way, ${p[1]}, so I do not forget.`);
      for (const fr of fresh) {
        if (fr.first === c) say(name, fr.f.say(fr.values[0]!));
        if (fr.later === c && fr.later !== fr.first) say(name, `Big change: ${fr.f.say(fr.values[1]!).charAt(0).toLowerCase()}${fr.f.say(fr.values[1]!).slice(1)}`);
      }
      // The trend: never in month 0, then in a growing share of each month's conversations.
      const share = month === 0 ? 0 : Math.min(0.9, (month / size.months) * 1.2);
      if (rand() < share) {
        say(name, trend[1]);
        say("Assistant", trend[2]);
      }
      const second = pick(FILLER_TOPICS);
      say(name, second[1]);
      say("Assistant", second[2]);
      sessions.push({
        id: sid,
        time,
        dateLabel: `${day} ${MONTH_NAMES[month % 12]} ${year}`,
        turns: lines.map(([speaker, text], t) => ({ id: `C${sid}:${t + 1}`, speaker, text })),
      });
    }
    samples.push({ id: sampleId, speakers: [name, "Assistant"], sessions });
    const turnsWith = (needle: string) => sessions.flatMap((s) => s.turns.filter((t) => t.text.includes(needle)).map((t) => ({ s: s.id, t: t.id })));
    let q = 0;
    const add = (question: Omit<Question, "id" | "sample" | "apart" | "evidenceSessions"> & { evidenceSessions?: string[] }) => {
      if (!question.evidence.length) return;
      questions.push({ id: `${sampleId}:q${++q}`, sample: sampleId, apart: false, evidenceSessions: question.evidenceSessions ?? [...new Set(question.evidence.map((e) => e.slice(1).split(":")[0]!))], ...question });
    };
    for (const { p } of planted) {
      add({ question: p[0], answer: p[2], category: "planted", altitude: "leaf", evidence: turnsWith(p[1]).map((x) => x.t) });
      const where = turnsWith(p[1])[0];
      if (where) {
        const s = sessions.find((x) => x.id === where.s)!;
        add({ question: `When did ${name} mention that ${p[1].replace(/^my |^I /, "their ")}?`, answer: s.dateLabel, category: "temporal", altitude: "summary", evidence: [where.t] });
      }
    }
    for (const fr of fresh) {
      if (fr.later === fr.first) continue;
      add({ question: fr.f.question, answer: fr.values[1]!, stale: fr.values[0]!, category: "freshness", altitude: "summary", evidence: turnsWith(fr.f.say(fr.values[1]!).slice(1)).map((x) => x.t) });
    }
    const trendTurns = turnsWith(trend[1]);
    add({ question: `Which hobby did ${name} take up more and more over the months?`, answer: trend[0], category: "emergent", altitude: "monthly", evidence: trendTurns.map((x) => x.t) });
  }
  const dataset: Dataset = { benchmark: "synthexbench", name: `synthexbench-${sizeName}-seed${seed}`, samples, questions };
  return { dataset, skips: [] };
}
