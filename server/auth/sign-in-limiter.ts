/**
 * Brute-force protection for password sign-in, and the sign-up throttle (rate-limiter-flexible, in
 * memory: one app process owns the embedded setup; several app servers each keep their own).
 *
 * Failed sign-ins are counted per email *from one client address* and per client address (across
 * emails). After a few free failures every further one delays that pair (or address) for a time that
 * doubles each time, capped; a success clears the pair. The right password is refused only during
 * a delay that its own address earned: an attacker's failures from elsewhere never refuse it, so
 * nobody can lock a victim out. Guessing one email from many addresses is slowed by an email-wide
 * count: past `suspiciousFailuresPerEmail` failures in the window, every address's delay for that
 * email starts at its first failure. The address comes from server/http/client-address.ts (the
 * socket peer, or X-Forwarded-For behind a trusted proxy), so a client cannot pick a fresh one.
 */
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { tooManyRequests } from "../core/errors";
import { processState } from "../core/process-state";

export interface SignInLimiterOptions {
  /** Failures per email from one address before delays start (default 5). */
  freeFailuresPerEmailAndAddress?: number;
  /** Failures per client address, across emails, before delays start (default 20). */
  freeFailuresPerAddress?: number;
  /** Failures of one email from all addresses after which its delays start at the first failure (default 50). */
  suspiciousFailuresPerEmail?: number;
  /** First delay in seconds, doubled per further failure (default 1). */
  firstDelaySeconds?: number;
  /** Longest delay in seconds (default 900 = 15 minutes). */
  maxDelaySeconds?: number;
  /** Failures are forgotten this long after the first one (default 3600 s). */
  windowSeconds?: number;
}

export class SignInLimitedError extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    readonly scope: "email" | "address",
  ) {
    super(
      `Too many failed sign-in attempts ${scope === "email" ? "for this email from your network" : "from your network"}. ` +
        `Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}.`,
    );
    this.name = "SignInLimitedError";
  }
}

interface Counter {
  free: number;
  /** Failures within the window. */
  strikes: RateLimiterMemory;
  /** Only used through block(): a key is delayed while it has a block. */
  lock: RateLimiterMemory;
}

export class SignInLimiter {
  private readonly pair: Counter;
  private readonly address: Counter;
  private readonly emailStrikes: RateLimiterMemory;
  private readonly suspicious: number;
  private readonly firstDelay: number;
  private readonly maxDelay: number;

  constructor(options: SignInLimiterOptions = {}) {
    const window = options.windowSeconds ?? 3600;
    const strikes = (prefix: string) => new RateLimiterMemory({ keyPrefix: `${prefix}-strikes`, points: Number.MAX_SAFE_INTEGER, duration: window });
    const counter = (prefix: string, free: number): Counter => ({
      free,
      strikes: strikes(prefix),
      lock: new RateLimiterMemory({ keyPrefix: `${prefix}-lock`, points: 1, duration: 1 }),
    });
    this.pair = counter("signin-email-address", options.freeFailuresPerEmailAndAddress ?? 5);
    this.address = counter("signin-address", options.freeFailuresPerAddress ?? 20);
    this.emailStrikes = strikes("signin-email");
    this.suspicious = options.suspiciousFailuresPerEmail ?? 50;
    this.firstDelay = options.firstDelaySeconds ?? 1;
    this.maxDelay = options.maxDelaySeconds ?? 900;
  }

  /** Throws SignInLimitedError while this email from this address, or this address, is delayed. */
  async check(email: string, address: string): Promise<void> {
    for (const [scope, counter, key] of [
      ["email", this.pair, pairKey(email, address)],
      ["address", this.address, address],
    ] as const) {
      const lock = await counter.lock.get(key);
      if (lock && lock.consumedPoints > 1 && lock.msBeforeNext > 0) {
        throw new SignInLimitedError(Math.max(1, Math.ceil(lock.msBeforeNext / 1000)), scope);
      }
    }
  }

  async failed(email: string, address: string): Promise<void> {
    const emailFailures = (await this.emailStrikes.penalty(email, 1)).consumedPoints;
    for (const [counter, key, free] of [
      [this.pair, pairKey(email, address), emailFailures > this.suspicious ? 1 : this.pair.free],
      [this.address, address, this.address.free],
    ] as const) {
      const strikes = (await counter.strikes.penalty(key, 1)).consumedPoints;
      if (strikes >= free) {
        const delay = Math.min(this.maxDelay, this.firstDelay * 2 ** Math.min(30, strikes - free));
        await counter.lock.block(key, delay);
      }
    }
  }

  async succeeded(email: string, address: string): Promise<void> {
    const key = pairKey(email, address);
    await this.pair.strikes.delete(key);
    await this.pair.lock.delete(key);
  }
}

const pairKey = (email: string, address: string) => `${address} ${email}`;

/** The app's limiter (one per process; survives module reloads in next dev). */
export function signInLimiter(): SignInLimiter {
  return processState("sign-in-limiter.signIn", () => new SignInLimiter());
}

/** Sign-ups allowed per client address in 10 minutes (SYNTHEX_SIGNUP_RATE_PER_ADDRESS, default 5). */
function signUpsPerAddress(env: Record<string, string | undefined> = process.env): number {
  const raw = env.SYNTHEX_SIGNUP_RATE_PER_ADDRESS?.trim();
  const n = raw ? Number(raw) : 5;
  if (!Number.isInteger(n) || n <= 0) throw new Error(`SYNTHEX_SIGNUP_RATE_PER_ADDRESS must be a positive whole number of sign-ups per 10 minutes (got "${raw}")`);
  return n;
}

/**
 * Counts one sign-up attempt from this client address (each costs a bcrypt hash); a DomainError
 * TOO_MANY_REQUESTS, saying when to retry, past the budget.
 */
export async function throttleSignUp(address: string): Promise<void> {
  const points = signUpsPerAddress();
  const limiters = processState("sign-in-limiter.signUp", () => new Map<number, RateLimiterMemory>());
  let limiter = limiters.get(points);
  if (!limiter) {
    limiter = new RateLimiterMemory({ keyPrefix: `signup-${points}`, points, duration: 600 });
    limiters.set(points, limiter);
  }
  try {
    await limiter.consume(address);
  } catch (res) {
    if (!(res instanceof RateLimiterRes)) throw res;
    const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    throw tooManyRequests(`Too many sign-ups from your network (${points} per 10 minutes). Try again in ${seconds} second${seconds === 1 ? "" : "s"}.`);
  }
}
