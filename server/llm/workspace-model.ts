/**
 * The model provider a run uses: dispatches on `request.model` = `<provider>/<model>`.
 * - `offline/*` → the offline extractive model (no network);
 * - a workspace ProviderCredential name → that provider (key decrypted in memory only);
 * - `openai` / `anthropic` without a credential → env vars (OPENAI_API_KEY, OPENAI_BASE_URL,
 *   ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), the CLI's path.
 * Costs use the workspace's price overrides over the built-in table.
 */
import { decryptSecret } from "../auth/encryption";
import { outboundFetch } from "../http/outbound";
import { ModelError, type ModelProvider, type ModelRequest, type ModelResponse } from "../engine/model";
import type { DbTx } from "../core/db";
import { OfflineModel, isOfflineModel } from "./offline-model";
import type { PriceTable } from "./pricing";
import { AiSdkModel, parseModelId, PROVIDER_KINDS, type ProviderConfig, type ProviderKind } from "./sdk-model";

export interface WorkspaceModelOptions {
  /** Retries after the first attempt per call (default 3). */
  maxRetries?: number;
  retryBaseMs?: number;
  env?: Record<string, string | undefined>;
}

/** Provider configs from env vars (for the CLI and as a fallback for `openai/…`, `anthropic/…`). */
export function envProviderConfig(provider: string, env: Record<string, string | undefined> = process.env): ProviderConfig | null {
  if (provider === "openai" && (env.OPENAI_API_KEY || env.OPENAI_BASE_URL)) {
    return { name: "openai", kind: "openai", apiKey: env.OPENAI_API_KEY ?? null, baseUrl: env.OPENAI_BASE_URL ?? null };
  }
  if (provider === "anthropic" && env.ANTHROPIC_API_KEY) {
    return { name: "anthropic", kind: "anthropic", apiKey: env.ANTHROPIC_API_KEY, baseUrl: env.ANTHROPIC_BASE_URL ?? null };
  }
  return null;
}

export interface CredentialRow {
  name: string;
  kind: string;
  baseUrl: string | null;
  encryptedKey: string | null;
  maxConcurrency: number;
  requestsPerMinute: number | null;
  timeoutMs: number;
}

export function configFromCredential(row: CredentialRow): ProviderConfig {
  const kind = (PROVIDER_KINDS as readonly string[]).includes(row.kind) ? (row.kind as ProviderKind) : "openai-compatible";
  return {
    name: row.name,
    kind,
    baseUrl: row.baseUrl,
    apiKey: row.encryptedKey ? decryptSecret(row.encryptedKey) : null,
    maxConcurrency: row.maxConcurrency,
    requestsPerMinute: row.requestsPerMinute,
    timeoutMs: row.timeoutMs,
    // A workspace's base URL is user input: every request is checked against private addresses.
    fetch: outboundFetch(),
  };
}

/** A router over providers; credentials and prices are loaded once (lazily) per instance. */
export class RoutingModel implements ModelProvider {
  private readonly offline = new OfflineModel();
  private readonly providers = new Map<string, AiSdkModel>();
  private loaded: Promise<{ credentials: Map<string, CredentialRow>; prices: PriceTable }> | null = null;

  constructor(
    private readonly load: () => Promise<{ credentials: CredentialRow[]; prices: PriceTable }>,
    private readonly scopeKey: string,
    private readonly options: WorkspaceModelOptions = {},
  ) {}

  private async state() {
    this.loaded ??= this.load().then(({ credentials, prices }) => ({
      credentials: new Map(credentials.map((c) => [c.name, c])),
      prices,
    }));
    return this.loaded;
  }

  /** The provider serving `model`, or null for the offline model. */
  async providerFor(model: string): Promise<AiSdkModel | null> {
    if (isOfflineModel(model)) return null;
    const { provider } = parseModelId(model);
    if (provider === "offline") return null;
    const cached = this.providers.get(provider);
    if (cached) return cached;
    const { credentials, prices } = await this.state();
    const row = credentials.get(provider);
    const config = row ? configFromCredential(row) : envProviderConfig(provider, this.options.env);
    if (!config) {
      throw new ModelError(
        `No model provider named "${provider}" (model "${model}"). Add it in Settings → Models, or set ${provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"} for the CLI.`,
        { kind: "permanent" },
      );
    }
    const created = new AiSdkModel(config, {
      prices,
      limiterKey: `${this.scopeKey}:${provider}`,
      maxRetries: this.options.maxRetries,
      retryBaseMs: this.options.retryBaseMs,
    });
    this.providers.set(provider, created);
    return created;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const provider = await this.providerFor(request.model);
    return provider ? provider.complete(request) : this.offline.complete(request);
  }
}

/** The model provider for runs of `workspaceId`: its credentials, its prices, env as fallback. */
export function workspaceModel(db: DbTx, workspaceId: string, options: WorkspaceModelOptions = {}): RoutingModel {
  return new RoutingModel(
    async () => {
      const [credentials, prices] = await Promise.all([
        db.providerCredential.findMany({ where: { workspaceId } }),
        db.modelPrice.findMany({ where: { workspaceId } }),
      ]);
      return {
        credentials,
        prices: Object.fromEntries(prices.map((p) => [p.model, { inputPerMillion: p.inputPerMillion, outputPerMillion: p.outputPerMillion }])),
      };
    },
    workspaceId,
    options,
  );
}

/** The CLI's model provider: env vars only, no database. */
export function envModel(options: WorkspaceModelOptions = {}): RoutingModel {
  return new RoutingModel(async () => ({ credentials: [], prices: {} }), "env", options);
}
