import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/trpc";
import { getSessionUser } from "@/server/auth/session";
import { ApiRateLimitedError } from "@/server/http/api-rate-limit";
import { apiBodyLimit, withBodyLimit } from "@/server/http/body-limit";
import { clientAddress } from "@/server/http/client-address";
import { withCrossSiteGuard } from "@/server/http/csrf";
import { getDb } from "@/server/store/db";

const handler = (req: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: async () => {
      const authorization = req.headers.get("authorization");
      // An API key decides who is asking: no session lookup (as REST and MCP).
      const ctx = await createContext({ db: await getDb(), session: authorization ? null : await getSessionUser(), authorization });
      // Sign-up is throttled per client address (server/http/client-address.ts).
      return { ...ctx, clientAddress: clientAddress(req.headers) };
    },
    // A call refused by the API key's rate limit says when to retry, as REST does.
    responseMeta: ({ errors }) => {
      const limited = errors.map((e) => e.cause).find((c) => c instanceof ApiRateLimitedError);
      return limited ? { headers: { "retry-after": String(limited.retryAfterSeconds) } } : {};
    },
  });

// Bodies over SYNTHEX_MAX_BODY_BYTES get a 413 before tRPC parses anything (sign-up is public).
// Mutations signed in by cookie from another origin are refused first (tRPC itself answers 415 to
// non-JSON bodies; the origin check is defence in depth). See server/http/csrf.ts.
const limited = withCrossSiteGuard(withBodyLimit(handler, apiBodyLimit, (url, init) => new Request(url, init)));

export { limited as GET, limited as POST };
