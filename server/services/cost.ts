/**
 * Plan with cost: the engine's plan (work items per step) plus estimated input/output tokens and
 * USD per step and in total. Per-item token counts are calibrated from earlier runs of the same
 * step (Run.stats.steps[].tokensIn/out ÷ input) when there are any — preferring runs of the same
 * step version, then of the same prompt template — else estimated with the real tokenizer from
 * the prompt template and the average size of the step's inputs, with an output ratio per type.
 * On a branch other than main, the full cost of the branch's spec is compared with main's
 * (`costRatioVsMain`, e.g. 14 when a step moves to a pricier model).
 */
import type { StepPlan } from "../engine/runner";
import { stepVersionHashes } from "../pipeline/hashing";
import { DEFAULT_MODEL, fromList, usesModel, type PipelineSpec, type StepSpec } from "../pipeline/spec";
import { sha256 } from "../pipeline/hashing";
import { isOfflineModel } from "../llm/offline-model";
import { costOf, priceOf, type PriceTable } from "../llm/pricing";
import { countTokens } from "../text/tokens";
import type { Db } from "../core/db";
import { storedSpec } from "../store/pipelines";
import { parseRunStats } from "../store/runs";
import { getBranch } from "./pipelines";
import { priceOverrides } from "./providers";
import { planPipeline, type RunRequest } from "./runs";

/** Output tokens as a share of the input content's tokens, when there is no earlier run. */
export const OUTPUT_RATIO: Record<StepSpec["type"], number> = {
  transform: 0.3,
  split: 0.5,
  aggregate: 0.2,
  fold: 0.5,
  merge: 0,
  consolidate: 0.1,
};
const MIN_OUTPUT_TOKENS = 8;
const SAMPLE = 200;
/** Ratios above this (or below 1/this) get a warning. */
export const COST_WARNING_RATIO = 1.5;

export interface StepCost extends StepPlan {
  model: string | null;
  usesModel: boolean;
  /** Model calls expected (pending work items for the model). */
  calls: number;
  tokensInPerItem: number;
  tokensOutPerItem: number;
  estimatedTokensIn: number;
  estimatedTokensOut: number;
  estimatedCostUsd: number;
  /** Cost of computing every item of the step from scratch (for branch comparisons). */
  fullCostUsd: number;
  /** Where the per-item numbers come from. */
  basis: "calibrated" | "calibrated-prompt" | "tokenizer" | "none";
  /** Runs the calibration averaged over (0 for tokenizer estimates). */
  calibrationRuns: number;
  priceKnown: boolean;
}

export interface PlanWithCost {
  branch: string;
  steps: StepCost[];
  totals: { pending: number; estimatedTokensIn: number; estimatedTokensOut: number; estimatedCostUsd: number; fullCostUsd: number };
  /** Only on branches other than main. */
  main?: { fullCostUsd: number };
  costRatioVsMain?: number | null;
  warning?: string;
}

interface StepRunStat {
  step: string;
  input: number;
  tokensIn: number;
  tokensOut: number;
  modelCalls?: number;
}

interface Calibration {
  bySvh: Map<string, { tokensIn: number; tokensOut: number; input: number; runs: number }>;
  byPrompt: Map<string, { tokensIn: number; tokensOut: number; input: number; runs: number }>;
}

function add(map: Calibration["bySvh"], key: string, s: StepRunStat) {
  const cur = map.get(key) ?? { tokensIn: 0, tokensOut: 0, input: 0, runs: 0 };
  cur.tokensIn += s.tokensIn;
  cur.tokensOut += s.tokensOut;
  cur.input += s.input;
  cur.runs += 1;
  map.set(key, cur);
}

const promptKey = (step: string, prompt: string | undefined) => `${step}\u0000${sha256(prompt ?? "")}`;

