/**
 * A small in-memory cache with a bounded lifetime and a bounded size, for lookups on every
 * request's path (API key, membership, pipeline and branch). An entry is served for at most
 * `ttlMs` after it was loaded; `clear()` ends every entry at once (a change this process made).
 * Concurrent misses of one key share a single load; a failed load is not kept.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { at: number; value: Promise<V> }>();

  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, load: () => Promise<V>, now = performance.now()): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    if (hit) this.entries.delete(key);
    const value = load();
    if (this.ttlMs <= 0) return value;
    if (this.entries.size >= this.maxEntries) {
      // Oldest first (Map keeps insertion order): drop a tenth at once, not one per miss.
      let drop = Math.ceil(this.maxEntries / 10);
      for (const k of this.entries.keys()) {
        if (drop-- <= 0) break;
        this.entries.delete(k);
      }
    }
    const entry = { at: now, value };
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The lifetime of request-path caches: SYNTHEX_AUTH_CACHE_MS, default 1000, at most 1000 (0 turns them off). */
export function requestCacheMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SYNTHEX_AUTH_CACHE_MS?.trim();
  if (!raw) return 1000;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0 || ms > 1000) throw new Error(`SYNTHEX_AUTH_CACHE_MS must be a whole number of milliseconds from 0 to 1000 (got "${raw}").`);
  return ms;
}
