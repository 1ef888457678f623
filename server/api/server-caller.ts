import "server-only";
import { cache } from "react";
import { getSessionUser } from "../auth/session";
import { getDb } from "../store/db";
import { createCaller } from "./root";
import { createContext } from "./trpc";

/** tRPC caller for React Server Components: same procedures, same permission checks. */
export const serverCaller = cache(async () =>
  createCaller(await createContext({ db: await getDb(), session: await getSessionUser() })),
);
