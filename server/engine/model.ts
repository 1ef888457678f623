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

/** A failure the runner records as a failed work item (with the raw response when there is one). */
export class ModelError extends Error {
  constructor(
    message: string,
    public readonly options: { raw?: string; attempts?: number; transient?: boolean; permanent?: boolean } = {},
  ) {
    super(message);
    this.name = "ModelError";
  }
}
