/**
 * The engine's view of a language model. Providers (offline, OpenAI, Anthropic, OpenAI-compatible)
 * implement it in server/llm; the engine never imports an SDK.
 */

/** What the step is asking for. The offline model works from this and the inputs, not the prompt's prose. */
export type ModelTask =
  | "summarize" // transform / aggregate: one text from the input record(s)
  | "extract-list" // split with a prompt: a list of items (facts, observations, entities)
  | "fold" // fold: new state from the previous state and the next record
  | "compress" // fold state over maxStateTokens: a shorter state
  | "classify" // a short label
  | "json"; // structured output matching `jsonSchema`

export interface ModelInput {
  id: string;
  content: string;
  metadata?: Record<string, unknown>;
}

export interface ModelRequest {
  /** `provider/model`, e.g. "offline/extractive" or "openai/gpt-4o-mini". */
  model: string;
  prompt: string;
  temperature: number;
  task: ModelTask;
  /** The records the prompt was rendered from (the offline model summarizes these). */
  inputs: ModelInput[];
  /** Fold/compress: the previous state. */
  state?: string;
  /** Structured output: a JSON schema the response must satisfy. */
  jsonSchema?: Record<string, unknown>;
  /** Upper bound for the answer, in tokens. */
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

export interface ModelResponse {
  text: string;
  /** Exactly what the provider returned (for audit and replay). */
  raw: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  latencyMs: number;
  /** How many attempts the provider needed (retries on 429/5xx/timeouts). */
  attempts?: number;
}

export interface ModelProvider {
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/**
 * What retrying can do about a failure, carried by the error itself (never guessed from its message):
 * - `transient`: 429, 5xx, timeouts, network: the same call may succeed later, so it is retried
 *   (by the provider, the in-process runner, or Inngest);
 * - `permanent`: retrying cannot help any work item (bad credentials, unknown provider or model):
 *   the run fails with the reason, and Inngest does not retry it;
 * - `item`: this work item's input or answer is bad (malformed JSON, refusal, empty answer): the
 *   item is a recorded, retryable failure and the run goes on.
 */
export type FailureKind = "transient" | "permanent" | "item";

/** An error with a failure kind: what the runners decide retries and run status from. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
  ) {
    super(message);
    this.name = "EngineError";
  }
}

/** The failure kind of any error: an EngineError says it; anything else is one failed item. */
export function failureKind(err: unknown): FailureKind {
  return err instanceof EngineError ? err.kind : "item";
}

/** A model call that failed (with the raw response when there is one). */
export class ModelError extends EngineError {
  constructor(
    message: string,
    public readonly options: { raw?: string; attempts?: number; kind?: FailureKind } = {},
  ) {
    super(message, options.kind ?? "item");
    this.name = "ModelError";
  }
}
