/**
 * Replay (issue 37): logged searches and asks of a window (or a seeded sample of it) run again on a
 * branch and, for reference, on main at its current version, with the logged parameters and scope.
 * Per query: both top-k lists side by side, overlap@k, rank-biased overlap, gained / lost, latency,
 * and — where the logged `ask` cited records — whether each side still retrieves them (citation
 * recall). Per run: the means, and paired 95% intervals of branch − main. Labels: a person marks the
 * record that should have come first; the query becomes a question of a question set.
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { ModelError } from "../engine/model";
import { search, SEARCH_MODES, type SearchMode } from "../search/search";
import { listQueryLog, type LoggedQuery } from "../services/query-log";
import { setQueryLabel } from "../store/query-log";
import { addToQuestionSet } from "./question-sets";
import { assertPreferenceJudge, PREFERENCE_NOT_MEASURED, PreferenceJudge, type JudgeOptions, type PreferenceSummary, type QueryPreference } from "./replay-judge";
import { compareServed, summarizeComparisons, type ComparisonSummary, type QueryComparison } from "./replay-metrics";
import { seededRandom } from "./bootstrap";

export const MAX_REPLAY = 200;
/** A served record's text in the report: enough to read it in the table, bounded for 200 queries × 2 × 50 hits. */
export const TEXT_CHARS = 600;

export interface ReplayInput {
  workspaceId: string;
  pipelineId: string;
  branch: string;
  /** Against this branch (default main). */
  baseline?: string;
  from?: Date;
  to?: Date;
  /** Entry ids to replay instead of a window. */
  ids?: string[];
  /** Replay a seeded random sample of this many of the window's queries (else the latest, up to MAX_REPLAY). */
  sample?: number;
  seed?: number;
  /** Depth compared (default: each query's logged limit / k, at most 50). */
  k?: number;
  /** `provider/model` asked per query which side's context answers better (omitted: preference not measured). */
  judgeModel?: string;
  /** USD the preference calls may spend (default $1). */
  budgetUsd?: number;
}

export interface ReplayQuery extends QueryComparison {
  entryId: string;
  kind: string;
  query: string;
  scope: string | null;
  /** The judge's pairwise preference; absent when not measured or the query failed. */
  preference?: QueryPreference;
  error?: string;
}

export interface ReplayReport {
  branch: string;
  baseline: string;
  queries: ReplayQuery[];
  /** Each served record's text (up to TEXT_CHARS characters), by id: the table shows what was served, not ids. */
  texts: Record<string, string>;
  skipped: number;
  summary: ComparisonSummary & {
    /** Which side's context answers better, per the judge; "not measured" without a judge model. */
    preference: PreferenceSummary;
  };
}

/** A small seeded PRNG (mulberry32): the same seed picks the same sample. */
function pick(entries: LoggedQuery[], n: number | undefined, seed: number): LoggedQuery[] {
  if (!n || n >= entries.length) return entries.slice(0, MAX_REPLAY);
  const r = seededRandom(seed);
  const copy = [...entries];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, Math.min(n, MAX_REPLAY));
}

/** The search a logged call made (a search's own options; an ask's evidence retrieval). */
function searchOf(e: LoggedQuery, k: number) {
  const p = e.params;
  const mode = (SEARCH_MODES as readonly string[]).includes(String(e.mode)) ? (e.mode as SearchMode) : undefined;
  const common = { query: e.query, scope: e.scope ?? undefined, mode, limit: k };
  if (e.kind === "ask") return { ...common, step: typeof p.step === "string" ? p.step : undefined };
  const keep = ["step", "output", "exact", "recency", "dedupe", "fusion", "minScore", "dates", "from", "to", "period", "conversationId", "metadata"] as const;
  const extra: Record<string, unknown> = {};
  for (const key of keep) if (p[key] !== undefined) extra[key] = p[key];
  return { ...extra, ...common, snippets: false };
}

async function timed(db: Db, input: Parameters<typeof search>[1]) {
  const started = performance.now();
  const found = await search(db, input);
  return { ids: found.hits.map((h) => h.id), contents: found.hits.map((h) => h.content), latencyMs: Math.round((performance.now() - started) * 10) / 10 };
}

