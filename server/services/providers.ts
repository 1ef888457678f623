/**
 * Model-provider settings per workspace (Settings → Models) and the pricing table.
 * API keys are encrypted at rest and never leave the server after saving: every read returns
 * `keyPreview` only.
 */
import { z } from "zod";
import { encryptSecret, keyPreview } from "../auth/encryption";
import { assertOutboundUrl, dnsFailureCode, dnsProblem, OutboundUrlError } from "../http/outbound";
import { ModelError } from "../engine/model";
import { BUILTIN_PRICES, priceOf } from "../llm/pricing";
import { AiSdkModel, PROVIDER_KINDS } from "../llm/sdk-model";
import { configFromCredential } from "../llm/workspace-model";
import { ProviderLimiter } from "../llm/limiter";
import type { DbTx } from "../core/db";
import { badRequest, notFound } from "../core/errors";

const RESERVED = new Set(["offline"]);

export const providerNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(40)
  .regex(/^[a-z0-9][a-z0-9._-]*$/, "Use lowercase letters, digits, '.', '_' or '-' (it is the prefix in model ids, e.g. openrouter/…).");

export const upsertProviderInput = z.object({
  name: providerNameSchema,
  kind: z.enum(PROVIDER_KINDS),
  baseUrl: z.string().trim().url().max(500).nullable().optional(),
  /** Write-only. Omitted: keep the stored key (refused when the base URL or kind changes). Empty string: remove it. */
  apiKey: z.string().max(500).optional(),
  maxConcurrency: z.number().int().min(1).max(512).default(8),
  requestsPerMinute: z.number().int().min(1).max(1_000_000).nullable().optional(),
  timeoutMs: z.number().int().min(1000).max(600_000).default(60_000),
});
export type UpsertProviderInput = z.input<typeof upsertProviderInput>;

export const setPriceInput = z.object({
  model: z.string().trim().min(1).max(200),
  inputPerMillion: z.number().min(0).max(10_000),
  outputPerMillion: z.number().min(0).max(10_000),
});

export interface ProviderView {
  id: string;
  name: string;
  kind: string;
  baseUrl: string | null;
  hasKey: boolean;
  keyPreview: string | null;
  maxConcurrency: number;
  requestsPerMinute: number | null;
  timeoutMs: number;
  updatedAt: Date;
}

function view(row: {
  id: string;
  name: string;
  kind: string;
  baseUrl: string | null;
  encryptedKey: string | null;
  keyPreview: string | null;
  maxConcurrency: number;
  requestsPerMinute: number | null;
  timeoutMs: number;
  updatedAt: Date;
}): ProviderView {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    baseUrl: row.baseUrl,
    hasKey: Boolean(row.encryptedKey),
    keyPreview: row.encryptedKey ? row.keyPreview : null,
    maxConcurrency: row.maxConcurrency,
    requestsPerMinute: row.requestsPerMinute,
    timeoutMs: row.timeoutMs,
    updatedAt: row.updatedAt,
  };
}

export async function listProviders(db: DbTx, workspaceId: string): Promise<ProviderView[]> {
  const rows = await db.providerCredential.findMany({ where: { workspaceId }, orderBy: { name: "asc" } });
  return rows.map(view);
}

export async function upsertProvider(db: DbTx, workspaceId: string, raw: UpsertProviderInput): Promise<ProviderView> {
  const input = upsertProviderInput.parse(raw);
  if (RESERVED.has(input.name)) throw badRequest(`"${input.name}" is reserved for the built-in offline model.`);
  if (input.kind === "openai-compatible" && !input.baseUrl) throw badRequest("An OpenAI-compatible provider needs a base URL (e.g. http://localhost:11434/v1).");
  if (input.baseUrl) {
    try {
      await assertOutboundUrl(input.baseUrl);
    } catch (err) {
      if (err instanceof OutboundUrlError) throw badRequest(`Base URL: ${err.message}`);
      throw err;
    }
  }
  const key = input.apiKey?.trim();
  if (key === undefined) {
    // The stored key must never follow the provider somewhere new (test connection would send it there).
    const existing = await db.providerCredential.findUnique({ where: { workspaceId_name: { workspaceId, name: input.name } } });
    if (existing?.encryptedKey && (existing.kind !== input.kind || (existing.baseUrl ?? null) !== (input.baseUrl ?? null))) {
      throw badRequest(`Changing the base URL or kind of "${input.name}" needs its API key again: enter the key (or an empty key to remove it).`);
    }
  }
  const keyFields =
    key === undefined ? {} : key === "" ? { encryptedKey: null, keyPreview: null } : { encryptedKey: encryptSecret(key), keyPreview: keyPreview(key) };
  const fields = {
    kind: input.kind,
    baseUrl: input.baseUrl ?? null,
    maxConcurrency: input.maxConcurrency,
    requestsPerMinute: input.requestsPerMinute ?? null,
    timeoutMs: input.timeoutMs,
  };
  const row = await db.providerCredential.upsert({
    where: { workspaceId_name: { workspaceId, name: input.name } },
    create: { workspaceId, name: input.name, ...fields, ...keyFields },
    update: { ...fields, ...keyFields },
  });
  return view(row);
}

