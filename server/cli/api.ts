/**
 * The CLI talks to Synthex through the same tRPC procedures as the web app (so the same permission
 * checks apply): in-process against the embedded database, or over HTTP with `--url` + an API key.
 */
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import superjson from "superjson";
import { appRouter, createCaller, type AppRouter } from "../api/root";
import { createContext } from "../api/trpc";
import { ensureLocalWorkspace } from "../services/local-workspace";
import type { Db } from "../services/db-types";

export type Caller = ReturnType<typeof createCaller>;

export interface Connection {
  api: Caller;
  workspaceId: string;
  mode: "local" | "remote";
  db?: Db;
  url?: string;
  apiKey?: string;
  close(): Promise<void>;
}

export async function connectLocal(): Promise<Connection> {
  const { getDb, closeDb } = await import("../store/db");
  const db = await getDb();
  const { workspace, user } = await ensureLocalWorkspace(db);
  const api = createCaller(await createContext({ db, session: { userId: user.id, email: user.email } }));
  const { settleBackgroundWork } = await import("../services/background");
  // A run started here indexes and notifies after it finishes: let that end before the pool closes.
  const close = async () => {
    await settleBackgroundWork();
    await closeDb();
  };
  return { api, workspaceId: workspace.id, mode: "local", db, close };
}

type ProcedureDef = { _def: { type: "query" | "mutation" | "subscription" } };

/** A caller-shaped object whose calls go over HTTP: `api.pipeline.list(input)` → GET/POST /api/trpc. */
function remoteCaller(url: string, apiKey: string): Caller {
  const client = createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${url.replace(/\/$/, "")}/api/trpc`,
        transformer: superjson,
        headers: () => ({ authorization: `Bearer ${apiKey}` }),
      }),
    ],
  });
  const procedures = appRouter._def.procedures as unknown as Record<string, ProcedureDef>;
  const build = (path: string[]): unknown =>
    new Proxy(() => {}, {
      get: (_t, prop: string) => build([...path, prop]),
      apply: (_t, _this, args: unknown[]) => {
        const key = path.join(".");
        const def = procedures[key];
        if (!def) throw new Error(`Unknown API procedure ${key}`);
        let target: any = client;
        for (const part of path) target = target[part];
        return def._def.type === "mutation" ? target.mutate(args[0]) : target.query(args[0]);
      },
    });
  return build([]) as Caller;
}

export async function connectRemote(url: string, apiKey: string): Promise<Connection> {
  const api = remoteCaller(url, apiKey);
  const workspace = await api.workspace.current();
  if (!workspace) throw new Error("The API key did not resolve to a workspace.");
  return { api, workspaceId: workspace.id, mode: "remote", url, apiKey, close: async () => {} };
}
