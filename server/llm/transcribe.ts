/**
 * Audio transcription through the workspace's OpenAI-compatible provider (`POST {baseUrl}/audio/transcriptions`,
 * `response_format=verbose_json` for timed segments). The provider is the workspace's first
 * credential of kind openai / openai-compatible (else OPENAI_API_KEY / OPENAI_BASE_URL, the CLI's
 * path); the model is SYNTHEX_TRANSCRIBE_MODEL, default `whisper-1`. No provider: null, and the
 * importer stores a record that awaits transcription.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import type { DbTx } from "../core/db";
import { configFromCredential, envProviderConfig } from "./workspace-model";
import type { ProviderConfig } from "./sdk-model";

const Verbose = z.object({
  text: z.string().default(""),
  duration: z.number().optional(),
  segments: z.array(z.object({ start: z.number(), end: z.number(), text: z.string() })).optional(),
});

async function providerFor(db: DbTx, workspaceId: string): Promise<ProviderConfig | null> {
  const rows = await db.providerCredential.findMany({ where: { workspaceId, kind: { in: ["openai", "openai-compatible"] } }, orderBy: { createdAt: "asc" } });
  const row = rows.find((r) => r.kind === "openai-compatible" || r.kind === "openai");
  return row ? configFromCredential(row) : envProviderConfig("openai");
}

/** What a transcription gives the audio importer (its `Transcriber` option has this shape). */
export interface Transcription {
  text: string;
  duration?: number;
  segments: Array<{ start: number; end: number; text: string }>;
  model: string;
}

/** A transcriber for `workspaceId`: resolves the provider on first use; answers null when there is none. */
export function workspaceTranscriber(db: DbTx, workspaceId: string, env: Record<string, string | undefined> = process.env): (input: { file: string; name: string; mime: string }) => Promise<Transcription | null> {
  let provider: Promise<ProviderConfig | null> | null = null;
  return async ({ file, name, mime }) => {
    const config = await (provider ??= providerFor(db, workspaceId));
    if (!config) return null;
    const model = env.SYNTHEX_TRANSCRIBE_MODEL || "whisper-1";
    const form = new FormData();
    form.set("file", new Blob([await readFile(file)], { type: mime }), name);
    form.set("model", model);
    form.set("response_format", "verbose_json");
    form.set("timestamp_granularities[]", "segment");
    const base = (config.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "");
    const doFetch = config.fetch ?? fetch;
    const res = await doFetch(`${base}/audio/transcriptions`, {
      method: "POST",
      headers: config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {},
      body: form,
      signal: AbortSignal.timeout(config.timeoutMs ?? 120_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`the provider "${config.name}" answered ${res.status}: ${text.slice(0, 200)}`);
    let parsed: z.infer<typeof Verbose>;
    try {
      parsed = Verbose.parse(JSON.parse(text));
    } catch {
      throw new Error(`the provider "${config.name}" answered something that is not a transcription (${text.slice(0, 80)})`);
    }
    return { text: parsed.text, duration: parsed.duration, model: `${config.name}/${model}`, segments: (parsed.segments ?? []).map((s) => ({ start: s.start, end: s.end, text: s.text.trim() })) };
  };
}
