/**
 * Real model providers through the Vercel AI SDK: OpenAI, Anthropic and any OpenAI-compatible
 * endpoint (Ollama, vLLM, LM Studio, OpenRouter). One AiSdkModel serves one configured provider;
 * `request.model` is `<provider>/<model>` and the part after the first slash is sent to it.
 *
 * Resilience lives here (the SDK's own retries are off so every attempt is counted):
 * 429/408/409/5xx/timeouts/network errors are retried with exponential backoff + jitter,
 * honouring Retry-After; auth errors (401/403) and unknown models (404) are `permanent` (the run
 * stops); other 4xx, malformed JSON, refusals and empty answers fail one work item (`item`), with
 * the raw response. Every ModelError carries that kind. Keys never appear in messages.
 */
import type { LanguageModel } from "ai";
import { ModelError, type FailureKind, type ModelProvider, type ModelRequest, type ModelResponse } from "../engine/model";
import { redact } from "../auth/encryption";
import { limiterFor, ProviderLimiter } from "./limiter";
import { costOf, type PriceTable } from "./pricing";
import { countTokens } from "../text/tokens";
import { abortableSleep } from "./abortable-sleep";
import { parseModelId } from "../pipeline/model-id";

export { parseModelId };

export type ProviderKind = "openai" | "anthropic" | "openai-compatible";
export const PROVIDER_KINDS = ["openai", "anthropic", "openai-compatible"] as const satisfies readonly ProviderKind[];

export interface ProviderConfig {
  /** The provider prefix in model ids ("openai", "anthropic", or a workspace credential name). */
  name: string;
  kind: ProviderKind;
  baseUrl?: string | null;
  apiKey?: string | null;
  maxConcurrency?: number;
  requestsPerMinute?: number | null;
  timeoutMs?: number;
  /** The fetch its requests go through (workspace credentials: the outbound-checked one). */
  fetch?: typeof fetch;
}

