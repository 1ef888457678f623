/**
 * The engine: plans and executes a pipeline run on one branch over a RecordStore and a ModelProvider.
 * Pure TypeScript: the same code runs in tests, the CLI, the Next server and Inngest.
 */
import { randomUUID } from "node:crypto";
import { contentFingerprint, sha256 } from "../pipeline/hashing";
import { DEFAULT_MODEL, type PipelineSpec, type StepSpec } from "../pipeline/spec";
import { renderTemplate } from "../pipeline/templates";
import { stepVersionHashes } from "../pipeline/hashing";
import { downstreamOf, topologicalOrder, upstreamOf } from "../pipeline/validate";
import { countTokens } from "../llm/tokens";
import { aggregateKey, foldKey, mergeKey, oneToOneWorkKey, scopedGroupKey, sequenceFingerprint, splitKey, transformKey } from "./keys";
import { ModelError, type ModelProvider, type ModelRequest, type ModelResponse, type ModelTask } from "./model";
import { applyAggregateOperator, applySplitOperator, applyTransformOperator, type SplitPart } from "./operators";
import type { Audit, EngineRecord, Metadata, NewRecord, RecordStore, StepScope } from "./types";

export interface StepStats {
  step: string;
  type: StepSpec["type"];
  input: number;
  output: number;
  skipped: number;
  errors: number;
  modelCalls: number;
  retries: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  durationMs: number;
  status: "pending" | "running" | "completed" | "failed" | "cancelled";
}

export type RunEvent =
  | { type: "step-started"; step: string; pending: number }
  | { type: "step-progress"; step: string; done: number; pending: number; stats: StepStats }
  | { type: "step-finished"; step: string; stats: StepStats }
  | { type: "failure"; step: string; inputKey: string; error: string };

export interface RunOptions {
  /** Run only these steps (their upstream steps run first when they have pending work). */
  steps?: string[];
  /** Run this step and everything downstream of it. */
  from?: string;
  /** Recompute even where a materialization key exists. */
  full?: boolean;
  /** Reuse stored responses by rendered-prompt hash: no model calls for prompts seen before. */
  replay?: boolean;
  concurrency?: number;
  batchSize?: number;
  maxAttempts?: number;
  retryBaseMs?: number;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  now?: Date;
}

export interface EngineContext {
  store: RecordStore;
  model: ModelProvider;
  workspaceId: string;
  pipelineId: string;
  branchId: string;
  runId: string;
  spec: PipelineSpec;
}

export interface RunResult {
  status: "completed" | "completed_with_errors" | "failed" | "cancelled";
  steps: StepStats[];
  error?: string;
}

export class RunCancelled extends Error {
  constructor() {
    super("The run was cancelled.");
  }
}

const AGGREGATE_ORDER_KEY = "time.created_at";

function emptyStats(step: StepSpec): StepStats {
  return {
    step: step.name,
    type: step.type,
    input: 0,
    output: 0,
    skipped: 0,
    errors: 0,
    modelCalls: 0,
    retries: 0,
    tokensIn: 0,
    tokensOut: 0,
    costUsd: 0,
    durationMs: 0,
    status: "pending",
  };
}

/** Steps to run, in topological order. `steps` pulls in their upstream; `from` pushes downstream. */
export function selectSteps(spec: PipelineSpec, options: Pick<RunOptions, "steps" | "from">): StepSpec[] {
  const byName = new Map(spec.steps.map((s) => [s.name, s] as const));
  let wanted: Set<string>;
  if (options.from) {
    if (!byName.has(options.from)) throw new Error(`Unknown step "${options.from}". Steps: ${[...byName.keys()].join(", ")}`);
    wanted = new Set([options.from, ...downstreamOf(spec, options.from)]);
  } else if (options.steps?.length) {
    wanted = new Set();
    for (const name of options.steps) {
      if (!byName.has(name)) throw new Error(`Unknown step "${name}". Steps: ${[...byName.keys()].join(", ")}`);
      wanted.add(name);
      for (const up of upstreamOf(spec, name)) wanted.add(up);
    }
  } else {
    wanted = new Set(byName.keys());
  }
  return topologicalOrder(spec)
    .filter((name) => wanted.has(name) && byName.has(name))
    .map((name) => byName.get(name)!);
}