export async function replayQueries(db: Db, input: ReplayInput): Promise<ReplayReport> {
  const baseline = input.baseline ?? "main";
  if (input.sample !== undefined && (!Number.isInteger(input.sample) || input.sample < 1)) throw badRequest("sample: a whole number of queries, 1 or more.");
  if (input.budgetUsd !== undefined && !input.judgeModel) throw badRequest("budgetUsd: a budget needs a judgeModel to spend it on.");
  const judgeOptions: JudgeOptions | null = input.judgeModel ? { judgeModel: input.judgeModel, budgetUsd: input.budgetUsd } : null;
  if (judgeOptions) await assertPreferenceJudge(db, input.workspaceId, judgeOptions);
  const judge = judgeOptions ? PreferenceJudge.forWorkspace(db, input.workspaceId, judgeOptions) : null;
  const logged = await listQueryLog(db, { workspaceId: input.workspaceId, pipelineId: input.pipelineId, from: input.from, to: input.to, ids: input.ids, limit: input.sample ? 5000 : MAX_REPLAY * 2 });
  const replayable = logged.filter((e) => (e.kind === "search" || e.kind === "ask") && e.query.trim());
  const chosen = pick(replayable, input.sample, input.seed ?? 1);
  const queries: ReplayQuery[] = [];
  const texts: Record<string, string> = {};
  const keepTexts = (side: { ids: string[]; contents: string[] }) =>
    side.ids.forEach((id, j) => {
      const text = side.contents[j] ?? "";
      texts[id] ??= text.length > TEXT_CHARS ? `${text.slice(0, TEXT_CHARS)}…` : text;
    });
  const on = (branch: string, run: ReturnType<typeof searchOf>) => ({ ...run, workspaceId: input.workspaceId, pipelineId: input.pipelineId, branch }) as Parameters<typeof search>[1];
  const kOf = (e: LoggedQuery) => Math.min(50, Math.max(1, input.k ?? (Number(e.params.limit ?? e.params.k ?? e.hits.length) || 10)));
  // Fair latency (issue 48 item 6): a first search pays for cold caches (the process's statement
  // and statistics caches, the database's pages), so one untimed search on each side comes first;
  // and the side that runs first alternates per query, so neither always meets the caches the other warmed.
  if (chosen[0]) {
    const warm = searchOf(chosen[0], kOf(chosen[0]));
    for (const side of [baseline, input.branch]) await search(db, on(side, warm)).catch(() => undefined);
  }
  for (const [i, e] of chosen.entries()) {
    const k = kOf(e);
    const run = searchOf(e, k);
    try {
      const mainFirst = i % 2 === 0;
      const first = await timed(db, on(mainFirst ? baseline : input.branch, run));
      const second = await timed(db, on(mainFirst ? input.branch : baseline, run));
      const [main, branch] = mainFirst ? [first, second] : [second, first];
      keepTexts(main);
      keepTexts(branch);
      const preference = judge ? await judge.judge(e.query, main, branch) : undefined;
      const served = (side: typeof main) => ({ ids: side.ids, latencyMs: side.latencyMs });
      queries.push({ entryId: e.id, kind: e.kind, query: e.query, scope: e.scope, ...compareServed(served(main), served(branch), e.cited, k), ...(preference ? { preference } : {}) });
    } catch (err) {
      // The judge's provider refuses every call (bad key, unknown model): say so instead of a half-judged report.
      if (err instanceof ModelError) throw badRequest(`judgeModel "${input.judgeModel}" failed: ${err.message}`);
      // A branch or step that no longer exists: said per query, the rest is replayed.
      const message = err instanceof Error ? err.message : String(err);
      if (/branch/i.test(message) && /not found|no branch/i.test(message)) throw notFound(message);
      queries.push({ entryId: e.id, kind: e.kind, query: e.query, scope: e.scope, k, main: { ids: [], latencyMs: 0, citationRecall: null }, branch: { ids: [], latencyMs: 0, citationRecall: null }, overlap: 0, rbo: 0, gained: [], lost: [], cited: e.cited, error: message });
    }
  }
  const summary = summarizeComparisons(queries.filter((q) => !q.error));
  return {
    branch: input.branch,
    baseline,
    queries,
    texts,
    skipped: logged.length - replayable.length,
    summary: { ...summary, preference: judge ? judge.summary() : PREFERENCE_NOT_MEASURED },
  };
}

/** A person's label on a logged query: the record that should have come first; the query joins a question set. */
export async function labelLoggedQuery(db: Db, workspaceId: string, input: { pipelineId: string; entryId: string; recordId: string; set: string }) {
  const [entry] = await listQueryLog(db, { workspaceId, pipelineId: input.pipelineId, ids: [input.entryId], limit: 1 });
  if (!entry) throw notFound(`Logged query "${input.entryId.slice(0, 100)}" not found.`);
  if (!entry.query.trim()) throw badRequest("This logged call has no query text (a brief): nothing to ask.");
  const record = await db.record.findFirst({ where: { id: input.recordId, workspaceId, pipelineId: input.pipelineId }, select: { id: true } });
  if (!record) throw notFound(`Record "${input.recordId.slice(0, 100)}" not found in this pipeline.`);
  const added = await addToQuestionSet(db, workspaceId, { set: input.set, question: entry.query, recordIds: [record.id] });
  await setQueryLabel(db, workspaceId, entry.id, record.id);
  return { entryId: entry.id, recordId: record.id, setId: added.set.id, set: added.set.name, questions: added.set.questions, questionId: added.question.id };
}
