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
import { asksForVerbatimRewrite } from "../text/prompt-intent";
import { countTokens } from "../text/tokens";
import type { Db } from "../core/db";
import { groupSourceCounts } from "../store/branch-pointers";
import { storedSpec } from "../store/pipelines";
import { parseRunStats } from "../store/runs";
import { scopedGroupKey } from "../engine/keys";
import { PostgresRecordStore } from "../store/record-store";
import { getBranch } from "./pipelines";
import { branchProviderProblems } from "./provider-check";
import { priceOverrides } from "./providers";
import { planPipeline, type RunRequest } from "./runs";

/** Output tokens as a share of the input content's tokens, when there is no earlier run. */
export const OUTPUT_RATIO: Record<StepSpec["type"], number> = {
  transform: 0.3,
  split: 0.5,
  aggregate: 0.3,
  fold: 0.5,
  merge: 0,
  consolidate: 0.1,
  // Entities with a model: names, types and aliases of what a record mentions.
  entities: 0.1,
  relations: 0,
  insights: 0,
};
/** A transform asked for a transcript (every turn, verbatim) writes about what it reads. */
const VERBATIM_OUTPUT_RATIO = 1;
const MIN_OUTPUT_TOKENS = 8;
/** Share of each folded record the state keeps (it accumulates until maxStateTokens). */
const FOLD_STATE_GROWTH = 0.8;
/** Records a split makes per input, before a run shows the real ratio. */
const SPLIT_FACTOR = 3;
/** An uncalibrated estimate is shown as [estimate ÷ this, estimate × this]. */
export const UNCALIBRATED_SPREAD = 2;
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
  /**
   * Until a run calibrates the step, a likely range [low, high] of its tokens (in + out) and cost:
   * before any run, counts and sizes downstream are themselves estimates. Null once calibrated.
   */
  estimatedTokensRange: [number, number] | null;
  estimatedCostRange: [number, number] | null;
}

export interface PlanWithCost {
  branch: string;
  steps: StepCost[];
  totals: {
    pending: number;
    estimatedTokensIn: number;
    estimatedTokensOut: number;
    estimatedCostUsd: number;
    fullCostUsd: number;
    /** Null when every model step is calibrated by an earlier run. */
    estimatedTokensRange: [number, number] | null;
    estimatedCostRange: [number, number] | null;
  };
  /** Only on branches other than main. */
  main?: { fullCostUsd: number };
  costRatioVsMain?: number | null;
  warning?: string;
  /** Steps whose model has no provider in this workspace: a run would refuse to start. */
  providerProblems: Array<{ step: string; message: string }>;
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
  expected: Map<string, Expected>;
}

/** What a step will hold once the run is done: work items and records (estimated while upstream is pending). */
interface Expected {
  items: number;
  records: number;
  /** Model calls for all items (a fold calls once per record folded). */
  calls: number;
  /** Work items to compute, when known better than the engine's upper bound. */
  pending?: number;
  /** Aggregate: input records per pending group (its run stats count records read, not groups). */
  inputsPerItem?: number;
}

/** Records of `name` on the branch, or (a step) the records it is expected to hold after the run. */
function expectedRecords(expected: Map<string, Expected>, sourceCounts: Map<string, number>, name: string): number {
  return expected.get(name)?.records ?? sourceCounts.get(name) ?? 0;
}

/**
 * The source an aggregate's records descend from through 1:1 steps (transform, split), which
 * carry their input's metadata (time, keys) along: its groups are the aggregate's groups.
 */
function rootSource(spec: PipelineSpec, name: string): string | null {
  for (let hop = 0; hop < 50; hop++) {
    if (spec.sources.some((s) => s.name === name)) return name;
    const step = spec.steps.find((s) => s.name === name);
    if (!step || (step.type !== "transform" && step.type !== "split")) return null;
    name = fromList(step)[0]!;
  }
  return null;
}

/**
 * Work items and records per step after the run, in plan order. Steps whose inputs are up to date
 * take the engine's exact numbers; downstream of pending work, an aggregate's groups come from the
 * times (or keys) of the source records it descends from, and 1:1 steps follow their inputs.
 */
