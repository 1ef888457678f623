/**
 * The normalized shape every benchmark loader produces (LoCoMo, LongMemEval, SynthexBench): samples
 * of dated sessions made of turns, and questions whose evidence names turns. An eval imports each
 * session as one source record (scope `<benchmark>:<sample>`) and scores questions by tracing what
 * search retrieved back to these sessions and turns.
 */
import { z } from "zod";

export const BENCHMARKS = ["locomo", "longmemeval", "synthexbench"] as const;
export type Benchmark = (typeof BENCHMARKS)[number];

export const turnSchema = z.object({
  /** Unique within the sample, e.g. "D3:11". */
  id: z.string().min(1),
  speaker: z.string(),
  text: z.string(),
});

export const sessionSchema = z.object({
  /** Unique within the sample, e.g. "3". */
  id: z.string().min(1),
  /** ISO timestamp of the session (benchmark dates carry no timezone: read as UTC). */
  time: z.string().nullable(),
  /** The date as the benchmark writes it (kept in the record's header line). */
  dateLabel: z.string(),
  turns: z.array(turnSchema),
});

export const questionSchema = z.object({
  /** Unique within the dataset, e.g. "conv-26:q12". */
  id: z.string().min(1),
  sample: z.string().min(1),
  question: z.string().min(1),
  answer: z.string(),
  /** Benchmark category as a string key: LoCoMo "1".."5", LongMemEval question types, SynthexBench kinds. */
  category: z.string(),
  /** Gold turn ids (normalized). */
  evidence: z.array(z.string()),
  /** Sessions holding the evidence (derived from `evidence`, or given by the benchmark). */
  evidenceSessions: z.array(z.string()),
  /** Categories scored apart (LoCoMo 5, adversarial): left out of the overall metrics. */
  apart: z.boolean().default(false),
  /** SynthexBench: the altitude the answer is expected at ("leaf", "summary", "monthly"). */
  altitude: z.string().optional(),
  /** SynthexBench freshness: an outdated value the memory must not prefer. */
  stale: z.string().optional(),
  /** ISO time the question is asked (LongMemEval `question_date`): "last week" in it resolves against this. */
  askedAt: z.string().optional(),
});

export const sampleSchema = z.object({
  id: z.string().min(1),
  speakers: z.array(z.string()),
  sessions: z.array(sessionSchema),
});

export const datasetSchema = z.object({
  benchmark: z.enum(BENCHMARKS),
  name: z.string(),
  samples: z.array(sampleSchema),
  questions: z.array(questionSchema),
});

export type Turn = z.infer<typeof turnSchema>;
export type Session = z.infer<typeof sessionSchema>;
export type Question = z.infer<typeof questionSchema>;
export type Sample = z.infer<typeof sampleSchema>;
export type Dataset = z.infer<typeof datasetSchema>;

/** Something a loader left out (or repaired), counted and reported with the eval. */
export interface LoadSkip {
  where: string;
  reason: string;
  /** True when the item was dropped; false when it was repaired and kept. */
  dropped: boolean;
}

export interface LoadResult {
  dataset: Dataset;
  skips: LoadSkip[];
}

/** A malformed benchmark file: says what is wrong and where. */
export class BenchmarkFileError extends Error {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(`${file}: ${message}`);
    this.name = "BenchmarkFileError";
  }
}

/** Category names for reports. */
export const LOCOMO_CATEGORIES: Record<string, string> = {
  "1": "multi-hop",
  "2": "temporal",
  "3": "open-domain",
  "4": "single-hop",
  "5": "adversarial",
};

/** The scope an eval gives one benchmark sample's records. */
export function sampleScope(benchmark: Benchmark, sample: string): string {
  return `${benchmark}:${sample.replace(/[^A-Za-z0-9_.-]+/g, "-")}`;
}

/** A session as source-record text: a date header, then one paragraph per turn (what importers produce). */
export function sessionContent(session: Session): string {
  return [`# ${session.dateLabel}`, ...session.turns.map((t) => `${t.speaker}: ${t.text}`)].join("\n\n");
}
