/**
 * A scriptable provider for tests and benchmarks: wraps another provider (the offline model by
 * default), records every request, and fails on demand (transient failures for retry tests,
 * predicate-driven failures for malformed-output and failed-work-item tests).
 */
import { ModelError, type ModelProvider, type ModelRequest, type ModelResponse } from "../engine/model";
import { OfflineModel } from "./offline-model";
import { abortableSleep } from "./abortable-sleep";

export interface ScriptedModelOptions {
  /** Artificial latency per call, in ms (default 0: no timer at all). */
  latencyMs?: number;
}

interface FailureRule {
  predicate: (request: ModelRequest) => boolean;
  error: () => Error;
}

const sleep = abortableSleep;

export class ScriptedModel implements ModelProvider {
  /** Every request received, in order (including the ones that were made to fail). */
  readonly calls: ModelRequest[] = [];
  /** Artificial latency per call, in ms; 0 by default. */
  latencyMs: number;

  private readonly rules: FailureRule[] = [];
  private transientFailures = 0;

  constructor(
    private readonly inner: ModelProvider = new OfflineModel(),
    options: ScriptedModelOptions = {},
  ) {
    this.latencyMs = options.latencyMs ?? 0;
  }

  /** Throw `error()` for every request matching `predicate` (rules are checked in order). */
  failWhen(predicate: (request: ModelRequest) => boolean, error: () => Error): this {
    this.rules.push({ predicate, error });
    return this;
  }

  /** Fail the next `n` calls with a transient ModelError (as a 429/5xx/timeout would). */
  failTimes(n: number): this {
    this.transientFailures += Math.max(0, Math.floor(n));
    return this;
  }

  /** Forget the failure rules, pending transient failures and recorded calls. */
  reset(): this {
    this.rules.length = 0;
    this.transientFailures = 0;
    this.calls.length = 0;
    return this;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.calls.push(request);
    if (this.latencyMs > 0) await sleep(this.latencyMs, request.signal);
    if (this.transientFailures > 0) {
      this.transientFailures--;
      throw new ModelError("scripted transient failure", { kind: "transient" });
    }
    for (const rule of this.rules) if (rule.predicate(request)) throw rule.error();
    const response = await this.inner.complete(request);
    return this.latencyMs > 0 ? { ...response, latencyMs: response.latencyMs + this.latencyMs } : response;
  }
}