/** Per-step token totals of recent finished runs of the pipeline (any branch), keyed by step version and by prompt. */
async function loadCalibration(db: Db, pipelineId: string): Promise<Calibration> {
  const runs = await db.run.findMany({
    where: { pipelineId, status: { in: ["completed", "completed_with_errors"] } },
    orderBy: { createdAt: "desc" },
    take: 30,
    select: { id: true, stats: true, versionId: true },
  });
  const versions = await db.pipelineVersion.findMany({ where: { id: { in: [...new Set(runs.map((r) => r.versionId))] } }, select: { id: true, spec: true } });
  const specs = new Map(versions.map((v) => [v.id, storedSpec(v)]));
  const cal: Calibration = { bySvh: new Map(), byPrompt: new Map() };
  for (const run of runs) {
    const spec = specs.get(run.versionId);
    const steps = parseRunStats({ id: run.id, stats: run.stats }).steps.filter((s) => s.input > 0 && s.tokensIn > 0);
    if (!spec || steps.length === 0) continue;
    let hashes: Record<string, string>;
    try {
      hashes = stepVersionHashes(spec);
    } catch {
      continue;
    }
    for (const s of steps) {
      const stepSpec = spec.steps.find((x) => x.name === s.step);
      if (!stepSpec) continue;
      if (hashes[s.step]) add(cal.bySvh, hashes[s.step]!, s);
      add(cal.byPrompt, promptKey(s.step, (stepSpec as { prompt?: string }).prompt), s);
    }
  }
  return cal;
}

/** The template's own tokens, without its `{{ … }}` / `{% … %}` tags. */
function templateTokens(prompt: string | undefined): number {
  return countTokens((prompt ?? "").replace(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g, " "));
}

async function averageContentTokens(db: Db, branchId: string, step: string): Promise<{ avg: number; count: number }> {
  const pointers = await db.branchPointer.findMany({ where: { branchId, step }, select: { recordId: true }, take: SAMPLE });
  if (pointers.length === 0) return { avg: 0, count: 0 };
  const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, select: { content: true } });
  const total = records.reduce((n, r) => n + countTokens(r.content), 0);
  return { avg: records.length ? total / records.length : 0, count: await db.branchPointer.count({ where: { branchId, step } }) };
}

interface Estimator {
  db: Db;
  branchId: string;
  spec: PipelineSpec;
  calibration: Calibration;
  prices: PriceTable;
}

/** Per-item token estimates for every step of `spec` (topological order as in the plan). */
async function perItemEstimates(est: Estimator, plans: StepPlan[]) {
  const hashes = stepVersionHashes(est.spec);
  /** Estimated output tokens per record of a step (to size inputs of downstream steps that have no records yet). */
  const outPerRecord = new Map<string, number>();
  const result = new Map<string, Omit<StepCost, keyof StepPlan | "estimatedTokensIn" | "estimatedTokensOut" | "estimatedCostUsd" | "fullCostUsd" | "calls">>();
  for (const plan of plans) {
    const step = est.spec.steps.find((s) => s.name === plan.step);
    if (!step) continue;
    const llm = usesModel(step) && !(step as { operator?: unknown }).operator;
    const model = llm ? ((step as { model?: string }).model ?? DEFAULT_MODEL) : null;
    const upstream = fromList(step);
    // Average input content per upstream record, from the branch's records (or upstream estimates).
    let contentPerRecord = 0;
    let upstreamRecords = 0;
    for (const u of upstream) {
      const { avg, count } = await averageContentTokens(est.db, est.branchId, u);
      contentPerRecord += count > 0 ? avg : (outPerRecord.get(u) ?? 0);
      upstreamRecords += count;
    }
    contentPerRecord /= Math.max(1, upstream.length);
    if (!llm) {
      outPerRecord.set(step.name, contentPerRecord);
      result.set(step.name, { model, usesModel: false, tokensInPerItem: 0, tokensOutPerItem: 0, basis: "none", calibrationRuns: 0, priceKnown: true });
      continue;
    }
    const prompt = (step as { prompt?: string }).prompt;
    const exact = est.calibration.bySvh.get(hashes[step.name]!);
    const similar = est.calibration.byPrompt.get(promptKey(step.name, prompt));
    const cal = exact ?? similar;
    let tokensInPerItem: number;
    let tokensOutPerItem: number;
    let basis: StepCost["basis"];
    if (cal && cal.input > 0) {
      tokensInPerItem = cal.tokensIn / cal.input;
      tokensOutPerItem = cal.tokensOut / cal.input;
      basis = exact ? "calibrated" : "calibrated-prompt";
    } else {
      // Records folded into one item: 1 for transform/split, records per group for aggregate.
      const perItem = step.type === "aggregate" ? Math.max(1, upstreamRecords / Math.max(1, plan.total)) : 1;
      const content = contentPerRecord * perItem;
      tokensOutPerItem = Math.max(MIN_OUTPUT_TOKENS, content * OUTPUT_RATIO[step.type]);
      // A fold's prompt also carries the state (about one output's worth).
      tokensInPerItem = templateTokens(prompt) + content + (step.type === "fold" ? tokensOutPerItem : 0);
      basis = "tokenizer";
    }
    const perRecordOut = step.type === "split" ? tokensOutPerItem / 3 : tokensOutPerItem;
    outPerRecord.set(step.name, perRecordOut);
    result.set(step.name, {
      model,
      usesModel: true,
      tokensInPerItem,
      tokensOutPerItem,
      basis,
      calibrationRuns: cal?.runs ?? 0,
      priceKnown: model ? priceOf(model, est.prices).known : true,
    });
  }
  return result;
}

