import "server-only";
import { QueryClient } from "@tanstack/react-query";
import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { getSessionUser } from "../auth/session";
import { getDb } from "../store/db";
import { appRouter } from "./root";
import { createContext } from "./trpc";

/**
 * For a page's server component: the same procedures (same permission checks) as query options, so
 * a page can prefetch what its client components will ask for and hand it over dehydrated
 * (`<HydrationBoundary state={dehydrate(queryClient)}>`): the content arrives with the HTML instead
 * of after the JavaScript and a round trip. A prefetch that fails is left out; the client asks again.
 */
export function serverQueries() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 10_000, retry: false } } });
  const trpc = createTRPCOptionsProxy({ router: appRouter, ctx: async () => createContext({ db: await getDb(), session: await getSessionUser() }), queryClient });
  return { queryClient, trpc };
}
