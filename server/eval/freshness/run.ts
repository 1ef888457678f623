/**
 * `synthex eval freshness`: builds each template on the generated histories in a private in-memory
 * database (nothing of the workspace is read or written), asks every "what holds now" question
 * within its person's scope at the template's eval altitude and mode, and scores the hits.
 */
import type { Db } from "../../core/db";
import { runPipeline } from "../../services/runs";
import { appendSourceRecords, createPipeline, getBranch } from "../../services/pipelines";
import { signUp } from "../../services/users";
import { indexPipeline } from "../../search/indexing";
import { search, type SearchMode } from "../../search/search";
import { openScratchDb } from "../../store/scratch-db";
import { sessionContent, sampleScope } from "../types";
import { evalTemplate } from "../templates";
import { generateFreshness, type FreshnessDataset, type FreshnessQuestion } from "./generate";
import { scoreFreshness, summarize, type FreshnessCase, type FreshnessSummary } from "./metrics";

export interface FreshnessResult extends FreshnessSummary {
  template: string;
  /** Records at the searched altitude that come from assistant turns only. */
  memoriesFromAssistant: number;
  records: number;
  cases: Array<{ id: string; current: string | null; stale: string[]; top: string | null } & FreshnessCase>;
}

/** The scope a person's records get (the sample's). */
export const freshnessScope = (sample: string) => sampleScope("synthexbench", `freshness-${sample}`);

function speakerOf(metadata: unknown): string | undefined {
  const m = metadata as { custom?: { speaker?: unknown } } | null;
  return typeof m?.custom?.speaker === "string" ? m.custom.speaker : undefined;
}

/** Records of `steps` pointed on main that come only from assistant turns (their fact, or themselves). */
async function assistantRecords(db: Db, pipelineId: string, steps: string[]): Promise<{ total: number; fromAssistant: number }> {
  const { branch } = await getBranch(db, pipelineId, "main");
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: { in: steps } }, select: { recordId: true } });
  const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, select: { id: true, metadata: true } });
  const factIds = records.map((r) => (r.metadata as { memory?: { fact?: string } } | null)?.memory?.fact).filter((x): x is string => !!x);
  const facts = new Map((await db.record.findMany({ where: { id: { in: factIds } }, select: { id: true, metadata: true } })).map((f) => [f.id, f]));
  let fromAssistant = 0;
  for (const r of records) {
    const factId = (r.metadata as { memory?: { fact?: string } } | null)?.memory?.fact;
    const speaker = speakerOf(r.metadata) ?? (factId ? speakerOf(facts.get(factId)?.metadata) : undefined);
    if (speaker === "assistant") fromAssistant += 1;
  }
  return { total: records.length, fromAssistant };
}

export async function runFreshness(
  templates: string[],
  options: { seed?: number; people?: number; k?: number; onProgress?: (template: string, phase: string) => void; dataset?: FreshnessDataset } = {},
): Promise<{ dataset: { name: string; people: number; questions: number }; results: FreshnessResult[] }> {
  const dataset = options.dataset ?? generateFreshness({ seed: options.seed, people: options.people });
  const k = options.k ?? 10;
  const { db, close } = await openScratchDb();
  try {
    const { workspace } = await signUp(db, { email: "freshness@example.com", password: "freshness-benchmark-password-1" });
    const results: FreshnessResult[] = [];
    for (const template of templates) {
      const def = evalTemplate(template);
      options.onProgress?.(template, "build");
      const { pipeline } = await createPipeline(db, workspace.id, { name: `freshness-${template}`, spec: def.spec });
      const items = dataset.samples.flatMap((sample) =>
        sample.sessions.map((session) => ({
          externalId: `freshness:${sample.id}-s${session.id}`,
          content: sessionContent(session),
          scope: freshnessScope(sample.id),
          metadata: {
            time: session.time ? { created_at: session.time } : {},
            chat: { conversation_id: `${sample.id}-s${session.id}`, title: `${sample.id} session ${session.id}`, roles: sample.speakers, message_count: session.turns.length },
          },
        })),
      );
      await appendSourceRecords(db, pipeline.id, def.spec.sources[0]!.name, items);
      const run = await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id }, { runOptions: { retryBaseMs: 1 } });
      if (run.status !== "completed") throw new Error(`The build of ${template} ${run.status}: ${run.error ?? "no reason given"}`);
      await indexPipeline(db, pipeline.id, "main", { workspaceId: workspace.id });
      options.onProgress?.(template, "search");
      const mode = (def.mode === "bm25" || def.mode === "walk" ? "hybrid" : def.mode) as SearchMode;
      const cases: Array<{ q: FreshnessQuestion; c: FreshnessCase; top: string | null }> = [];
      for (const q of dataset.questions) {
        const result = await search(db, { workspaceId: workspace.id, pipelineId: pipeline.id, query: q.question, mode, step: def.step, scope: freshnessScope(q.sample), limit: k, snippets: false });
        const hits = result.hits.map((h) => h.content ?? "");
        cases.push({ q, c: scoreFreshness(q, hits), top: hits[0] ?? null });
      }
      const searchOutput = def.spec.outputs.find((o) => o.surface === "search");
      const steps = def.step ? [def.step] : searchOutput ? [searchOutput.from].flat() : [];
      const counted = await assistantRecords(db, pipeline.id, steps);
      results.push({
        template,
        ...summarize(cases),
        memoriesFromAssistant: counted.fromAssistant,
        records: counted.total,
        cases: cases.map(({ q, c, top }) => ({ id: q.id, current: q.current, stale: q.stale, top, ...c })),
      });
    }
    return { dataset: { name: dataset.name, people: dataset.samples.length, questions: dataset.questions.length }, results };
  } finally {
    await close();
  }
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The results as a table (one row per template). */
export function freshnessTable(results: FreshnessResult[]): string {
  const header = ["template", "current@1", "stale-above-current", "ended-as-current", "unchanged@1", "from assistant"];
  const rows = results.map((r) => [
    r.template,
    `${pct(r.current1)} (n=${r.currentN})`,
    `${pct(r.staleAboveCurrent)} (n=${r.staleN})`,
    `${pct(r.endedAsCurrent)} (n=${r.endedN})`,
    `${pct(r.unchangedCurrent1)} (n=${r.unchangedN})`,
    `${r.memoriesFromAssistant} of ${r.records}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
