/**
 * Retrieval metrics of one question, and their means. Computed the way
 * shared/tools/locomo-baseline computes them, so numbers compare with its baselines:
 * - sessions are ranked by first appearance in the ranked records (a record counts for every
 *   source session its lineage reaches);
 * - `evidence_recall@10`: share of gold turns covered by the top 10 records;
 * - `evidence_recall@2k`: the same over the records taken in rank order while the context stays
 *   within 2,000 tokens — the first record always counts, so one huge record cannot buy recall;
 *   when the top k records are too short to fill it (facts), the ranking continues past k
 *   (score.ts FILL_DEPTH), as the baseline takes every ranked unit;
 * - tokens are estimated as the baseline does: whitespace words × 4/3 (floored).
 */

export const METRIC_NAMES = [
  "session_hit@1",
  "session_hit@3",
  "session_hit@5",
  "session_recall@5",
  "evidence_recall@10",
  "evidence_recall@2k",
  "context_tokens",
  "precision@5",
  "mrr",
  "provenance_completeness",
  "temporal_accuracy",
  "freshness",
  "f1",
  "j",
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];
export type Metrics = Partial<Record<MetricName, number>>;

/** Metrics where lower is better (deltas are shown the other way round). */
export const LOWER_IS_BETTER: ReadonlySet<string> = new Set(["context_tokens"]);

export const CONTEXT_BUDGET = 2000;

/** One retrieved record, traced: the sessions and gold-comparable turn ids it reaches. */
export interface TracedHit {
  id: string;
  sessions: string[];
  turns: string[];
  tokens: number;
  /** Its lineage reaches a source record. */
  reachesSource: boolean;
  content?: string;
}

export interface CaseInput {
  evidence: string[];
  evidenceSessions: string[];
  hits: TracedHit[];
  /** Temporal questions: the gold answer whose words the context must hold. */
  temporalAnswer?: string;
  /** Freshness questions: the current value and the outdated one. */
  freshness?: { current: string; stale: string };
}

/** Whitespace words × 4/3, floored; markdown heading marks are not words. */
export function estimateContextTokens(text: string): number {
  let words = 0;
  for (const w of text.split(/\s+/)) if (w && !/^#+$/.test(w)) words++;
  return Math.floor((words * 4) / 3);
}

/** Distinct sessions in rank order. */
export function rankedSessions(hits: TracedHit[]): string[] {
  const out: string[] = [];
  for (const h of hits) for (const s of h.sessions) if (!out.includes(s)) out.push(s);
  return out;
}

/** The records taken in rank order within the budget (the first always counts). */
export function contextCut(hits: TracedHit[], budget = CONTEXT_BUDGET): { hits: TracedHit[]; tokens: number } {
  let tokens = 0;
  const taken: TracedHit[] = [];
  for (const h of hits) {
    if (tokens + h.tokens > budget && tokens > 0) break;
    tokens += h.tokens;
    taken.push(h);
  }
  return { hits: taken, tokens };
}

function coverage(hits: TracedHit[], gold: ReadonlySet<string>): number {
  if (!gold.size) return 0;
  const covered = new Set<string>();
  for (const h of hits) for (const t of h.turns) if (gold.has(t)) covered.add(t);
  return covered.size / gold.size;
}

/** Lower-cased words without punctuation or articles (SQuAD-style normalisation). */
export function answerTokens(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, " ")
    .split(/\s+/)
    .filter((w) => w && !["a", "an", "the", "and"].includes(w));
}

/** Token F1 between a prediction and a gold answer. */
export function tokenF1(prediction: string, gold: string): number {
  const p = answerTokens(prediction);
  const g = answerTokens(gold);
  if (!p.length || !g.length) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const w of g) counts.set(w, (counts.get(w) ?? 0) + 1);
  let common = 0;
  for (const w of p) {
    const n = counts.get(w) ?? 0;
    if (n > 0) {
      common++;
      counts.set(w, n - 1);
    }
  }
  if (!common) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

function containsAll(text: string, answer: string): boolean {
  const words = new Set(answerTokens(text));
  const need = answerTokens(answer);
  return need.length > 0 && need.every((w) => words.has(w));
}

/** Every retrieval metric of one question. */
export function scoreCase(c: CaseInput): Metrics {
  const evSessions = new Set(c.evidenceSessions);
  const gold = new Set(c.evidence);
  const sessions = rankedSessions(c.hits).slice(0, 5);
  const hitAt = (k: number) => (sessions.slice(0, k).some((s) => evSessions.has(s)) ? 1 : 0);
  const relevant = (h: TracedHit) => h.turns.some((t) => gold.has(t));
  const firstRelevant = c.hits.findIndex(relevant);
  const cut = contextCut(c.hits);
  const m: Metrics = {
    "session_hit@1": hitAt(1),
    "session_hit@3": hitAt(3),
    "session_hit@5": hitAt(5),
    "session_recall@5": evSessions.size ? sessions.filter((s) => evSessions.has(s)).length / evSessions.size : 0,
    "evidence_recall@10": coverage(c.hits.slice(0, 10), gold),
    "evidence_recall@2k": coverage(cut.hits, gold),
    context_tokens: cut.tokens,
    "precision@5": c.hits.slice(0, 5).filter(relevant).length / 5,
    mrr: firstRelevant >= 0 ? 1 / (firstRelevant + 1) : 0,
    provenance_completeness: c.hits.length ? c.hits.filter((h) => h.reachesSource).length / c.hits.length : 1,
  };
  if (c.temporalAnswer !== undefined) {
    m.temporal_accuracy = containsAll(cut.hits.map((h) => h.content ?? "").join("\n"), c.temporalAnswer) ? 1 : 0;
  }
  if (c.freshness) {
    // The first record that mentions either value must mention the current one (and not only the old).
    const says = (text: string, value: string) => new RegExp(`(^|[^\\p{L}\\p{N}])${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\\p{L}\\p{N}])`, "iu").test(text);
    const { current, stale } = c.freshness;
    const first = c.hits.find((h) => says(h.content ?? "", current) || says(h.content ?? "", stale));
    m.freshness = first && says(first.content ?? "", current) && !says(first.content ?? "", stale) ? 1 : 0;
  }
  return m;
}

/** Mean of each metric over the cases that have it (a metric no case has is left out). */
export function meanMetrics(cases: Metrics[]): Metrics {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const c of cases) {
    for (const [k, v] of Object.entries(c)) {
      if (typeof v !== "number" || Number.isNaN(v)) continue;
      const s = sums.get(k) ?? { sum: 0, n: 0 };
      s.sum += v;
      s.n++;
      sums.set(k, s);
    }
  }
  const out: Metrics = {};
  for (const name of METRIC_NAMES) {
    const s = sums.get(name);
    if (s) out[name] = s.sum / s.n;
  }
  return out;
}

/** Nearest-rank percentile. */
export function percentile(samples: number[], p: number): number {
  if (!samples.length) return 0;
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
