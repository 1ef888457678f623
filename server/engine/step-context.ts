/**
 * What a step kind gets to do its work: the store, the branch and step identity, the step's
 * running stats, and the shared mechanics every kind needs (model calls with retry and replay,
 * prompt rendering, building records with their provenance, cancellation checks).
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { contentFingerprint, sha256 } from "../pipeline/hashing";
import { DEFAULT_MODEL } from "../pipeline/spec";
import { renderTemplate } from "../pipeline/prompts";
import { ModelError, type ModelProvider, type ModelRequest, type ModelResponse, type ModelTask } from "./model";
import type { StepDefinition } from "./steps/step-kind";
import type { Audit, EngineRecord, Metadata, NewRecord, RecordStore, StepScope } from "./types";

/** Characters of a rendered prompt kept in a record's audit (the hash covers the whole prompt). */
export const RENDERED_PROMPT_LIMIT = 50_000;

export interface StepStats {
  step: string;
  type: string;
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
  /**
   * pending (queued: not started yet), running, completed, failed (the step itself failed, or
   * every one of its work items did), skipped (it got nothing to do: `reason` says why), cancelled.
   */
  status: "pending" | "running" | "completed" | "failed" | "skipped" | "cancelled";
  /** Work items the step found to compute when it started (its plan at that moment). */
  items?: number;
  /** Why a step was skipped or failed as a whole. */
  reason?: string;
}

