/**
 * Request rate limits of the agent API (REST and MCP): per API key and per workspace, in
 * requests per minute (SYNTHEX_API_RATE_PER_KEY, default 600; SYNTHEX_API_RATE_PER_WORKSPACE,
 * default 3000). rate-limiter-flexible in memory: per process, like the sign-in limits; a
 * deployment with several app servers divides the budget by their number (or fronts them with a
 * shared limiter).
 */
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

const limiters = new Map<string, RateLimiterMemory>();

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

/** Counts one request of this key; null when allowed, else a 429 with Retry-After. */
export async function apiRateLimit(actor: { apiKeyId: string; workspaceId: string }): Promise<Response | null> {
  const checks: Array<[RateLimiterMemory, string, string]> = [
    [limiter("key", perMinute("SYNTHEX_API_RATE_PER_KEY", 600)), actor.apiKeyId, "this API key"],
    [limiter("workspace", perMinute("SYNTHEX_API_RATE_PER_WORKSPACE", 3000)), actor.workspaceId, "this workspace"],
  ];
  for (const [l, key, what] of checks) {
    try {
      await l.consume(key);
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      return Response.json(
        { error: { code: "TOO_MANY_REQUESTS", message: `Rate limit of ${l.points} requests per minute for ${what} reached: retry in ${seconds} s.` } },
        { status: 429, headers: { "retry-after": String(seconds) } },
      );
    }
  }
  return null;
}