async function expectedCounts(db: Db, branchId: string, spec: PipelineSpec, plans: StepPlan[]): Promise<{ expected: Map<string, Expected>; sourceCounts: Map<string, number> }> {
  const sourceCounts = new Map<string, number>();
  for (const s of spec.sources) sourceCounts.set(s.name, await db.branchPointer.count({ where: { branchId, step: s.name } }));
  const store = new PostgresRecordStore(db);
  const expected = new Map<string, Expected>();
  for (const plan of plans) {
    const step = spec.steps.find((s) => s.name === plan.step);
    if (!step) continue;
    const upstream = fromList(step);
    const upRecords = upstream.reduce((n, u) => n + expectedRecords(expected, sourceCounts, u), 0);
    const current = await db.branchPointer.count({ where: { branchId, step: step.name } });
    let items = plan.total;
    let records = plan.estimated ? items : current;
    let calls = items;
    let changed: number | undefined;
    let inputsPerItem: number | undefined;
    switch (step.type) {
      // 1:1 steps: the engine's own count of pending work (its items plus one per new upstream
      // record) is what the run will find; only the step's total is estimated here.
      case "transform":
        items = plan.estimated ? Math.max(plan.total, upRecords) : plan.total;
        records = items;
        calls = items;
        changed = plan.pending;
        break;
      case "split":
        changed = plan.pending;
        items = plan.estimated ? Math.max(plan.total, upRecords) : plan.total;
        records = plan.estimated || current === 0 ? Math.round(items * (current > 0 && plan.total > 0 ? current / plan.total : SPLIT_FACTOR)) : current;
        calls = items;
        break;
      case "aggregate": {
        if (plan.estimated) {
          const root = rootSource(spec, upstream[0]!);
          if ("every" in step.groupBy) items = Math.max(plan.total, Math.ceil(upRecords / step.groupBy.every));
          else if (root) {
            const groups = await store.planGroups({ workspaceId: "", pipelineId: "", branchId, step: step.name, stepVersionHash: "" }, root, step.groupBy, "time.created_at");
            items = Math.max(1, groups.length);
            // A group is pending when it is new or its member count differs from the record made for
            // it; every group is, when an input step recomputes all its records (a prompt edit upstream).
            const made = await groupSourceCounts(db, branchId, step.name);
            const inputsReplaced = upstream.some((u) => {
              const up = plans.find((p) => p.step === u);
              return !!up && up.pending > 0 && up.pending >= up.total;
            });
            const pendingGroups = inputsReplaced ? groups : groups.filter((g) => made.get(scopedGroupKey(g.scope, g.groupKey)) !== g.size);
            changed = pendingGroups.length;
            if (pendingGroups.length) inputsPerItem = pendingGroups.reduce((n, g) => n + g.size, 0) / pendingGroups.length;
          }
        }
        records = items;
        calls = items;
        inputsPerItem ??= upRecords / Math.max(1, items);
        break;
      }
      case "fold":
        // One record (the state) per scope; the model is called once per record folded.
        items = Math.max(1, plan.total);
        records = items;
        calls = Math.max(items, upRecords);
        break;
      case "merge":
        items = plan.estimated ? Math.max(plan.total, upRecords) : plan.total;
        records = plan.estimated ? items : current;
        calls = 0;
        break;
    }
    expected.set(step.name, { items, records, calls, ...(changed !== undefined ? { pending: changed } : {}), ...(inputsPerItem !== undefined ? { inputsPerItem } : {}) });
  }
  return { expected, sourceCounts };
}

/** Per-item token estimates for every step of `spec` (topological order as in the plan). */
async function perItemEstimates(est: Estimator, plans: StepPlan[]) {
  const hashes = stepVersionHashes(est.spec);
  /** Estimated output tokens per record of a step (to size inputs of downstream steps that have no records yet). */
  const outPerRecord = new Map<string, number>();
  const result = new Map<string, Omit<StepCost, keyof StepPlan | "estimatedTokensIn" | "estimatedTokensOut" | "estimatedCostUsd" | "fullCostUsd" | "calls" | "estimatedTokensRange" | "estimatedCostRange">>();
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
      // Records that exist tell their size; records a pending upstream step will make are estimated.
      contentPerRecord += count > 0 ? avg : (outPerRecord.get(u) ?? 0);
      upstreamRecords += Math.max(count, est.expected.get(u)?.records ?? 0);
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
      // Per input record of the earlier runs; an aggregate's work item reads a group of them.
      const perItem = step.type === "aggregate" ? (est.expected.get(step.name)?.inputsPerItem ?? 1) : 1;
      tokensInPerItem = (cal.tokensIn / cal.input) * perItem;
      tokensOutPerItem = (cal.tokensOut / cal.input) * perItem;
      basis = exact ? "calibrated" : "calibrated-prompt";
    } else {
      // Records folded into one item: 1 for transform/split/fold, records per group for aggregate.
      const groups = est.expected.get(step.name)?.items ?? plan.total;
      const perItem = step.type === "aggregate" ? Math.max(1, upstreamRecords / Math.max(1, groups)) : 1;
      const content = contentPerRecord * perItem;
      if (step.type === "fold") {
        // The state keeps most of each record folded (up to maxStateTokens): after call k it is
        // about k × record × FOLD_STATE_GROWTH. Each call reads template + record + the state before
        // it and writes the state after it; averaged over the calls.
        const calls = Math.max(1, est.expected.get(step.name)?.calls ?? 1);
        const maxState = (step as { maxStateTokens?: number }).maxStateTokens ?? 8000;
        const stateAfter = Math.min(maxState, ((calls + 1) / 2) * content * FOLD_STATE_GROWTH);
        const stateBefore = Math.min(maxState, ((calls - 1) / 2) * content * FOLD_STATE_GROWTH);
        tokensOutPerItem = Math.max(MIN_OUTPUT_TOKENS, stateAfter);
        tokensInPerItem = templateTokens(prompt) + content + stateBefore;
      } else {
        const ratio = step.type === "transform" && asksForVerbatimRewrite(prompt ?? "") ? VERBATIM_OUTPUT_RATIO : OUTPUT_RATIO[step.type];
        tokensOutPerItem = Math.max(MIN_OUTPUT_TOKENS, content * ratio);
        tokensInPerItem = templateTokens(prompt) + content;
      }
      basis = "tokenizer";
    }
    const perRecordOut = step.type === "split" ? tokensOutPerItem / SPLIT_FACTOR : tokensOutPerItem;
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