export function emptyStats(step: Pick<StepDefinition, "name" | "type">): StepStats {
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

export class RunCancelled extends Error {
  constructor() {
    super("The run was cancelled.");
    this.name = "RunCancelled";
  }
}

/** Execution settings every batch of a run shares. */
export interface ExecutionOptions {
  /** Recompute even where a materialization key exists. */
  full: boolean;
  /** Reuse stored responses by rendered-prompt hash: no model calls for prompts seen before. */
  replay: boolean;
  concurrency: number;
  batchSize: number;
  /** Attempts of a transient model error in process (1: leave retrying to the caller, e.g. Inngest). */
  maxAttempts: number;
  retryBaseMs: number;
  signal?: AbortSignal;
  now?: Date;
}

export interface StepIdentity {
  store: RecordStore;
  model: ModelProvider;
  workspaceId: string;
  pipelineId: string;
  branchId: string;
  runId: string;
}

function get(obj: unknown, path: string): unknown {
  let value = obj;
  for (const part of path.split(".")) {
    if (!value || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A metadata value by dotted path (`time.created_at`). */
export const metadataAt = get;

/** Derived records inherit where and when their inputs came from. */
export function inheritedMetadata(inputs: EngineRecord[]): Metadata {
  const first = inputs[0]?.metadata ?? {};
  const times = inputs.map((r) => get(r.metadata, "time.created_at")).filter((t): t is string => typeof t === "string");
  const latest = times.sort().at(-1);
  const meta: Metadata = {};
  if (latest) meta.time = { created_at: latest };
  if (inputs.length === 1) {
    for (const k of ["chat", "source", "time"]) if (first[k] !== undefined) meta[k] = first[k];
    // Relative dates resolved in the source's text (search indexing) are not this record's.
    if (meta.time && typeof meta.time === "object" && !Array.isArray(meta.time)) meta.time = Object.fromEntries(Object.entries(meta.time).filter(([k]) => k !== "mentions" && k !== "mentions_of"));
  }
  return meta;
}

/** The template variables of one record. */
export function recordVars(r: EngineRecord) {
  return { id: r.id, content: r.content, scope: r.scope, metadata: r.metadata };
}

type LlmFields = { prompt?: string; model?: string; temperature?: number; output?: Record<string, unknown> };

export class StepContext<S extends StepDefinition = StepDefinition> {
  readonly scope: StepScope;
  private readonly renderedNow: string;
  private readonly memos = new Map<string, Promise<unknown>>();

  constructor(
    readonly run: StepIdentity,
    readonly step: S,
    /** The step's version hash. */
    readonly svh: string,
    /** The step's running stats (the runner hands in the current ones before every batch). */
    public stats: StepStats,
    public options: ExecutionOptions,
  ) {
    this.scope = {
      workspaceId: run.workspaceId,
      pipelineId: run.pipelineId,
      branchId: run.branchId,
      step: step.name,
      stepVersionHash: svh,
    };
    this.renderedNow = (options.now ?? new Date()).toISOString().slice(0, 10);
  }

  get store(): RecordStore {
    return this.run.store;
  }

  /**
   * Computed once per context: a kind's plan is reused by the batches of one in-process step, and
   * computed again by a batch that runs on its own (an Inngest step).
   */
  memo<T>(key: string, compute: () => Promise<T>): Promise<T> {
    let value = this.memos.get(key) as Promise<T> | undefined;
    if (!value) {
      value = compute();
      this.memos.set(key, value);
      value.catch(() => this.memos.delete(key));
    }
    return value;
  }

  async checkCancelled() {
    if (this.options.signal?.aborted || (await this.run.store.isCancelled(this.run.runId))) throw new RunCancelled();
  }

  render(vars: Record<string, unknown>) {
    return renderTemplate((this.step as LlmFields).prompt ?? "", { now: this.renderedNow, ...vars });
  }

  newRecord(fields: Omit<NewRecord, "id" | "step" | "stepVersionHash" | "contentFingerprint">): NewRecord {
    return {
      id: randomUUID(),
      step: this.step.name,
      stepVersionHash: this.svh,
      contentFingerprint: contentFingerprint(fields.content),
      runId: this.run.runId,
      ...fields,
      metadata: { ...fields.metadata, step: { ...(fields.metadata.step as object), version_hash: this.svh } },
    };
  }

  /**
   * One model call. Transient errors are retried here with backoff (up to `maxAttempts`) unless the
   * provider already retried them; replay answers from stored responses.
   */
  async callModel(task: ModelTask, prompt: string, inputs: EngineRecord[], extra: Partial<ModelRequest> = {}) {
    const step = this.step as LlmFields;
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
    const renderedPromptHash = sha256(JSON.stringify([request.model, request.temperature, request.task, prompt, request.state ?? null]));
    if (this.options.replay) {
      const stored = await this.run.store.findResponse(this.run.workspaceId, renderedPromptHash);
      if (stored?.rawResponse !== undefined) {
        // The call's own audit: a split's first record also says which item of the call it was.
        const audit: Audit = { ...stored, renderedPromptHash, replayed: true, costUsd: 0 };
        delete audit.sharedCall;
        delete audit.responseItem;
        return { text: stored.rawResponse, audit };
      }
    }
    let attempt = 0;
    let response: ModelResponse;
    for (;;) {
      attempt += 1;
      this.stats.modelCalls += 1;
      try {
        response = await this.run.model.complete(request);
        break;
      } catch (err) {
        const retry =
          err instanceof ModelError && err.kind === "transient" && (err.options.attempts ?? 1) <= 1 && attempt < this.options.maxAttempts;
        if (!retry) {
          // Attempts are calls: the earlier engine attempts (one call each) plus the provider's own retries of this one.
          if (err instanceof ModelError) throw new ModelError(err.message, { ...err.options, kind: err.kind, attempts: attempt - 1 + (err.options.attempts ?? 1) });
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
      promptTemplateHash: sha256(step.prompt ?? ""),
      renderedPromptHash,
      // What the record was made from, readable on its page (long prompts are cut: the hash stays exact).
      renderedPrompt: prompt.length > RENDERED_PROMPT_LIMIT ? `${prompt.slice(0, RENDERED_PROMPT_LIMIT)}\n… (${prompt.length - RENDERED_PROMPT_LIMIT} more characters not kept)` : prompt,
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
}