export async function deleteProvider(db: DbTx, workspaceId: string, name: string) {
  const result = await db.providerCredential.deleteMany({ where: { workspaceId, name } });
  if (result.count === 0) throw notFound(`No provider named "${name}".`);
  return { deleted: name };
}

const DEFAULT_TEST_MODEL: Record<string, string> = {
  openai: "gpt-4o-mini",
  anthropic: "claude-3-5-haiku-latest",
  "openai-compatible": "gpt-4o-mini",
};

/**
 * What "test connection" may say: reachable, or a provider-level problem. Never socket errors,
 * raw statuses or response bodies (they would make it a port scanner for whatever the URL names).
 */
function connectionVerdict(err: unknown): string {
  const message = err instanceof Error ? err.message : "";
  const dns = dnsFailureCode(err);
  if (dns) return `DNS: the provider's host name did not resolve (${dns}). Check this server's DNS and network, or the host name.`;
  if (err instanceof ModelError && /authentication failed/.test(message)) return "Reachable, but the provider refused the API key.";
  if (err instanceof ModelError && /HTTP 429/.test(message)) return "Reachable, but the provider is rate-limiting this key: try again later.";
  return "Could not reach a compatible provider at this base URL: check the URL, the kind and the model name.";
}

/** One tiny completion through the saved provider (no retries). Never echoes the key. */
export async function testProviderConnection(db: DbTx, workspaceId: string, input: { name: string; model?: string }) {
  const row = await db.providerCredential.findUnique({ where: { workspaceId_name: { workspaceId, name: input.name } } });
  if (!row) throw notFound(`No provider named "${input.name}".`);
  const model = `${row.name}/${input.model?.trim() || DEFAULT_TEST_MODEL[row.kind] || "gpt-4o-mini"}`;
  let config;
  try {
    config = configFromCredential(row);
  } catch (err) {
    return { ok: false as const, model, latencyMs: 0, message: (err as Error).message };
  }
  if (row.baseUrl) {
    // Checked again now (the allowance or DNS may have changed since it was saved); the request itself is checked too.
    try {
      await assertOutboundUrl(row.baseUrl);
    } catch (err) {
      if (err instanceof OutboundUrlError) return { ok: false as const, model, latencyMs: 0, message: err.message };
      throw err;
    }
    const dns = await dnsProblem(row.baseUrl);
    if (dns) return { ok: false as const, model, latencyMs: 0, message: dns };
  }
  const provider = new AiSdkModel({ ...config, timeoutMs: Math.min(config.timeoutMs ?? 20_000, 20_000) }, {
    maxRetries: 0,
    limiter: new ProviderLimiter({ maxConcurrency: 1 }),
  });
  const started = Date.now();
  try {
    const res = await provider.complete({ model, prompt: "Reply with the single word OK.", temperature: 0, task: "summarize", inputs: [], maxOutputTokens: 5 });
    return { ok: true as const, model, latencyMs: Date.now() - started, message: `Reachable: ${res.tokensIn} tokens in, ${res.tokensOut} out.` };
  } catch (err) {
    return { ok: false as const, model, latencyMs: Date.now() - started, message: connectionVerdict(err) };
  }
}

// ---- pricing ----

export interface PriceRow {
  model: string;
  inputPerMillion: number;
  outputPerMillion: number;
  source: "builtin" | "override";
  builtin: { inputPerMillion: number; outputPerMillion: number } | null;
}

/** The effective pricing table: every built-in entry plus the workspace's overrides. */
export async function listPrices(db: DbTx, workspaceId: string): Promise<PriceRow[]> {
  const overrides = await db.modelPrice.findMany({ where: { workspaceId } });
  const byModel = new Map<string, PriceRow>();
  for (const [model, price] of Object.entries(BUILTIN_PRICES)) {
    byModel.set(model, { model, ...price, source: "builtin", builtin: price });
  }
  for (const o of overrides) {
    const builtin = priceOf(o.model);
    byModel.set(o.model, {
      model: o.model,
      inputPerMillion: o.inputPerMillion,
      outputPerMillion: o.outputPerMillion,
      source: "override",
      builtin: builtin.known ? { inputPerMillion: builtin.inputPerMillion, outputPerMillion: builtin.outputPerMillion } : null,
    });
  }
  return [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model));
}

export async function setPrice(db: DbTx, workspaceId: string, raw: z.input<typeof setPriceInput>) {
  const input = setPriceInput.parse(raw);
  return db.modelPrice.upsert({
    where: { workspaceId_model: { workspaceId, model: input.model } },
    create: { workspaceId, ...input },
    update: { inputPerMillion: input.inputPerMillion, outputPerMillion: input.outputPerMillion },
  });
}

/** Drop an override: the built-in price applies again. */
export async function resetPrice(db: DbTx, workspaceId: string, model: string) {
  await db.modelPrice.deleteMany({ where: { workspaceId, model } });
  return { reset: model };
}

export async function priceOverrides(db: DbTx, workspaceId: string) {
  const rows = await db.modelPrice.findMany({ where: { workspaceId } });
  return Object.fromEntries(rows.map((p) => [p.model, { inputPerMillion: p.inputPerMillion, outputPerMillion: p.outputPerMillion }]));
}
