/**
 * Runs a handler on every request any HTTP(S) server of this process receives, before the server's
 * own listeners (Next's) see it: `Server.prototype.emit` is wrapped once per process and `key`
 * (process state, server/core/process-state.ts: a process loads this module once per bundle), so
 * installing twice adds nothing.
 */
import http from "node:http";
import https from "node:https";
import { processState } from "../core/process-state";

export function onEveryHttpRequest(key: string, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): void {
  const hooks = processState("request-hook.installed", () => new Set<string>());
  if (hooks.has(key)) return;
  hooks.add(key);
  for (const Server of [http.Server, https.Server]) {
    const emit = Server.prototype.emit;
    Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
      if (event === "request") handler(args[0] as http.IncomingMessage, args[1] as http.ServerResponse);
      return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
    } as typeof emit;
  }
}
