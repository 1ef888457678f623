/**
 * The whole REST `/api/v1/*` request handler, checks included: the Host and cross-site guard
 * (server/http/csrf.ts) before anything is read, the body limit, then `handleRest` over the tRPC
 * procedures with the caller's API key or session. Served twice over the same function: by Next's
 * route `app/api/v1/[...path]/route.ts` (`next dev`, the standalone `node server.js`) and, under
 * `npm start`, straight from the app server's own HTTP listener (scripts/app-server.ts), which
 * skips Next's router for API-key requests.
 */
import { appRouter } from "./root";
import { handleRest } from "./rest";
import { appRestEndpoints } from "./rest-app";
import { createContext } from "./trpc";
import { apiBodyLimit, apiTooLargeResponse, withBodyLimit } from "../http/body-limit";
import { withCrossSiteGuard } from "../http/csrf";
import { getDb } from "../store/db";

async function handler(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname.replace(/^\/api\/v1/, "") || "/";
  return handleRest({
    router: appRouter,
    endpoints: appRestEndpoints(),
    req,
    path,
    createContext: async () => {
      const authorization = req.headers.get("authorization");
      // Loaded on the first cookie-signed request only: next-auth needs Next's request context (and
      // bundler), which the app server's direct path (API keys only) neither has nor loads.
      const session = authorization ? null : await (await import("../auth/session")).getSessionUser();
      return createContext({ db: await getDb(), session, authorization });
    },
  });
}

/** Cookie-signed writes from other origins are refused before the body is read (server/http/csrf.ts). */
export const restRouteHandler = withCrossSiteGuard(withBodyLimit(handler, apiBodyLimit, (url, init) => new Request(url, init), apiTooLargeResponse));
