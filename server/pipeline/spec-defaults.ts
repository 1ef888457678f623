/** The spec's defaults, written out into every parsed spec (see spec.ts: a parsed spec is normalized). */
export const SPEC_VERSION = 1 as const;
export const DEFAULT_MODEL = "offline/extractive";
export const DEFAULT_TEMPERATURE = 0;
export const DEFAULT_ORDER_KEY = "time.created_at";
export const DEFAULT_CHECKPOINT_EVERY = 6;
export const DEFAULT_MAX_STATE_TOKENS = 8000;
export const DEFAULT_CHUNK_SIZE = 1200;
export const DEFAULT_CHUNK_OVERLAP = 0;
/** `sentences` split operator: sentences per output record. */
export const DEFAULT_SENTENCES_PER_RECORD = 1;
/** `extractive-summary` operator: sentences kept, per step type. */
export const DEFAULT_SUMMARY_SENTENCES = { transform: 3, aggregate: 5 } as const;
/** `turns` split operator: turns per window and turns between window starts. */
export const DEFAULT_TURNS_PER_WINDOW = 3;
export const DEFAULT_TURNS_STRIDE = 1;
export const DEFAULT_DEDUPE = "content_hash" as const;
export const DEFAULT_CONFLICT = "prefer_latest" as const;
/** consolidate: a memory at least this similar to a fact is the same memory (near-duplicate → NONE). */
export const DEFAULT_CONSOLIDATE_THRESHOLD = 0.85;
export const DEFAULT_CONSOLIDATE_MODE = "full" as const;

/** Every default in one place (documentation, UI placeholders). */
export const SPEC_DEFAULTS = {
  model: DEFAULT_MODEL,
  temperature: DEFAULT_TEMPERATURE,
  fold: { orderKey: DEFAULT_ORDER_KEY, checkpointEvery: DEFAULT_CHECKPOINT_EVERY, maxStateTokens: DEFAULT_MAX_STATE_TOKENS },
  chunk: { size: DEFAULT_CHUNK_SIZE, overlap: DEFAULT_CHUNK_OVERLAP },
  sentences: { per: DEFAULT_SENTENCES_PER_RECORD },
  turns: { size: DEFAULT_TURNS_PER_WINDOW, stride: DEFAULT_TURNS_STRIDE },
  extractiveSummary: DEFAULT_SUMMARY_SENTENCES,
  merge: { dedupe: DEFAULT_DEDUPE, conflict: DEFAULT_CONFLICT },
  consolidate: { threshold: DEFAULT_CONSOLIDATE_THRESHOLD, mode: DEFAULT_CONSOLIDATE_MODE },
} as const;
