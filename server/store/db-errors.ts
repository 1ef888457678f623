/**
 * Which database errors are worth retrying: the link or the server went away for a moment
 * (connection refused/reset/terminated, authentication or pool timeouts, the server shutting
 * down or restarting, no connection free to start a transaction in time — Prisma's P2028 "Unable
 * to start a transaction in the given time" under load), as opposed to errors in the query or the data, which fail the same way
 * every time.
 */

/** SQLSTATE classes and codes of a lost or refused connection, or a server going away. */
const TRANSIENT_SQLSTATE = /^(08\w{3}|57P0[1-3]|53300|53400)$/; // connection exception, admin/crash shutdown, cannot connect now, too many connections
/** Node socket errors. */
const TRANSIENT_ERRNO = new Set(["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
/** Prisma: can't reach, timed out, connection closed, pool timeout. */
const TRANSIENT_PRISMA = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/** What the same failures say when only a message survives (e.g. through a tRPC error). */
const TRANSIENT_MESSAGE =
  /\b(ECONNREFUSED|ECONNRESET|ECONNABORTED|EPIPE|ETIMEDOUT|08\d{3}|08P01|57P0[1-3]|53300)\b|connection terminated|terminating connection|server closed the connection|authentication timed out|timeout exceeded when trying to connect|connection (?:is )?closed|can't reach database server|socket hang up|too many (?:clients|connections)|unable to start a transaction in the given time/i;

/** True for an error (or any error in its `cause` chain) that a retry a moment later may not hit. */
export function isTransientDbError(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = err; e && typeof e === "object" && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const o = e as { code?: unknown; originalCode?: unknown; message?: unknown };
    for (const code of [o.code, o.originalCode]) {
      if (typeof code !== "string") continue;
      if (TRANSIENT_SQLSTATE.test(code) || TRANSIENT_ERRNO.has(code) || TRANSIENT_PRISMA.has(code)) return true;
    }
    if (typeof o.message === "string" && TRANSIENT_MESSAGE.test(o.message)) return true;
  }
  return typeof err === "string" && TRANSIENT_MESSAGE.test(err);
}

/**
 * Runs `work`, again after a pause when it fails with a transient database error (up to `attempts`
 * times in all, the pause doubling from `firstPauseMs`); any other error, or the last one, is thrown.
 * For idempotent work only (a run's batch computes only what has no record yet).
 */
export async function retryTransient<T>(work: () => Promise<T>, label: string, attempts = 5, firstPauseMs = 250, retryable: (err: unknown) => boolean = isTransientDbError): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !retryable(err)) throw err;
      const pause = firstPauseMs * 2 ** (attempt - 1);
      console.error(`[synthex db] ${label}: transient database error (${err instanceof Error ? err.message.split("\n").filter(Boolean).pop() : String(err)}); retry ${attempt} of ${attempts - 1} in ${pause} ms`);
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
