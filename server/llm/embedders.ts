/**
 * Embedders beyond the offline hashing default (server/llm/embedder.ts):
 * - OpenAICompatibleEmbedder: any `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, LM Studio…),
 *   batched, with retries on 429/5xx/timeouts;
 * - TransformersEmbedder: a local ONNX model loaded by transformers.js from a path on disk, only
 *   when `@huggingface/transformers` is installed (it is not a dependency; dynamic import).
 * Ids are `<provider>/<model>` (and `local/<model dir>`), stored with every vector.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { redact } from "../auth/encryption";
import type { Embedder } from "./embedder";
import { retryAfterMs } from "./sdk-model";
import { outboundFetch } from "../http/outbound";

/** Known output sizes, so no probe call is needed. */
export const KNOWN_EMBEDDING_DIMENSIONS: Record<string, number> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "text-embedding-ada-002": 1536,
  "nomic-embed-text": 768,
  "mxbai-embed-large": 1024,
  "all-minilm": 384,
  "bge-small-en-v1.5": 384,
  "bge-base-en-v1.5": 768,
};

export interface OpenAICompatibleEmbedderOptions {
  /** Stored id, e.g. "openai/text-embedding-3-small". */
  id: string;
  /** Model name sent to the endpoint. */
  model: string;
  baseUrl: string;
  apiKey?: string | null;
  /** Expected vector size (0: unknown, not checked — for probing). */
  dimensions: number;
  /** Send `dimensions` in the request (OpenAI text-embedding-3 can shorten its vectors). */
  requestDimensions?: boolean;
  batchSize?: number;
  timeoutMs?: number;
  maxRetries?: number;
  retryBaseMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class OpenAICompatibleEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  /** HTTP requests made (including retries). */
  requests = 0;

  constructor(private readonly options: OpenAICompatibleEmbedderOptions) {
    this.id = options.id;
    this.dimensions = options.dimensions;
  }

  private async batch(texts: string[]): Promise<number[][]> {
    const { baseUrl, apiKey, model } = this.options;
    const maxRetries = this.options.maxRetries ?? 3;
    for (let attempt = 1; ; attempt++) {
      this.requests += 1;
      let status = 0;
      let retryAfter: number | null = null;
      let detail = "";
      try {
        // Base URLs come from workspace settings: only public addresses (see server/http/outbound.ts).
        const res = await outboundFetch()(`${baseUrl.replace(/\/$/, "")}/embeddings`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
          body: JSON.stringify({ model, input: texts, encoding_format: "float", ...(this.options.requestDimensions ? { dimensions: this.dimensions } : {}) }),
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 60_000),
        });
        status = res.status;
        const body = await res.text();
        if (res.ok) {
          const parsed = JSON.parse(body) as { data: Array<{ index: number; embedding: number[] }> };
          const vectors = [...parsed.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
          if (vectors.length !== texts.length) throw new Error(`expected ${texts.length} vectors, got ${vectors.length}`);
          for (const v of vectors) {
            if (this.dimensions > 0 && v.length !== this.dimensions) throw new Error(`${this.id} returned ${v.length} dimensions, expected ${this.dimensions}`);
          }
          return vectors;
        }
        retryAfter = retryAfterMs(Object.fromEntries(res.headers.entries()));
        detail = body.slice(0, 300);
      } catch (err) {
        if (status === 200) throw new Error(redact(`Embedding with ${this.id} failed: ${(err as Error).message}`, [apiKey]));
        detail = (err as Error).message;
      }
      const transient = status === 0 || status === 429 || status === 408 || status >= 500;
      if (!transient || attempt > maxRetries) {
        const what = status === 401 || status === 403 ? "authentication failed (check the provider's API key)" : status ? `HTTP ${status}` : "network error";
        throw new Error(redact(`Embedding with ${this.id} failed: ${what}: ${detail}`, [apiKey]));
      }
      await sleep(retryAfter ?? (this.options.retryBaseMs ?? 500) * 2 ** (attempt - 1) * (1 + Math.random() * 0.25));
    }
  }

  async embed(texts: string[]): Promise<number[][]> {
    const size = this.options.batchSize ?? 64;
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.batch(texts.slice(i, i + size))));
    return out;
  }
}

/** The directory local ONNX models are read from (SYNTHEX_LOCAL_MODELS, default ./models). */
export function localModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(/*turbopackIgnore: true*/ env.SYNTHEX_LOCAL_MODELS ?? "models");
}

type FeatureExtractor = (texts: string[], options: { pooling: "mean"; normalize: boolean }) => Promise<{ tolist(): number[][] }>;

/** Load `@huggingface/transformers` if it is installed; a clear error otherwise. */
export async function loadTransformers(): Promise<{
  env: Record<string, unknown>;
  pipeline: (task: string, model: string, options?: Record<string, unknown>) => Promise<FeatureExtractor>;
}> {
  const specifier = "@huggingface/transformers";
  try {
    return (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as never;
  } catch {
    throw new Error(
      "Local ONNX embeddings need the optional package @huggingface/transformers, which is not installed. Run `npm install @huggingface/transformers` and put the model (config.json, tokenizer.json, onnx/model.onnx) in a local folder.",
    );
  }
}

/**
 * A local ONNX model through transformers.js, from a directory (absolute, or relative to
 * SYNTHEX_LOCAL_MODELS). Never downloads: remote models are disabled.
 */
export class TransformersEmbedder implements Embedder {
  readonly id: string;
  private extractor: Promise<FeatureExtractor> | null = null;

  constructor(
    readonly modelPath: string,
    readonly dimensions: number,
  ) {
    this.id = `local/${path.basename(modelPath)}`;
  }

  /** Reads the hidden size from the model's config.json. */
  static async fromPath(modelPath: string): Promise<TransformersEmbedder> {
    const dir = path.resolve(localModelsDir(), modelPath);
    let config: { hidden_size?: number; dim?: number; d_model?: number };
    try {
      config = JSON.parse(await readFile(path.join(dir, "config.json"), "utf8"));
    } catch {
      throw new Error(`No local model at ${dir} (config.json not found).`);
    }
    const dims = config.hidden_size ?? config.dim ?? config.d_model;
    if (!dims) throw new Error(`Cannot tell the embedding size of ${dir}: config.json has no hidden_size.`);
    return new TransformersEmbedder(dir, dims);
  }

  private load() {
    this.extractor ??= loadTransformers().then(async ({ env, pipeline }) => {
      env.allowRemoteModels = false;
      env.localModelPath = path.dirname(this.modelPath);
      return pipeline("feature-extraction", path.basename(this.modelPath), { local_files_only: true });
    });
    return this.extractor;
  }

  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const extract = await this.load();
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += 32) {
      const tensor = await extract(texts.slice(i, i + 32), { pooling: "mean", normalize: true });
      out.push(...tensor.tolist());
    }
    return out;
  }
}
