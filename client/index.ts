/**
 * A typed client of the Synthex REST API for agents (openapi-fetch over the generated
 * client/openapi.ts): every path, parameter, body and answer is checked by the compiler.
 *
 *   const sx = createSynthexClient({ baseUrl: "http://localhost:3000", apiKey: process.env.SYNTHEX_API_KEY! });
 *   const { data, error } = await sx.POST("/pipelines/{pipelineId}/ask", { params: { path: { pipelineId: "memory" } }, body: { question: "…" } });
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./openapi";

export type { components, paths };
export type AnswerPacket = components["schemas"]["AnswerPacket"];
export type SearchResult = components["schemas"]["SearchResult"];
export type ApiError = components["schemas"]["Error"];

export interface SynthexClientOptions {
  /** The server, e.g. http://localhost:3000 (the client adds /api/v1). */
  baseUrl: string;
  /** An API key (sx_…), from Settings → API keys or `synthex keys create`. */
  apiKey: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
}

export function createSynthexClient(options: SynthexClientOptions) {
  return createClient<paths>({
    baseUrl: `${options.baseUrl.replace(/\/$/, "")}/api/v1`,
    headers: { authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
