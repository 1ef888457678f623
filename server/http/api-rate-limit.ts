/**
 * Request rate limits of API keys on every surface — REST, MCP, uploads and tRPC (each call of a
 * tRPC batch) share one budget per API key and one per workspace, in requests per minute
 * (SYNTHEX_API_RATE_PER_KEY, default 600; SYNTHEX_API_RATE_PER_WORKSPACE, default 3000). rate-limiter-flexible in memory: per process, like the sign-in limits; a
 * deployment with several app servers divides the budget by their number (or fronts them with a
 * shared limiter).
 */
import { RateLimiterMemory, type RateLimiterRes } from "rate-limiter-flexible";
import { processState } from "../core/process-state";

// One budget per process, whichever copy of this module counts (server/core/process-state.ts).
const limiters = processState("api-rate-limit.limiters", () => new Map<string, RateLimiterMemory>());

function perMinute(setting: string, fallback: number): number {
  const raw = process.env[setting]?.trim();
  const n = raw ? Number(raw) : fallback;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${setting} must be a positive whole number of requests per minute (got "${raw}")`);
  return n;
}

function limiter(kind: string, points: number): RateLimiterMemory {
  const id = `${kind}:${points}`;
  let l = limiters.get(id);
  if (!l) {
    l = new RateLimiterMemory({ keyPrefix: id, points, duration: 60 });
    limiters.set(id, l);
  }
  return l;
}

const isLimiterRes = (value: unknown): value is RateLimiterRes => typeof (value as RateLimiterRes | null)?.msBeforeNext === "number";

/** A call beyond an API key's or its workspace's budget. */
export class ApiRateLimitedError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "ApiRateLimitedError";
  }
}

/** Counts `calls` calls of this key (and its workspace); the error when either budget is spent, else null. */
export async function consumeApiRate(actor: { apiKeyId: string; workspaceId: string }, calls = 1): Promise<ApiRateLimitedError | null> {
  const checks: Array<[RateLimiterMemory, string, string]> = [
    [limiter("key", perMinute("SYNTHEX_API_RATE_PER_KEY", 600)), actor.apiKeyId, "this API key"],
    [limiter("workspace", perMinute("SYNTHEX_API_RATE_PER_WORKSPACE", 3000)), actor.workspaceId, "this workspace"],
  ];
  for (const [l, key, what] of checks) {
    try {
      await l.consume(key, calls);
    } catch (res) {
      // By shape: the limiter may come from another copy of rate-limiter-flexible (Next's bundle).
      if (!isLimiterRes(res)) throw res;
      const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      return new ApiRateLimitedError(`Rate limit of ${l.points} requests per minute for ${what} reached: retry in ${seconds} s.`, seconds);
    }
  }
  return null;
}

/** Counts one request (or `calls` calls) of this key; null when allowed, else a 429 with Retry-After (REST, MCP, uploads). */
export async function apiRateLimit(actor: { apiKeyId: string; workspaceId: string }, calls = 1): Promise<Response | null> {
  const limited = await consumeApiRate(actor, calls);
  if (!limited) return null;
  return Response.json(
    { error: { code: "TOO_MANY_REQUESTS", message: limited.message } },
    { status: 429, headers: { "retry-after": String(limited.retryAfterSeconds) } },
  );
}