function fromList(step: StepSpec): string[] {
  return Array.isArray(step.from) ? step.from : [step.from];
}

function get(obj: unknown, path: string): unknown {
  let value = obj;
  for (const part of path.split(".")) {
    if (!value || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Derived records inherit where and when their inputs came from. */
function inheritedMetadata(inputs: EngineRecord[]): Metadata {
  const first = inputs[0]?.metadata ?? {};
  const times = inputs.map((r) => get(r.metadata, "time.created_at")).filter((t): t is string => typeof t === "string");
  const latest = times.sort().at(-1);
  const meta: Metadata = {};
  if (latest) meta.time = { created_at: latest };
  if (inputs.length === 1) {
    for (const k of ["chat", "source", "time"]) if (first[k] !== undefined) meta[k] = first[k];
  }
  return meta;
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  });
  await Promise.all(workers);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class StepRunner {
  readonly stats: StepStats;
  readonly scope: StepScope;
  private readonly renderedNow: string;

  constructor(
    private readonly ctx: EngineContext,
    readonly step: StepSpec,
    readonly svh: string,
    private readonly options: Required<Pick<RunOptions, "concurrency" | "batchSize" | "maxAttempts" | "retryBaseMs">> &
      RunOptions,
  ) {
    this.stats = emptyStats(step);
    this.scope = {
      workspaceId: ctx.workspaceId,
      pipelineId: ctx.pipelineId,
      branchId: ctx.branchId,
      step: step.name,
      stepVersionHash: svh,
    };
    this.renderedNow = (options.now ?? new Date()).toISOString().slice(0, 10);
  }

  private async checkCancelled() {
    if (this.options.signal?.aborted || (await this.ctx.store.isCancelled(this.ctx.runId))) throw new RunCancelled();
  }

  private emitProgress(done: number, pending: number) {
    this.options.onEvent?.({ type: "step-progress", step: this.step.name, done, pending, stats: { ...this.stats } });
  }

  private async fail(inputKey: string, err: unknown) {
    this.stats.errors += 1;
    const message = err instanceof Error ? err.message : String(err);
    const raw = err instanceof ModelError ? err.options.raw : undefined;
    const attempts = err instanceof ModelError ? (err.options.attempts ?? 1) : 1;
    await this.ctx.store.recordFailure(this.ctx.runId, this.ctx.workspaceId, {
      step: this.step.name,
      inputKey,
      error: message,
      attempts,
      rawResponse: raw ?? null,
    });
    this.options.onEvent?.({ type: "failure", step: this.step.name, inputKey, error: message });
  }

  /** One model call with the engine's retry of transient errors; replay answers from the store. */
  async callModel(task: ModelTask, prompt: string, inputs: EngineRecord[], extra: Partial<ModelRequest> = {}) {
    const step = this.step as StepSpec & { model?: string; temperature?: number; output?: Record<string, unknown> };
    const request: ModelRequest = {
      model: step.model ?? DEFAULT_MODEL,
      prompt,
      temperature: step.temperature ?? 0,
      task: step.output && task === "summarize" ? "json" : task,
      inputs: inputs.map((r) => ({ id: r.id, content: r.content, metadata: r.metadata })),
      jsonSchema: step.output,
      signal: this.options.signal,
      ...extra,
    };
    const renderedPromptHash = sha256(
      JSON.stringify([request.model, request.temperature, request.task, prompt, request.state ?? null]),
    );
    if (this.options.replay) {
      const stored = await this.ctx.store.findResponse(this.ctx.workspaceId, renderedPromptHash);
      if (stored?.rawResponse !== undefined) {
        const audit: Audit = { ...stored, renderedPromptHash, replayed: true, costUsd: 0 };
        return { text: stored.rawResponse, audit };
      }
    }
    let attempt = 0;
    let response: ModelResponse;
    for (;;) {
      attempt += 1;
      this.stats.modelCalls += 1;
      try {
        response = await this.ctx.model.complete(request);
        break;
      } catch (err) {
        const transient = err instanceof ModelError && err.options.transient;
        if (!transient || attempt >= this.options.maxAttempts) {
          if (err instanceof ModelError) throw new ModelError(err.message, { ...err.options, attempts: attempt });
          throw err;
        }
        this.stats.retries += 1;
        await sleep(this.options.retryBaseMs * 2 ** (attempt - 1) * (1 + Math.random() * 0.2));
      }
    }
    this.stats.tokensIn += response.tokensIn;
    this.stats.tokensOut += response.tokensOut;
    this.stats.costUsd += response.costUsd;
    this.stats.retries += (response.attempts ?? 1) - 1;
    const text = response.text;
    if (!text.trim()) throw new ModelError("The model returned an empty response.", { raw: response.raw, attempts: attempt });
    if (request.task === "json" || request.task === "extract-list") {
      try {
        JSON.parse(text);
      } catch {
        throw new ModelError("The model's response is not valid JSON.", { raw: response.raw, attempts: attempt });
      }
    }
    const audit: Audit = {
      promptTemplateHash: sha256((this.step as { prompt?: string }).prompt ?? ""),
      renderedPromptHash,
      model: response.model,
      temperature: request.temperature,
      rawResponse: response.raw,
      tokensIn: response.tokensIn,
      tokensOut: response.tokensOut,
      costUsd: response.costUsd,
      latencyMs: response.latencyMs,
    };
    return { text, audit };
  }

  render(vars: Record<string, unknown>) {
    const prompt = (this.step as { prompt?: string }).prompt ?? "";
    return renderTemplate(prompt, { now: this.renderedNow, ...vars });
  }

  private recordVars(r: EngineRecord) {
    return { id: r.id, content: r.content, scope: r.scope, metadata: r.metadata };
  }

  newRecord(fields: Omit<NewRecord, "id" | "step" | "stepVersionHash" | "contentFingerprint">): NewRecord {
    return {
      id: randomUUID(),
      step: this.step.name,
      stepVersionHash: this.svh,
      contentFingerprint: contentFingerprint(fields.content),
      runId: this.ctx.runId,
      ...fields,
      metadata: { ...fields.metadata, step: { ...(fields.metadata.step as object), version_hash: this.svh } },
    };
  }

  // ---- transform and split (1:1, 1:N) ----

  async runOneToOne() {
    const store = this.ctx.store;
    const [upstream] = fromList(this.step);
    const pending = await store.countMissingOneToOne(this.scope, upstream!);
    this.options.onEvent?.({ type: "step-started", step: this.step.name, pending });
    let afterId: string | undefined;
    let done = 0;
    while (pending > 0) {
      await this.checkCancelled();
      const page = await store.missingOneToOne(this.scope, upstream!, { afterId, limit: this.options.batchSize });
      if (page.length === 0) break;
      afterId = page.at(-1)!.id;
      const made: NewRecord[] = [];
      await pool(page, this.options.concurrency, async (input) => {
        this.stats.input += 1;
        try {
          made.push(...(await (this.step.type === "split" ? this.split(input) : this.transform(input))));
        } catch (err) {
          if (err instanceof RunCancelled) throw err;
          await this.fail(input.id, err);
        }
      });
      await store.commit(this.ctx.branchId, made);
      this.stats.output += made.length;
      done += page.length;
      this.emitProgress(done, pending);
    }
    // Reconciling scans the step; skip it when a cheaper check says the pointers are already right.
    if (this.step.type !== "transform" || !(await store.inSyncOneToOne(this.scope, upstream!))) {
      await store.reconcileOneToOne(this.scope, upstream!);
    }
    this.stats.skipped = Math.max(0, (await store.countPointers(this.ctx.branchId, upstream!)) - this.stats.input);
  }

  private async transform(input: EngineRecord): Promise<NewRecord[]> {
    const step = this.step as Extract<StepSpec, { type: "transform" }>;
    const base = { workKey: oneToOneWorkKey(this.svh, input.id), scope: input.scope, sources: [input.id], groupKey: input.id };
    const metadata = inheritedMetadata([input]);
    if (step.operator) {
      const out = applyTransformOperator(step.operator, input.content);
      return [
        this.newRecord({
          ...base,
          materializationKey: transformKey(this.svh, input.id),
          content: out.content,
          metadata: { ...metadata, ...(out.metadata ? { custom: out.metadata } : {}) },
          audit: { operator: step.operator.kind },
        }),
      ];
    }
    const prompt = this.render({ record: this.recordVars(input), records: [this.recordVars(input)], scope: input.scope });
    const { text, audit } = await this.callModel("summarize", prompt, [input]);
    return [this.newRecord({ ...base, materializationKey: transformKey(this.svh, input.id), content: text, metadata, audit })];
  }

  private async split(input: EngineRecord): Promise<NewRecord[]> {
    const step = this.step as Extract<StepSpec, { type: "split" }>;
    let parts: Array<string | SplitPart>;
    let audit: Audit;
    if (step.operator) {
      parts = applySplitOperator(step.operator, input.content);
      audit = { operator: step.operator.kind };
    } else {
      const prompt = this.render({ record: this.recordVars(input), records: [this.recordVars(input)], scope: input.scope });
      const result = await this.callModel("extract-list", prompt, [input]);
      const parsed: unknown = JSON.parse(result.text);
      if (!Array.isArray(parsed)) throw new ModelError("The model's response is not a JSON list.", { raw: result.audit.rawResponse });
      parts = parsed.map((p) => (typeof p === "string" ? p : JSON.stringify(p)));
      audit = result.audit;
    }
    const metadata = inheritedMetadata([input]);
    return parts
      .map((p) => (typeof p === "string" ? { content: p } : p))
      .filter((p) => p.content.trim())
      .map((part, index) =>
        this.newRecord({
          workKey: oneToOneWorkKey(this.svh, input.id),
          materializationKey: splitKey(this.svh, input.id, index),
          content: part.content,
          scope: input.scope,
          sources: [input.id],
          groupKey: `${input.id}#${index}`,
          metadata: { ...metadata, step: { index }, ...(part.metadata ? { custom: part.metadata } : {}) },
          audit,
        }),
      );
  }

  // ---- aggregate (N:1 per group) ----

  async planAggregate() {
    const step = this.step as Extract<StepSpec, { type: "aggregate" }>;
    const groups = await this.ctx.store.planGroups(this.scope, step.from, step.groupBy, AGGREGATE_ORDER_KEY);
    const keyed = groups.map((g) => ({
      group: g,
      key: aggregateKey(step.name, this.svh, g.scope, g.groupKey, g.combinedFingerprint),
      pointer: scopedGroupKey(g.scope, g.groupKey),
    }));
    const existing = await this.ctx.store.existingKeys(this.ctx.pipelineId, keyed.map((k) => k.key));
    return { keyed, existing, missing: keyed.filter((k) => !existing.has(k.key)) };
  }

  async runAggregate() {
    const step = this.step as Extract<StepSpec, { type: "aggregate" }>;
    const store = this.ctx.store;
    const upstream = step.from;
    const orderKey = AGGREGATE_ORDER_KEY;
    const { keyed, existing, missing } = await this.planAggregate();
    this.options.onEvent?.({ type: "step-started", step: step.name, pending: missing.length });
    this.stats.skipped = keyed.length - missing.length;
    const made = new Map<string, string>();
    const failed = new Set<string>();
    let done = 0;
    for (let i = 0; i < missing.length; i += this.options.batchSize) {
      await this.checkCancelled();
      const batch = missing.slice(i, i + this.options.batchSize);
      const records: NewRecord[] = [];
      await pool(batch, this.options.concurrency, async ({ group, key, pointer }) => {
        this.stats.input += 1;
        try {
          const members = await store.groupMembers(this.scope, upstream, step.groupBy, orderKey, group);
          const content = step.operator
            ? applyAggregateOperator(step.operator, members.map((m) => m.content))
            : undefined;
          const result = content
            ? { text: content, audit: { operator: step.operator!.kind } as Audit }
            : await this.callModel(
                "summarize",
                this.render({
                  records: members.map((m) => this.recordVars(m)),
                  group: { key: group.groupKey, scope: group.scope, size: group.size },
                  scope: group.scope,
                }),
                members,
              );
          const metadata = inheritedMetadata(members);
          if ("period" in step.groupBy) metadata.time = { ...(metadata.time as object), period: group.groupKey };
          else metadata.group = { key: group.groupKey };
          const record = this.newRecord({
            workKey: key,
            materializationKey: key,
            content: result.text,
            scope: group.scope,
            sources: members.map((m) => m.id),
            groupKey: pointer,
            metadata,
            audit: result.audit,
          });
          records.push(record);
          made.set(key, record.id);
        } catch (err) {
          if (err instanceof RunCancelled) throw err;
          failed.add(pointer);
          await this.fail(pointer, err);
        }
      });
      await store.commit(this.ctx.branchId, records);
      this.stats.output += records.length;
      done += batch.length;
      this.emitProgress(done, missing.length);
    }
    // One record per group on the branch: a changed group replaces the old pointer (last write wins).
    // A group whose new aggregate failed keeps its previous record rather than disappearing.
    await store.syncPointers(
      this.ctx.branchId,
      step.name,
      keyed
        .filter((k) => !failed.has(k.pointer))
        .map((k) => ({ groupKey: k.pointer, recordId: (existing.get(k.key) ?? made.get(k.key))! }))
        .filter((p) => p.recordId),
      [...failed],
    );
  }

  // ---- fold (N ordered → 1 per scope) ----

  async planFold() {
    const step = this.step as Extract<StepSpec, { type: "fold" }>;
    const store = this.ctx.store;
    const plans = [];
    for (const scope of await store.scopesOf(this.ctx.branchId, step.from)) {
      const refs = await store.orderedRefs(this.ctx.branchId, step.from, scope, step.orderKey);
      const key = foldKey(step.name, this.svh, scope, sequenceFingerprint(refs.map((r) => r.contentFingerprint)));
      plans.push({ scope, refs, key });
    }
    const existing = await store.existingKeys(this.ctx.pipelineId, plans.map((p) => p.key));
    return { plans, existing, missing: plans.filter((p) => !existing.has(p.key)) };
  }

  async runFold() {
    const step = this.step as Extract<StepSpec, { type: "fold" }>;
    const store = this.ctx.store;
    const { plans, existing, missing } = await this.planFold();
    this.options.onEvent?.({ type: "step-started", step: step.name, pending: missing.length });
    this.stats.skipped = plans.length - missing.length;
    const made = new Map<string, string>();
    const failed: string[] = [];
    let done = 0;
    for (const plan of missing) {
      await this.checkCancelled();
      try {
        const record = await this.foldScope(step, plan.scope, plan.refs, plan.key);
        await store.commit(this.ctx.branchId, [record]);
        made.set(plan.key, record.id);
        this.stats.output += 1;
      } catch (err) {
        if (err instanceof RunCancelled) throw err;
        failed.push(plan.scope);
        await this.fail(plan.scope, err);
      }
      done += 1;
      this.emitProgress(done, missing.length);
    }
    await store.syncPointers(
      this.ctx.branchId,
      step.name,
      plans
        .filter((p) => !failed.includes(p.scope))
        .map((p) => ({ groupKey: p.scope, recordId: (existing.get(p.key) ?? made.get(p.key))! }))
        .filter((p) => p.recordId),
      failed,
    );
  }

  private async foldScope(
    step: Extract<StepSpec, { type: "fold" }>,
    scope: string,
    refs: Array<{ id: string; contentFingerprint: string }>,
    key: string,
  ): Promise<NewRecord> {
    const store = this.ctx.store;
    const every = step.checkpointEvery;
    const prefixes = new Map<number, string>();
    for (let pos = every; pos <= refs.length; pos += every) {
      prefixes.set(pos, sequenceFingerprint(refs.slice(0, pos).map((r) => r.contentFingerprint)));
    }
    // Resume from the newest checkpoint whose prefix still matches the current sequence.
    const found = this.options.full
      ? []
      : await store.getCheckpoints(this.ctx.pipelineId, this.svh, scope, [...prefixes.values()]);
    const resume = found.filter((c) => prefixes.get(c.position) === c.prefixFingerprint).sort((a, b) => b.position - a.position)[0];
    let state = resume?.state ?? step.initialState ?? "";
    let audit: Audit = {};
    const totals = { tokensIn: 0, tokensOut: 0, costUsd: 0 };
    for (let pos = resume?.position ?? 0; pos < refs.length; pos += this.options.batchSize) {
      await this.checkCancelled();
      const chunk = await store.getRecords(refs.slice(pos, pos + this.options.batchSize).map((r) => r.id));
      const byId = new Map(chunk.map((r) => [r.id, r]));
      for (let i = 0; i < chunk.length; i++) {
        const index = pos + i;
        const record = byId.get(refs[index]!.id)!;
        this.stats.input += 1;
        const prompt = this.render({ state, record: this.recordVars(record), records: [this.recordVars(record)], scope });
        const result = await this.callModel("fold", prompt, [record], { state, maxOutputTokens: step.maxStateTokens });
        state = result.text;
        audit = result.audit;
        totals.tokensIn += result.audit.tokensIn ?? 0;
        totals.tokensOut += result.audit.tokensOut ?? 0;
        totals.costUsd += result.audit.costUsd ?? 0;
        if (countTokens(state) > step.maxStateTokens) {
          const compressed = await this.callModel("compress", this.render({ state, scope }), [], {
            state,
            maxOutputTokens: Math.floor(step.maxStateTokens / 2),
          });
          state = compressed.text;
        }
        const position = index + 1;
        const prefix = prefixes.get(position);
        if (prefix) await store.putCheckpoint(this.scope, scope, { position, prefixFingerprint: prefix, state });
      }
    }
    const last = refs.length ? (await store.getRecords([refs.at(-1)!.id]))[0] : undefined;
    const metadata: Metadata = { step: { sequence: refs.length } };
    const lastTime = last ? get(last.metadata, "time") : undefined;
    if (lastTime) metadata.time = lastTime;
    return this.newRecord({
      workKey: key,
      materializationKey: key,
      content: state || "(empty)",
      scope,
      sources: refs.map((r) => r.id),
      groupKey: scope,
      metadata,
      audit: { ...audit, ...totals, resumedFrom: resume?.position ?? 0 } as Audit,
    });
  }

  // ---- merge (N sources → N, mechanical) ----

  async planMerge() {
    const step = this.step as Extract<StepSpec, { type: "merge" }>;
    const store = this.ctx.store;
    if (typeof step.dedupe === "object" && "fuzzy" in step.dedupe) {
      throw new Error(`merge "${step.name}": fuzzy dedupe is not supported yet; use content_hash or metadataMatch`);
    }
    const fields = typeof step.dedupe === "object" && "metadataMatch" in step.dedupe ? step.dedupe.metadataMatch : [];
    const candidates = await store.mergeCandidates(this.ctx.branchId, step.from, fields);
    const order = new Map(step.from.map((name, i) => [name, i]));
    const dedupeKeyOf = (c: (typeof candidates)[number]) => {
      if (step.conflict === "keep_all" || step.dedupe === "none") return `id:${c.id}`;
      if (step.dedupe === "content_hash") return `fp:${c.contentFingerprint}`;
      return c.fields.every((f) => f !== "") ? `meta:${JSON.stringify(c.fields)}` : `id:${c.id}`;
    };
    const groups = new Map<string, typeof candidates>();
    for (const c of candidates) {
      const k = dedupeKeyOf(c);
      const list = groups.get(k);
      if (list) list.push(c);
      else groups.set(k, [c]);
    }
    const rank = (a: (typeof candidates)[number], b: (typeof candidates)[number]) => {
      if (step.conflict === "prefer_latest") {
        const t = (b.createdAt ?? "").localeCompare(a.createdAt ?? "");
        if (t !== 0) return t;
      }
      const o = order.get(a.step)! - order.get(b.step)!;
      if (o !== 0) return o;
      const t = (a.createdAt ?? "").localeCompare(b.createdAt ?? "");
      return t !== 0 ? t : a.id.localeCompare(b.id);
    };
    const planned = [...groups.entries()].map(([dedupeKey, members]) => {
      const sorted = [...members].sort(rank);
      return { dedupeKey, sorted, key: mergeKey(step.name, this.svh, dedupeKey, sorted[0]!.id) };
    });
    const existing = new Map<string, string>();
    for (let i = 0; i < planned.length; i += 1000) {
      const found = await store.existingKeys(this.ctx.pipelineId, planned.slice(i, i + 1000).map((p) => p.key));
      for (const [k, v] of found) existing.set(k, v);
    }
    return { planned, existing, missing: planned.filter((p) => !existing.has(p.key)) };
  }

  async runMerge() {
    const step = this.step as Extract<StepSpec, { type: "merge" }>;
    const store = this.ctx.store;
    const { planned, existing, missing } = await this.planMerge();
    this.options.onEvent?.({ type: "step-started", step: step.name, pending: missing.length });
    this.stats.skipped = planned.length - missing.length;
    const made = new Map<string, string>();
    for (let i = 0; i < missing.length; i += this.options.batchSize) {
      await this.checkCancelled();
      const batch = missing.slice(i, i + this.options.batchSize);
      const chosen = new Map((await store.getRecords(batch.map((p) => p.sorted[0]!.id))).map((r) => [r.id, r]));
      const records = batch.map((p) => {
        const winner = chosen.get(p.sorted[0]!.id)!;
        this.stats.input += p.sorted.length;
        return this.newRecord({
          workKey: p.key,
          materializationKey: p.key,
          content: winner.content,
          scope: winner.scope,
          sources: p.sorted.map((m) => m.id),
          groupKey: p.dedupeKey,
          metadata: { ...winner.metadata, merge: { duplicates: p.sorted.length, from: winner.step } },
          audit: { operator: `merge:${typeof step.dedupe === "string" ? step.dedupe : "metadataMatch"}:${step.conflict}` },
        });
      });
      await store.commit(this.ctx.branchId, records);
      for (const r of records) made.set(r.materializationKey, r.id);
      this.stats.output += records.length;
      this.emitProgress(Math.min(i + batch.length, missing.length), missing.length);
    }
    await store.syncPointers(
      this.ctx.branchId,
      step.name,
      planned.map((p) => ({ groupKey: p.dedupeKey, recordId: (existing.get(p.key) ?? made.get(p.key))! })),
    );
  }
}

/**
 * Execute the selected steps in topological order. Each step first asks the store what is missing
 * (set difference on materialization keys), computes only that, and commits per batch.
 */
export async function executeRun(ctx: EngineContext, options: RunOptions = {}): Promise<RunResult> {
  const hashes = stepVersionHashes(ctx.spec);
  const opts = {
    concurrency: 4,
    batchSize: 200,
    maxAttempts: 3,
    retryBaseMs: 250,
    ...options,
  };
  const steps = selectSteps(ctx.spec, options);
  const all = steps.map((s) => new StepRunner(ctx, s, hashes[s.name]!, opts));
  for (const runner of all) {
    const started = Date.now();
    runner.stats.status = "running";
    try {
      if (opts.full) await ctx.store.retireStep(ctx.pipelineId, runner.step.name, runner.svh);
      switch (runner.step.type) {
        case "transform":
        case "split":
          await runner.runOneToOne();
          break;
        case "aggregate":
          await runner.runAggregate();
          break;
        case "fold":
          await runner.runFold();
          break;
        case "merge":
          await runner.runMerge();
          break;
        default:
          throw new Error(`step type ${runner.step.type} is not supported yet`);
      }
      runner.stats.status = "completed";
    } catch (err) {
      runner.stats.durationMs = Date.now() - started;
      const cancelled = err instanceof RunCancelled;
      runner.stats.status = cancelled ? "cancelled" : "failed";
      options.onEvent?.({ type: "step-finished", step: runner.step.name, stats: { ...runner.stats } });
      return {
        status: cancelled ? "cancelled" : "failed",
        steps: all.map((r) => r.stats),
        error: `${runner.step.name}: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    runner.stats.durationMs = Date.now() - started;
    options.onEvent?.({ type: "step-finished", step: runner.step.name, stats: { ...runner.stats } });
  }
  const errors = all.reduce((n, r) => n + r.stats.errors, 0);
  return { status: errors > 0 ? "completed_with_errors" : "completed", steps: all.map((r) => r.stats) };
}

export interface StepPlan {
  step: string;
  type: StepSpec["type"];
  /** Work items to compute (records for 1:1, groups for aggregate, scopes for fold). */
  pending: number;
  /** Work items the step has on this branch once up to date. */
  total: number;
  /** True when an upstream step has pending work, so this number is an upper estimate. */
  estimated: boolean;
  stepVersionHash: string;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * What a run would do, step by step, without doing it: exact set differences for steps whose
 * inputs are current, and estimates for steps downstream of pending work.
 */
export async function planRun(ctx: EngineContext, options: Pick<RunOptions, "steps" | "from" | "full"> = {}): Promise<StepPlan[]> {
  const hashes = stepVersionHashes(ctx.spec);
  const opts = { concurrency: 1, batchSize: 200, maxAttempts: 1, retryBaseMs: 0, ...options };
  const pendingOf = new Map<string, number>();
  const plans: StepPlan[] = [];
  for (const step of selectSteps(ctx.spec, options)) {
    const runner = new StepRunner(ctx, step, hashes[step.name]!, opts);
    const upstream = fromList(step);
    let pending = 0;
    let total = 0;
    switch (step.type) {
      case "transform":
      case "split":
        total = await ctx.store.countPointers(ctx.branchId, upstream[0]!);
        pending = options.full ? total : await ctx.store.countMissingOneToOne(runner.scope, upstream[0]!);
        break;
      case "aggregate": {
        const p = await runner.planAggregate();
        total = p.keyed.length;
        pending = options.full ? total : p.missing.length;
        break;
      }
      case "fold": {
        const p = await runner.planFold();
        total = p.plans.length;
        pending = options.full ? total : p.missing.length;
        break;
      }
      case "merge": {
        const p = await runner.planMerge();
        total = p.planned.length;
        pending = options.full ? total : p.missing.length;
        break;
      }
      default:
        throw new Error(`step type ${step.type} is not supported yet`);
    }
    const upstreamPending = sum(upstream.map((u) => pendingOf.get(u) ?? 0));
    const estimated = upstreamPending > 0;
    if (estimated) {
      // New upstream records change at most this many downstream work items.
      const bound = step.type === "transform" || step.type === "split" || step.type === "merge" ? upstreamPending : Math.max(total, 1);
      pending = Math.max(pending, step.type === "transform" || step.type === "split" ? pending + upstreamPending : bound);
      total = Math.max(total, pending);
    }
    pendingOf.set(step.name, pending);
    plans.push({ step: step.name, type: step.type, pending, total, estimated, stepVersionHash: hashes[step.name]! });
  }
  return plans;
}
