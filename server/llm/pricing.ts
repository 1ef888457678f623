/**
 * Model prices in USD per million tokens (input / output). The built-in table covers common
 * OpenAI, Anthropic and open models; a workspace can override any entry (ModelPrice rows).
 * Models are matched by their full id (`provider/model`), then by the bare model name, then by
 * the longest known prefix of the bare name (dated snapshots such as gpt-4o-2024-08-06).
 */

export interface Price {
  inputPerMillion: number;
  outputPerMillion: number;
}

export type PriceTable = Record<string, Price>;

const p = (inputPerMillion: number, outputPerMillion: number): Price => ({ inputPerMillion, outputPerMillion });

/** Keyed by bare model name (no provider prefix) unless the provider matters (offline). */
export const BUILTIN_PRICES: PriceTable = {
  // OpenAI
  "gpt-4o": p(2.5, 10),
  "gpt-4o-mini": p(0.15, 0.6),
  "gpt-4.1": p(2, 8),
  "gpt-4.1-mini": p(0.4, 1.6),
  "gpt-4.1-nano": p(0.1, 0.4),
  "gpt-5": p(1.25, 10),
  "gpt-5-mini": p(0.25, 2),
  "gpt-5-nano": p(0.05, 0.4),
  "gpt-4-turbo": p(10, 30),
  "gpt-3.5-turbo": p(0.5, 1.5),
  o1: p(15, 60),
  "o1-mini": p(1.1, 4.4),
  o3: p(2, 8),
  "o3-mini": p(1.1, 4.4),
  "o4-mini": p(1.1, 4.4),
  "text-embedding-3-small": p(0.02, 0),
  "text-embedding-3-large": p(0.13, 0),
  // Anthropic
  "claude-opus-4": p(15, 75),
  "claude-sonnet-4": p(3, 15),
  "claude-3-7-sonnet": p(3, 15),
  "claude-3-5-sonnet": p(3, 15),
  "claude-3-5-haiku": p(0.8, 4),
  "claude-haiku-4-5": p(1, 5),
  "claude-3-haiku": p(0.25, 1.25),
  "claude-3-opus": p(15, 75),
  // Open models (typical hosted prices, e.g. OpenRouter / Together)
  "llama-3.1-8b-instruct": p(0.05, 0.08),
  "llama-3.1-70b-instruct": p(0.4, 0.4),
  "llama-3.3-70b-instruct": p(0.3, 0.4),
  "llama-3.1-405b-instruct": p(3, 3),
  "mistral-7b-instruct": p(0.05, 0.1),
  "mixtral-8x7b-instruct": p(0.24, 0.24),
  "qwen-2.5-72b-instruct": p(0.35, 0.4),
  "deepseek-chat": p(0.27, 1.1),
  "deepseek-r1": p(0.55, 2.19),
  // Offline (no network, no cost)
  offline: p(0, 0),
};

/** Providers that never cost money (local servers). */
const FREE_PROVIDERS = new Set(["offline", "ollama", "lmstudio"]);

function bareName(model: string): { provider: string | null; name: string } {
  const slash = model.indexOf("/");
  if (slash < 0) return { provider: null, name: model };
  return { provider: model.slice(0, slash), name: model.slice(slash + 1) };
}

/**
 * The price of `model` (`provider/model` or bare), overrides first. Unknown models price at 0
 * and report `known: false` so the UI can say the estimate is incomplete.
 */
export function priceOf(model: string, overrides: PriceTable = {}): Price & { known: boolean; source: "override" | "builtin" | "unknown" } {
  const { provider, name } = bareName(model);
  if (overrides[model]) return { ...overrides[model]!, known: true, source: "override" };
  if (overrides[name]) return { ...overrides[name]!, known: true, source: "override" };
  if (provider && FREE_PROVIDERS.has(provider)) return { ...BUILTIN_PRICES.offline!, known: true, source: "builtin" };
  if (BUILTIN_PRICES[model]) return { ...BUILTIN_PRICES[model]!, known: true, source: "builtin" };
  // Strip an org prefix as OpenRouter uses it ("meta-llama/llama-3.1-8b-instruct").
  const candidates = [name, name.split("/").at(-1)!];
  for (const candidate of candidates) {
    if (BUILTIN_PRICES[candidate]) return { ...BUILTIN_PRICES[candidate]!, known: true, source: "builtin" };
  }
  let best: string | null = null;
  for (const candidate of candidates) {
    for (const key of Object.keys(BUILTIN_PRICES)) {
      if (candidate.startsWith(key) && (!best || key.length > best.length)) best = key;
    }
  }
  if (best) return { ...BUILTIN_PRICES[best]!, known: true, source: "builtin" };
  return { inputPerMillion: 0, outputPerMillion: 0, known: false, source: "unknown" };
}

/** USD for one call. */
export function costOf(model: string, tokensIn: number, tokensOut: number, overrides: PriceTable = {}): number {
  const price = priceOf(model, overrides);
  return (tokensIn * price.inputPerMillion + tokensOut * price.outputPerMillion) / 1_000_000;
}
