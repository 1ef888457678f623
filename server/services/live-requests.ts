/**
 * Live requests in flight in this process (issue 37): every tRPC procedure — REST, MCP, the app and
 * the compatibility APIs all reach one — counts itself here while it runs, so background work that
 * shares the database with it (shadow traffic's copies) can wait until no live request is in flight
 * instead of competing with one. Per process: on PostgreSQL each app server has its own count.
 */

let inFlight = 0;
let waiters: Array<() => void> = [];

/** Count a live request until it ends; returns the function that ends it (call it once). */
export function beginLiveRequest(): () => void {
  inFlight++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    inFlight--;
    if (inFlight === 0 && waiters.length) {
      const ready = waiters;
      waiters = [];
      // On a later turn: a request whose response is still being written, or a client sending its
      // next request right away, gets there first.
      setImmediate(() => ready.forEach((resolve) => resolve()));
    }
  };
}

export function liveRequestsInFlight(): number {
  return inFlight;
}

/** Resolves once no live request is in flight (at once when none is). */
export async function whenNoLiveRequest(): Promise<void> {
  while (inFlight > 0) await new Promise<void>((resolve) => waiters.push(resolve));
}
