import { afterEach, describe, expect, it, vi } from "vitest";
import { ProviderLimiter } from "./limiter";

afterEach(() => {
  vi.useRealTimers();
});

describe("ProviderLimiter", () => {
  it("caps requests in flight", async () => {
    const limiter = new ProviderLimiter({ maxConcurrency: 2 });
    let active = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        limiter.run(async () => {
          active += 1;
          peak = Math.max(peak, active);
          await new Promise((r) => setTimeout(r, 5));
          active -= 1;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(limiter.inFlight).toBe(0);
  });

  it("caps request starts per sliding minute", async () => {
    vi.useFakeTimers();
    const limiter = new ProviderLimiter({ maxConcurrency: 10, requestsPerMinute: 2 });
    const started: number[] = [];
    const t0 = Date.now();
    const all = Promise.all(Array.from({ length: 3 }, () => limiter.run(async () => void started.push(Date.now() - t0))));
    await vi.advanceTimersByTimeAsync(1000);
    expect(started).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(60_000);
    await all;
    expect(started).toHaveLength(3);
    expect(started[2]).toBeGreaterThanOrEqual(60_000);
  });

  it("a waiter whose signal aborts leaves the queue", async () => {
    const limiter = new ProviderLimiter({ maxConcurrency: 1 });
    let release!: () => void;
    const first = limiter.run(() => new Promise<void>((r) => (release = r)));
    const controller = new AbortController();
    const second = limiter.run(async () => "ran", controller.signal);
    controller.abort(new Error("cancelled"));
    await expect(second).rejects.toThrow("cancelled");
    release();
    await first;
    expect(await limiter.run(async () => "third")).toBe("third");
  });
});
