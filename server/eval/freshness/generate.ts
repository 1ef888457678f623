/**
 * The freshness benchmark's generator (issue 47): chat histories of many people whose residence,
 * employer, role, partner, pet, hobby, diet and phone change over months, told in everyday wording
 * (the phrasings are data: phrasings.json, written before any rule), with ended attributes, filler
 * and assistant turns that name values. Deterministic from a seed. One sample per person (scope
 * `freshness:person-<n>`), one question per person and attribute: what holds now.
 */
import { MONTH_NAMES } from "../../text/months";
import type { Sample, Session } from "../types";
import phrasings from "./phrasings.json";
import { seededRandom } from "../bootstrap";

export const FRESHNESS_SLOTS = ["residence", "employer", "role", "partner", "pet", "hobby", "diet", "device"] as const;
export type FreshnessSlot = (typeof FRESHNESS_SLOTS)[number];
const ENDABLE = new Set<FreshnessSlot>(["partner", "pet", "hobby"]);

export interface FreshnessQuestion {
  id: string;
  sample: string;
  slot: FreshnessSlot;
  question: string;
  /** The value that holds at the end (null: the attribute ended). */
  current: string | null;
  /** Values that held before and no longer do (the ended value included). */
  stale: string[];
  /** How many times the value changed or ended. */
  changes: number;
}

export interface FreshnessDataset {
  name: string;
  samples: Sample[];
  questions: FreshnessQuestion[];
}

const fill = (template: string, vars: Record<string, string>) => template.replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? `{${k}}`);
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

type Event = { month: number; user: string; assistant: string };

/** Generates the benchmark; the same options always give the same dataset. */
export function generateFreshness(options: { seed?: number; people?: number; months?: number } = {}): FreshnessDataset {
  const seed = options.seed ?? 1;
  const people = options.people ?? 40;
  const months = Math.max(4, options.months ?? 10);
  const rand = seededRandom(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  // Phrasings are used in turn (per kind, from a random start), so every phrasing is used.
  const cursors = new Map<string, number>();
  const phrase = (key: string, list: readonly string[]) => {
    const i = cursors.get(key) ?? Math.floor(rand() * list.length);
    cursors.set(key, i + 1);
    return list[i % list.length]!;
  };
  const values = phrasings.values as Record<string, string[]>;
  const samples: Sample[] = [];
  const questions: FreshnessQuestion[] = [];
  for (let p = 0; p < people; p++) {
    const sample = `person-${p + 1}`;
    const events: Event[] = [];
    const assistantNamed = (slot: FreshnessSlot, value: string) => {
      const named = phrasings.assistant.named;
      const byKind: Record<FreshnessSlot, number> = { employer: 0, residence: rand() < 0.5 ? 1 : 2, partner: 3, pet: 3, role: 4, hobby: 5, device: 6, diet: -1 };
      const i = byKind[slot];
      if (i < 0 || rand() < 0.4) return pick(phrasings.assistant.smalltalk);
      return capitalize(fill(named[i]!, { value }));
    };
    for (const slot of FRESHNESS_SLOTS) {
      const pool = [...values[slot]!];
      const draw = () => pool.splice(Math.floor(rand() * pool.length), 1)[0]!;
      const kind = () => pick(values.petKind!);
      let value = draw();
      let petKind = kind();
      const history = [value];
      const introMonth = rand() < 0.5 ? 0 : 1;
      events.push({ month: introMonth, user: capitalize(fill(phrase(`state.${slot}`, (phrasings.state as Record<string, string[]>)[slot]!), { value, kind: petKind })), assistant: assistantNamed(slot, value) });
      // What happens next: nothing, one or two changes, or (partner, pet, hobby) an end.
      const r = rand();
      const plan: Array<"change" | "end"> =
        slot === "pet"
          ? r < 0.2 ? [] : r < 0.55 ? ["end"] : ["end", "change"]
          : ENDABLE.has(slot)
            ? r < 0.15 ? [] : r < 0.4 ? ["end"] : r < 0.8 ? ["change"] : ["change", "change"]
            : r < 0.15 ? [] : r < 0.7 ? ["change"] : ["change", "change"];
      let month = introMonth;
      let ended = false;
      for (const step of plan) {
        month = Math.min(months - 1, month + 1 + Math.floor(rand() * Math.max(1, (months - month - 1) / plan.length)));
        if (step === "end") {
          events.push({ month, user: capitalize(fill(phrase(`end.${slot}`, (phrasings.end as Record<string, string[]>)[slot]!), { old: value, kind: petKind })), assistant: pick(phrasings.assistant.smalltalk) });
          ended = true;
        } else {
          const old = value;
          value = draw();
          const oldKind = petKind;
          if (slot === "pet") petKind = kind();
          events.push({ month, user: capitalize(fill(phrase(`change.${slot}`, (phrasings.change as Record<string, string[]>)[slot]!), { old, new: value, kind: petKind, oldKind })), assistant: assistantNamed(slot, value) });
          history.push(value);
          ended = false;
        }
      }
      const current = ended ? null : value;
      questions.push({
        id: `${sample}:${slot}`,
        sample,
        slot,
        question: (phrasings.questions as Record<string, string>)[slot]!,
        current,
        stale: history.filter((v) => v !== current),
        changes: plan.length,
      });
    }
    for (let m = 0; m < months; m++) {
      events.push({ month: m, user: pick(phrasings.filler), assistant: rand() < 0.5 ? pick(phrasings.assistant.advice) : pick(phrasings.assistant.smalltalk) });
    }
    // One session per month with events (in their order of generation within the month: a slot's
    // events are in different months or already in order).
    const sessions: Session[] = [];
    for (let m = 0; m < months; m++) {
      const inMonth = events.filter((e) => e.month === m);
      if (!inMonth.length) continue;
      const id = String(sessions.length + 1);
      const day = 3 + Math.floor(rand() * 20);
      const year = 2024 + Math.floor(m / 12);
      const date = new Date(Date.UTC(year, m % 12, day, 10, 0, 0));
      const turns = inMonth.flatMap((e, i) => [
        { id: `D${id}:${2 * i + 1}`, speaker: "user", text: e.user },
        { id: `D${id}:${2 * i + 2}`, speaker: "assistant", text: e.assistant },
      ]);
      sessions.push({ id, time: date.toISOString(), dateLabel: `${day} ${MONTH_NAMES[m % 12]} ${year}`, turns });
    }
    samples.push({ id: sample, speakers: ["user", "assistant"], sessions });
  }
  return { name: `freshness-seed${seed}-${people}p`, samples, questions };
}
