/**
 * Brute-force protection for password sign-in: failed attempts are counted per email and per
 * client address (rate-limiter-flexible, in memory: one app process owns the embedded setup).
 * After a few free failures every further one locks that email (or address) for a delay that
 * doubles each time, capped; a success clears the email's count.
 */
import { RateLimiterMemory } from "rate-limiter-flexible";

export interface SignInLimiterOptions {
  /** Failures per email before delays start (default 5). */
  freeFailuresPerEmail?: number;
  /** Failures per client address, across emails, before delays start (default 20). */
  freeFailuresPerAddress?: number;
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
      `Too many failed sign-in attempts ${scope === "email" ? "for this email" : "from your network"}. ` +
        `Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}.`,
    );
    this.name = "SignInLimitedError";
  }
}

interface Counter {
  free: number;
  /** Failures within the window. */
  strikes: RateLimiterMemory;
  /** Only used through block(): a key is locked while it has a block. */
  lock: RateLimiterMemory;
}

export class SignInLimiter {
  private readonly email: Counter;
  private readonly address: Counter;
  private readonly firstDelay: number;
  private readonly maxDelay: number;

  constructor(options: SignInLimiterOptions = {}) {
    const window = options.windowSeconds ?? 3600;
    const counter = (prefix: string, free: number): Counter => ({
      free,
      strikes: new RateLimiterMemory({ keyPrefix: `${prefix}-strikes`, points: Number.MAX_SAFE_INTEGER, duration: window }),
      lock: new RateLimiterMemory({ keyPrefix: `${prefix}-lock`, points: 1, duration: 1 }),
    });
    this.email = counter("signin-email", options.freeFailuresPerEmail ?? 5);
    this.address = counter("signin-address", options.freeFailuresPerAddress ?? 20);
    this.firstDelay = options.firstDelaySeconds ?? 1;
    this.maxDelay = options.maxDelaySeconds ?? 900;
  }

  /** Throws SignInLimitedError while the email or the address is locked. */
  async check(email: string, address: string): Promise<void> {
    for (const [scope, counter, key] of [
      ["email", this.email, email],
      ["address", this.address, address],
    ] as const) {
      const lock = await counter.lock.get(key);
      if (lock && lock.consumedPoints > 1 && lock.msBeforeNext > 0) {
        throw new SignInLimitedError(Math.max(1, Math.ceil(lock.msBeforeNext / 1000)), scope);
      }
    }
  }

  async failed(email: string, address: string): Promise<void> {
    for (const [counter, key] of [
      [this.email, email],
      [this.address, address],
    ] as const) {
      const strikes = (await counter.strikes.penalty(key, 1)).consumedPoints;
      if (strikes >= counter.free) {
        const delay = Math.min(this.maxDelay, this.firstDelay * 2 ** (strikes - counter.free));
        await counter.lock.block(key, delay);
      }
    }
  }

  async succeeded(email: string): Promise<void> {
    await this.email.strikes.delete(email);
    await this.email.lock.delete(email);
  }
}

/** The app's limiter (one per process; survives module reloads in next dev). */
export function signInLimiter(): SignInLimiter {
  const g = globalThis as typeof globalThis & { __synthexSignInLimiter?: SignInLimiter };
  return (g.__synthexSignInLimiter ??= new SignInLimiter());
}