/** Model calls for `pending` of `items` work items (a fold calls once per record folded, not per scope). */
function callsFor(e: Expected | undefined, pending: number, items: number): number {
  if (!e || pending === 0) return pending;
  return Math.round((e.calls * pending) / Math.max(1, items));
}

/** [x ÷ f, x × f]: f grows with the uncalibrated model steps upstream, whose errors compound. */
const spread = (x: number, calibrated: boolean, depth: number): [number, number] | null => {
  const f = UNCALIBRATED_SPREAD * 1.25 ** depth;
  return calibrated ? null : [x / f, x * f];
};

async function costPlan(db: Db, pipelineId: string, branchName: string, options: RunRequest, calibration: Calibration, prices: PriceTable) {
  const { branch, spec } = await getBranch(db, pipelineId, branchName);
  const plans = await planPipeline(db, pipelineId, branchName, options);
  const { expected } = await expectedCounts(db, branch.id, spec, plans);
  const per = await perItemEstimates({ db, branchId: branch.id, spec, calibration, prices, expected }, plans);
  const steps: StepCost[] = [];
  /** Uncalibrated model steps upstream of each step (sources: 0). */
  const depth = new Map<string, number>();
  for (const plan of plans) {
    const e = per.get(plan.step)!;
    const exp = expected.get(plan.step);
    const stepSpec = spec.steps.find((s) => s.name === plan.step)!;
    const upstreamDepth = Math.max(0, ...fromList(stepSpec).map((u) => depth.get(u) ?? 0));
    // Downstream of pending work the engine only bounds the count: use the estimate from the inputs.
    const items = plan.estimated && exp ? Math.max(exp.items, plan.total) : plan.total;
    const pending = plan.estimated && exp ? (exp.pending ?? Math.max(plan.pending, Math.min(items, exp.items))) : plan.pending;
    const calls = e.usesModel ? callsFor(exp, pending, items) : 0;
    const allCalls = e.usesModel ? callsFor(exp, items, items) : 0;
    const estimatedTokensIn = Math.round(calls * e.tokensInPerItem);
    const estimatedTokensOut = Math.round(calls * e.tokensOutPerItem);
    const free = !e.model || isOfflineModel(e.model);
    const estimatedCostUsd = free ? 0 : costOf(e.model!, estimatedTokensIn, estimatedTokensOut, prices);
    const calibrated = !e.usesModel || e.basis === "calibrated" || e.basis === "calibrated-prompt";
    depth.set(plan.step, upstreamDepth + (calibrated ? 0 : 1));
    steps.push({
      ...plan,
      pending,
      total: items,
      ...e,
      calls,
      tokensInPerItem: Math.round(e.tokensInPerItem * 10) / 10,
      tokensOutPerItem: Math.round(e.tokensOutPerItem * 10) / 10,
      estimatedTokensIn,
      estimatedTokensOut,
      estimatedCostUsd,
      fullCostUsd: free ? 0 : costOf(e.model!, allCalls * e.tokensInPerItem, allCalls * e.tokensOutPerItem, prices),
      estimatedTokensRange: (spread(estimatedTokensIn + estimatedTokensOut, calibrated, upstreamDepth)?.map(Math.round) as [number, number] | undefined) ?? null,
      estimatedCostRange: spread(estimatedCostUsd, calibrated, upstreamDepth),
    });
  }
  const sum = (f: (s: StepCost) => number) => steps.reduce((n, s) => n + f(s), 0);
  const uncalibrated = steps.some((s) => s.estimatedTokensRange !== null && s.calls > 0);
  const rangeSum = (f: (s: StepCost) => [number, number] | null, point: (s: StepCost) => number): [number, number] | null =>
    uncalibrated ? [sum((s) => f(s)?.[0] ?? point(s)), sum((s) => f(s)?.[1] ?? point(s))] : null;
  return {
    steps,
    totals: {
      pending: sum((s) => s.pending),
      estimatedTokensIn: sum((s) => s.estimatedTokensIn),
      estimatedTokensOut: sum((s) => s.estimatedTokensOut),
      estimatedCostUsd: sum((s) => s.estimatedCostUsd),
      fullCostUsd: sum((s) => s.fullCostUsd),
      estimatedTokensRange: rangeSum((s) => s.estimatedTokensRange, (s) => s.estimatedTokensIn + s.estimatedTokensOut),
      estimatedCostRange: rangeSum((s) => s.estimatedCostRange, (s) => s.estimatedCostUsd),
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
  const providerProblems = (await branchProviderProblems(db, pipeline.workspaceId, pipelineId, branch)).map((p) => ({ step: p.node ?? "?", message: p.message }));
  const out: PlanWithCost = { branch, ...plan, providerProblems };
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
