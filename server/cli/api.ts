/**
 * The CLI talks to Synthex through the same tRPC procedures as the web app (so the same permission
 * checks apply), with one client typed from the router: in-process against the embedded database
 * (tRPC's local link, which round-trips through the same transformer as HTTP), or over HTTP with
 * `--url` + an API key. Either way `api.pipeline.get.query(…)` returns exactly the router's output type.
 */
import { createTRPCClient, httpBatchLink, unstable_localLink, type TRPCClient } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import superjson from "superjson";
import type { Db } from "../core/db";
import type { AppRouter } from "../api/root";
import { timingMark } from "../core/timing";

export type Api = TRPCClient<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type RouterInputs = inferRouterInputs<AppRouter>;

export interface Connection {
  api: Api;
  workspaceId: string;
  mode: "local" | "remote";
  db?: Db;
  url?: string;
  apiKey?: string;
  /** Local mode: the local user, as audit entries name them (`user:<id>`). */
  actor?: string;
  close(): Promise<void>;
}

/**
 * The router, the database and Prisma are imported here, on first use, not when the CLI starts:
 * `--help` and argument errors answer without loading them.
 */
export async function connectLocal(): Promise<Connection> {
  // The database opens (PGlite's WebAssembly compiles on other threads, its files load) while the
  // router and the services load on this one.
  const opening = import("../store/runtime-env").then(({ openMigratedDb }) => openMigratedDb());
  opening.catch(() => {}); // awaited below: not an unhandled rejection meanwhile
  const { closeDb } = await import("../store/db");
  let modules;
  try {
    modules = await Promise.all([import("../api/root"), import("../api/trpc"), import("../services/local-workspace")]);
  } catch (err) {
    await opening.then(closeDb, () => {});
    throw err;
  }
  const [{ appRouter }, { createContext }, { ensureLocalWorkspace }] = modules;
  timingMark("router, services and database modules loaded");
  const db = await opening;
  timingMark("database open and migrated");
  const { workspace, user } = await ensureLocalWorkspace(db);
  timingMark("local workspace ensured");
  const context = await createContext({ db, session: { userId: user.id, email: user.email } });
  timingMark("context created");
  const api = createTRPCClient<AppRouter>({
    links: [unstable_localLink({ router: appRouter, createContext: async () => context, transformer: superjson })],
  });
  const { settleBackgroundWork } = await import("../services/background");
  // A run started here indexes and notifies after it finishes: let that end before the pool closes.
  const close = async () => {
    await settleBackgroundWork();
    timingMark("background work settled");
    await closeDb();
    timingMark("database closed");
  };
  return { api, workspaceId: workspace.id, mode: "local", db, actor: `user:${user.id}`, close };
}

export async function connectRemote(url: string, apiKey: string): Promise<Connection> {
  const base = url.replace(/\/$/, "");
  const api = createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url: `${base}/api/trpc`, transformer: superjson, headers: () => ({ authorization: `Bearer ${apiKey}` }) })],
  });
  const workspace = await api.workspace.current.query();
  if (!workspace) throw new Error("The API key did not resolve to a workspace.");
  return { api, workspaceId: workspace.id, mode: "remote", url: base, apiKey, close: async () => {} };
}
