import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/trpc";
import { getSessionUser } from "@/server/auth/session";
import { getDb } from "@/server/store/db";

const handler = (req: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: async () =>
      createContext({
        db: await getDb(),
        session: await getSessionUser(),
        authorization: req.headers.get("authorization"),
      }),
  });

export { handler as GET, handler as POST };
