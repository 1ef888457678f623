import { processState } from "../core/process-state";
import { abortableSleep } from "./abortable-sleep";
/**
 * Per-provider limits: at most `maxConcurrency` requests in flight and at most `requestsPerMinute`
 * request starts in any sliding 60-second window. One limiter per (workspace, provider) per
 * process, shared by every run that uses it.
 */

const sleep = abortableSleep;

export interface LimiterOptions {
  maxConcurrency: number;
  requestsPerMinute?: number | null;
}

export class ProviderLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly starts: number[] = [];
  maxConcurrency: number;
  requestsPerMinute: number | null;

  constructor(options: LimiterOptions) {
    this.maxConcurrency = Math.max(1, Math.floor(options.maxConcurrency));
    this.requestsPerMinute = options.requestsPerMinute && options.requestsPerMinute > 0 ? options.requestsPerMinute : null;
  }

  get inFlight() {
    return this.active;
  }

  private async acquire(signal?: AbortSignal) {
    if (this.active >= this.maxConcurrency) {
      await new Promise<void>((resolve, reject) => {
        const entry = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal!.reason);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        this.waiting.push(entry);
      });
    } else {
      this.active += 1;
    }
    // Rate: wait until a start slot frees up in the sliding minute.
    try {
      while (this.requestsPerMinute) {
        const now = Date.now();
        while (this.starts.length && now - this.starts[0]! >= 60_000) this.starts.shift();
        if (this.starts.length < this.requestsPerMinute) break;
        await sleep(60_000 - (now - this.starts[0]!) + 1, signal);
      }
    } catch (err) {
      this.release();
      throw err;
    }
    this.starts.push(Date.now());
  }

  private release() {
    const next = this.waiting.shift();
    if (next) next(); // the slot passes straight to the next waiter
    else this.active -= 1;
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}

// One per process, whichever module copy asks (server/core/process-state.ts).
const limiters = processState("llm.limiters", () => new Map<string, ProviderLimiter>());

/** The process-wide limiter for `key` (e.g. `${workspaceId}:${provider}`), updated to `options`. */
export function limiterFor(key: string, options: LimiterOptions): ProviderLimiter {
  let limiter = limiters.get(key);
  if (!limiter) {
    limiter = new ProviderLimiter(options);
    limiters.set(key, limiter);
  } else {
    limiter.maxConcurrency = Math.max(1, Math.floor(options.maxConcurrency));
    limiter.requestsPerMinute = options.requestsPerMinute && options.requestsPerMinute > 0 ? options.requestsPerMinute : null;
  }
  return limiter;
}