export interface AiSdkModelOptions {
  /** Workspace price overrides. */
  prices?: PriceTable;
  /** Retries after the first attempt for transient errors (default 3). */
  maxRetries?: number;
  /** First backoff delay in ms (default 500), doubled per retry, +0–25% jitter. */
  retryBaseMs?: number;
  /** Longest wait honoured from a Retry-After header, in ms (default 60 s). */
  maxRetryAfterMs?: number;
  /** Shared limiter; default: the process-wide one for `limiterKey`. */
  limiter?: ProviderLimiter;
  /** Key of the process-wide limiter (default: the provider name). */
  limiterKey?: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;

const sleep = abortableSleep;

/** Retry-After (seconds or an HTTP date) or retry-after-ms, in ms. */
export function retryAfterMs(headers: Record<string, string> | undefined): number | null {
  if (!headers) return null;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number(lower["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0 && lower["retry-after-ms"] !== undefined) return ms;
  const value = lower["retry-after"];
  if (value === undefined) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : null;
}

interface Classified {
  kind: FailureKind;
  message: string;
  raw?: string;
  retryAfterMs?: number | null;
}

/**
 * The AI SDK and its providers, imported on the first model call: every process that loads the
 * services (each CLI command, scripts) would otherwise pay ~0.3 s for packages few of them use.
 */
let sdkLoading: Promise<Sdk> | undefined;
type Sdk = typeof import("ai") & {
  createAnthropic: typeof import("@ai-sdk/anthropic").createAnthropic;
  createOpenAI: typeof import("@ai-sdk/openai").createOpenAI;
  createOpenAICompatible: typeof import("@ai-sdk/openai-compatible").createOpenAICompatible;
};
function loadSdk(): Promise<Sdk> {
  sdkLoading ??= Promise.all([import("ai"), import("@ai-sdk/anthropic"), import("@ai-sdk/openai"), import("@ai-sdk/openai-compatible")]).then(
    ([ai, anthropic, openai, compatible]) => ({
      ...ai,
      createAnthropic: anthropic.createAnthropic,
      createOpenAI: openai.createOpenAI,
      createOpenAICompatible: compatible.createOpenAICompatible,
    }),
  );
  return sdkLoading;
}

export async function createLanguageModel(config: ProviderConfig, modelName: string): Promise<LanguageModel> {
  const { createAnthropic, createOpenAI, createOpenAICompatible } = await loadSdk();
  const apiKey = config.apiKey ?? undefined;
  const baseURL = config.baseUrl ?? undefined;
  switch (config.kind) {
    case "openai":
      return createOpenAI({ apiKey, baseURL, fetch: config.fetch }).chat(modelName);
    case "anthropic":
      return createAnthropic({ apiKey, baseURL, fetch: config.fetch })(modelName);
    case "openai-compatible":
      if (!baseURL) throw new ModelError(`Provider "${config.name}" has no base URL.`, { kind: "permanent" });
      return createOpenAICompatible({ name: config.name, baseURL, apiKey, includeUsage: true, supportsStructuredOutputs: true, fetch: config.fetch }).chatModel(modelName);
  }
}

export class AiSdkModel implements ModelProvider {
  readonly limiter: ProviderLimiter;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly maxRetryAfterMs: number;

  constructor(
    readonly config: ProviderConfig,
    private readonly options: AiSdkModelOptions = {},
  ) {
    this.limiter =
      options.limiter ??
      limiterFor(options.limiterKey ?? config.name, { maxConcurrency: config.maxConcurrency ?? 8, requestsPerMinute: config.requestsPerMinute });
    this.maxRetries = options.maxRetries ?? 3;
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  }

  private safe(text: string): string {
    return redact(text, [this.config.apiKey]);
  }

  private classify({ APICallError, NoObjectGeneratedError }: Sdk, err: unknown, timedOut: boolean): Classified {
    if (timedOut) return { kind: "transient", message: `timed out after ${this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` };
    if (NoObjectGeneratedError.isInstance(err)) {
      return { kind: "item", message: "The model's response is not valid JSON for the step's output schema.", raw: err.text ?? "" };
    }
    if (APICallError.isInstance(err)) {
      const status = err.statusCode;
      const raw = err.responseBody;
      // Every later call would fail the same way: the run stops instead of failing item by item.
      if (status === 401 || status === 403) {
        return { kind: "permanent", message: `authentication failed (HTTP ${status}): check the provider's API key`, raw };
      }
      if (status === 429 || status === 408 || status === 409 || (status !== undefined && status >= 500)) {
        return { kind: "transient", message: `HTTP ${status}`, raw, retryAfterMs: retryAfterMs(err.responseHeaders) };
      }
      if (status === 404) return { kind: "permanent", message: `HTTP 404 (unknown model or endpoint): ${err.message}`, raw };
      if (status === undefined) return { kind: "transient", message: `network error: ${err.message}` };
      return { kind: "item", message: `HTTP ${status}: ${err.message}`, raw };
    }
    const e = err as { name?: string; message?: string; cause?: { code?: string } };
    const code = e.cause?.code ?? "";
    if (/ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|UND_ERR/.test(code) || /fetch failed|socket hang up/i.test(e.message ?? "")) {
      return { kind: "transient", message: `network error: ${e.message ?? code}` };
    }
    return { kind: "item", message: e.message ?? String(err) };
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const { name } = parseModelId(request.model);
    const sdk = await loadSdk();
    const { generateText, jsonSchema, Output } = sdk;
    const model = await createLanguageModel(this.config, name);
    const timeoutMs = this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      request.signal?.throwIfAborted();
      const timeout = new AbortController();
      let timer: ReturnType<typeof setTimeout> | undefined;
      let started = performance.now();
      let failure: Classified;
      try {
        const result = await this.limiter.run(() => {
          // The timeout covers the HTTP call only, not the wait for a concurrency/rate slot.
          started = performance.now();
          timer = setTimeout(() => timeout.abort(new Error("timeout")), timeoutMs);
          const signal = request.signal ? AbortSignal.any([request.signal, timeout.signal]) : timeout.signal;
          return generateText({
            model,
            prompt: request.prompt,
            temperature: request.temperature,
            maxOutputTokens: request.maxOutputTokens,
            maxRetries: 0,
            abortSignal: signal,
            ...(request.jsonSchema ? { output: Output.object({ schema: jsonSchema(request.jsonSchema as Parameters<typeof jsonSchema>[0]) }) } : {}),
          });
        }, request.signal);
        const latencyMs = Math.round(performance.now() - started);
        // The model's own text is what replay reproduces; structured output that arrived as a
        // tool call (no text) is serialized.
        const raw = result.text || (request.jsonSchema && result.output !== undefined ? JSON.stringify(result.output) : "");
        const text = raw;
        const tokensIn = result.usage.inputTokens ?? countTokens(request.prompt);
        const tokensOut = result.usage.outputTokens ?? countTokens(raw);
        if (!raw.trim()) {
          throw new ModelError(`${request.model}: the model returned an empty response (finish reason: ${result.finishReason}).`, { raw, attempts });
        }
        if (result.finishReason === "content-filter") {
          throw new ModelError(`${request.model}: the model refused (content filter).`, { raw, attempts });
        }
        return {
          text,
          raw,
          model: request.model,
          tokensIn,
          tokensOut,
          costUsd: costOf(request.model, tokensIn, tokensOut, this.options.prices),
          latencyMs,
          attempts,
        };
      } catch (err) {
        if (err instanceof ModelError) throw err;
        if (request.signal?.aborted) throw request.signal.reason ?? err;
        failure = this.classify(sdk, err, timeout.signal.aborted);
      } finally {
        clearTimeout(timer);
      }
      const message = this.safe(`${request.model}: ${failure.message}`);
      const raw = failure.raw === undefined ? undefined : this.safe(failure.raw);
      if (failure.kind !== "transient") throw new ModelError(message, { raw, attempts, kind: failure.kind });
      if (attempts > this.maxRetries) {
        // Still transient, but this provider's retries are spent (`attempts` says so): the engine
        // does not retry it again in process; Inngest, which runs with maxRetries 0, retries the batch.
        throw new ModelError(`${message} (gave up after ${attempts} attempts)`, { raw, attempts, kind: "transient" });
      }
      const backoff = this.retryBaseMs * 2 ** (attempts - 1) * (1 + Math.random() * 0.25);
      const wait = failure.retryAfterMs != null ? Math.min(failure.retryAfterMs, this.maxRetryAfterMs) : backoff;
      await sleep(wait, request.signal);
    }
  }
}
