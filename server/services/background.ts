/**
 * Work this process started and did not wait for (a local run and its post-run indexing,
 * webhook deliveries, the query log's buffered entries). A short-lived process (the CLI) awaits `settleBackgroundWork` before it
 * closes the database, so nothing is cut off half-way ("Cannot use a pool after calling end").
 * Per process, whichever module copy started the work (server/core/process-state.ts).
 */
import { processState } from "../core/process-state";

const pending = processState("background.pending", () => new Set<Promise<unknown>>());

/** Remember a promise until it settles; returns it unchanged. */
export function trackBackground<T>(promise: Promise<T>): Promise<T> {
  const tracked = promise.finally(() => pending.delete(tracked));
  pending.add(tracked);
  // The caller handles rejections; the tracked copy must not raise an unhandled rejection.
  tracked.catch(() => {});
  return promise;
}

/** Buffers written on a timer (the query log's batched writer): settling writes them at once. */
const flushers = processState("background.flushers", () => new Set<() => Promise<void>>());
export function flushOnSettle(flush: () => Promise<void>): void {
  flushers.add(flush);
}

/** Wait until every tracked promise (including ones started meanwhile) has settled and every buffer is written. */
export async function settleBackgroundWork(): Promise<void> {
  do {
    while (pending.size > 0) await Promise.allSettled([...pending]);
    await Promise.allSettled([...flushers].map((flush) => flush()));
  } while (pending.size > 0);
}