/** Model calls for `items` work items: a fold calls the model once per record folded, not per scope. */
async function callsFor(db: Db, branchId: string, step: StepSpec, items: number, total: number) {
  if (step.type !== "fold" || items === 0) return items;
  const records = await db.branchPointer.count({ where: { branchId, step: fromList(step)[0]! } });
  return Math.max(items, Math.round((records * items) / Math.max(1, total)));
}

async function costPlan(db: Db, pipelineId: string, branchName: string, options: RunRequest, calibration: Calibration, prices: PriceTable) {
  const { branch, spec } = await getBranch(db, pipelineId, branchName);
  const plans = await planPipeline(db, pipelineId, branchName, options);
  const per = await perItemEstimates({ db, branchId: branch.id, spec, calibration, prices }, plans);
  const steps: StepCost[] = [];
  for (const plan of plans) {
    const step = spec.steps.find((s) => s.name === plan.step)!;
    const e = per.get(plan.step)!;
    const calls = e.usesModel ? await callsFor(db, branch.id, step, plan.pending, plan.total) : 0;
    const allCalls = e.usesModel ? await callsFor(db, branch.id, step, plan.total, plan.total) : 0;
    const estimatedTokensIn = Math.round(calls * e.tokensInPerItem);
    const estimatedTokensOut = Math.round(calls * e.tokensOutPerItem);
    const free = !e.model || isOfflineModel(e.model);
    steps.push({
      ...plan,
      ...e,
      calls,
      tokensInPerItem: Math.round(e.tokensInPerItem * 10) / 10,
      tokensOutPerItem: Math.round(e.tokensOutPerItem * 10) / 10,
      estimatedTokensIn,
      estimatedTokensOut,
      estimatedCostUsd: free ? 0 : costOf(e.model!, estimatedTokensIn, estimatedTokensOut, prices),
      fullCostUsd: free ? 0 : costOf(e.model!, allCalls * e.tokensInPerItem, allCalls * e.tokensOutPerItem, prices),
    });
  }
  const sum = (f: (s: StepCost) => number) => steps.reduce((n, s) => n + f(s), 0);
  return {
    steps,
    totals: {
      pending: sum((s) => s.pending),
      estimatedTokensIn: sum((s) => s.estimatedTokensIn),
      estimatedTokensOut: sum((s) => s.estimatedTokensOut),
      estimatedCostUsd: sum((s) => s.estimatedCostUsd),
      fullCostUsd: sum((s) => s.fullCostUsd),
    },
  };
}

/**
 * The engine's plan for `branch` with estimated tokens and cost per step and in total; on a
 * branch other than main, also the ratio of its full cost to main's.
 */
export async function planWithCost(db: Db, pipelineId: string, branch = "main", options: RunRequest = {}): Promise<PlanWithCost> {
  const pipeline = await db.pipeline.findUniqueOrThrow({ where: { id: pipelineId }, select: { workspaceId: true } });
  const [calibration, prices] = await Promise.all([loadCalibration(db, pipelineId), priceOverrides(db, pipeline.workspaceId)]);
  const plan = await costPlan(db, pipelineId, branch, options, calibration, prices);
  const out: PlanWithCost = { branch, ...plan };
  if (branch !== "main") {
    const main = await costPlan(db, pipelineId, "main", { ...options, full: true }, calibration, prices);
    const mainFull = main.totals.fullCostUsd;
    const branchFull = plan.totals.fullCostUsd;
    out.main = { fullCostUsd: mainFull };
    out.costRatioVsMain = mainFull > 0 ? Math.round((branchFull / mainFull) * 100) / 100 : branchFull > 0 ? null : 1;
    const ratio = out.costRatioVsMain;
    if (ratio === null) out.warning = `This branch costs $${branchFull.toFixed(4)} for a full run; main costs nothing.`;
    else if (ratio >= COST_WARNING_RATIO) out.warning = `This branch costs ${ratio}× as much as main for a full run ($${branchFull.toFixed(4)} vs $${mainFull.toFixed(4)}).`;
  }
  return out;
}
