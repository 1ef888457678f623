/**
 * The app's REST API: the endpoints of `appRouter` (procedures with `meta.rest`) and their OpenAPI
 * document, built once per process.
 */
import { appRouter } from "./root";
import { openApiDocument, restEndpoints, type RestEndpoint } from "./rest";

let cached: RestEndpoint[] | null = null;

export function appRestEndpoints(): RestEndpoint[] {
  cached ??= restEndpoints(appRouter);
  return cached;
}

export const API_VERSION = "1.0.0";

export function appOpenApiDocument(serverUrl = "/api/v1") {
  return openApiDocument(appRestEndpoints(), { version: API_VERSION, serverUrl });
}
