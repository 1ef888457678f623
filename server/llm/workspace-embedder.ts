/**
 * Which embedder a workspace uses for an embedder id: offline hashing, a local ONNX model, or an
 * OpenAI-compatible endpoint with the workspace's credential (decrypted here, never logged).
 */
import { decryptSecret } from "../auth/encryption";
import type { DbTx } from "../core/db";
import { OFFLINE_EMBEDDER_ID, OfflineHashEmbedder, type Embedder } from "./embedder";
import { KNOWN_EMBEDDING_DIMENSIONS, OpenAICompatibleEmbedder, TransformersEmbedder } from "./embedders";
import { parseModelId } from "./sdk-model";

/**
 * The embedder named `id` for a workspace (default: the offline hashing embedder):
 * - `offline/hash2-<dims>` (the default, hashing v2) or the legacy `offline/hash-<dims>`;
 * - `local/<model dir>`: a local ONNX model through transformers.js (if installed);
 * - `<provider>/<model>[@<dims>]`: an OpenAI-compatible embeddings endpoint, with the
 *   workspace credential named `<provider>` or, for `openai`, OPENAI_API_KEY / OPENAI_BASE_URL.
 */
export async function getEmbedder(db: DbTx, workspaceId: string, id: string = OFFLINE_EMBEDDER_ID): Promise<Embedder> {
  const offline = /^offline\/hash(2?)-(\d+)$/.exec(id);
  if (offline) return new OfflineHashEmbedder(Number(offline[2]), offline[1] ? 2 : 1);
  if (id === "offline" || id === "offline/hash") return new OfflineHashEmbedder();
  const { provider, name: rest } = parseModelId(id);
  if (provider === "local") return TransformersEmbedder.fromPath(rest);
  const at = rest.lastIndexOf("@");
  const model = at > 0 ? rest.slice(0, at) : rest;
  const requested = at > 0 ? Number(rest.slice(at + 1)) : null;
  if (!model) throw new Error(`Embedding model id "${id}" should be "<provider>/<model>", e.g. "openai/text-embedding-3-small".`);

  const row = await db.providerCredential.findUnique({ where: { workspaceId_name: { workspaceId, name: provider } } });
  let baseUrl: string | null = null;
  let apiKey: string | null = null;
  let timeoutMs: number | undefined;
  if (row) {
    if (row.kind === "anthropic") throw new Error(`Provider "${provider}" is Anthropic, which has no embeddings endpoint.`);
    baseUrl = row.baseUrl ?? (row.kind === "openai" ? "https://api.openai.com/v1" : null);
    apiKey = row.encryptedKey ? decryptSecret(row.encryptedKey) : null;
    timeoutMs = row.timeoutMs;
  } else if (provider === "openai" && (process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL)) {
    baseUrl = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
    apiKey = process.env.OPENAI_API_KEY ?? null;
  }
  if (!baseUrl) throw new Error(`No embedding provider named "${provider}". Add it in Settings → Models.`);

  const base = { id, model, baseUrl, apiKey, timeoutMs };
  let dimensions = requested ?? KNOWN_EMBEDDING_DIMENSIONS[model] ?? null;
  if (!dimensions) {
    // Unknown model: one probe call tells its size.
    const [v] = await new OpenAICompatibleEmbedder({ ...base, dimensions: 0, maxRetries: 1 }).embed(["dimension probe"]);
    dimensions = v?.length ?? null;
    if (!dimensions) throw new Error(`Could not determine the dimension of ${id}; name it as "${id}@<dims>".`);
  }
  return new OpenAICompatibleEmbedder({ ...base, dimensions, requestDimensions: requested !== null });
}
