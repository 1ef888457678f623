/** REST `/api/v1/*`: the tRPC procedures that declare `meta.rest` (see server/api/rest.ts). */
import { appRouter } from "@/server/api/root";
import { handleRest } from "@/server/api/rest";
import { appRestEndpoints } from "@/server/api/rest-app";
import { createContext } from "@/server/api/trpc";
import { getSessionUser } from "@/server/auth/session";
import { apiBodyLimit, apiTooLargeResponse, withBodyLimit } from "@/server/http/body-limit";
import { withCrossSiteGuard } from "@/server/http/csrf";
import { getDb } from "@/server/store/db";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

async function handler(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname.replace(/^\/api\/v1/, "") || "/";
  return handleRest({
    router: appRouter,
    endpoints: appRestEndpoints(),
    req,
    path,
    createContext: async () => {
      const authorization = req.headers.get("authorization");
      return createContext({ db: await getDb(), session: authorization ? null : await getSessionUser(), authorization });
    },
  });
}

// Cookie-signed writes from other origins are refused before the body is read (server/http/csrf.ts).
const limited = withCrossSiteGuard(withBodyLimit(handler, apiBodyLimit, (url, init) => new Request(url, init), apiTooLargeResponse));

export { limited as GET, limited as POST, limited as DELETE };
