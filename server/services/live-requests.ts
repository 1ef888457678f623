/**
 * Live requests in flight in this process (issue 37), so background work that shares the database
 * and the cores with them (shadow traffic's copies) can wait until none is in flight instead of
 * competing with one. Counted twice over, either is enough to hold the work back:
 * - every HTTP request the app server receives, from its arrival until its response is closed
 *   (`countLiveHttpRequests`, installed by instrumentation-node.ts before Next handles a request:
 *   parsing, authentication and writing the response count too);
 * - every tRPC procedure while it runs (the middleware in server/api/trpc.ts; REST, MCP, the app and
 *   the compatibility APIs all reach one), which also covers in-process callers such as tests.
 * Per process (on PostgreSQL each app server has its own count); the state is the process's
 * (server/core/process-state.ts), since one process loads this module more than once.
 */
import { processState } from "../core/process-state";
import { onEveryHttpRequest } from "../http/request-hook";

interface LiveState {
  inFlight: number;
  waiters: Array<() => void>;
}
const state = processState<LiveState>("live-requests", () => ({ inFlight: 0, waiters: [] }));

/** Count a live request until it ends; returns the function that ends it (once; later calls do nothing). */
export function beginLiveRequest(): () => void {
  state.inFlight++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    state.inFlight--;
    if (state.inFlight === 0 && state.waiters.length) {
      const ready = state.waiters;
      state.waiters = [];
      // On a later turn: a client sending its next request right away gets counted first.
      setImmediate(() => ready.forEach((resolve) => resolve()));
    }
  };
}

export function liveRequestsInFlight(): number {
  return state.inFlight;
}

/** Resolves once no live request is in flight (at once when none is). */
export async function whenNoLiveRequest(): Promise<void> {
  while (state.inFlight > 0) await new Promise<void>((resolve) => state.waiters.push(resolve));
}

/** Count every request the HTTP servers of this process receive until its response is closed (once per process). */
export function countLiveHttpRequests(): void {
  // 'close' follows both a finished response and an aborted connection.
  onEveryHttpRequest("live-requests", (_req, res) => res.once("close", beginLiveRequest()));
}
