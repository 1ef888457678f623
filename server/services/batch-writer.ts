/**
 * A bounded in-memory buffer written in batches off the request path (the query log's writer,
 * issue 37). On the embedded database every statement queues on the one database owner, so one
 * multi-row INSERT per `flushMs` costs live requests far less than one INSERT per served call.
 *
 * - An item is written at most `flushMs` after it was added (a timer), or at once when `maxBatch`
 *   are waiting; one write runs at a time, in batches of at most `maxBatch`.
 * - At most `maxBuffered` items wait: past it an item is dropped and counted (`stats.dropped`),
 *   never waited for — a stalled database cannot grow the process's memory or slow the caller.
 * - `flush()` writes everything buffered now; `stopping()` (a normal stop: SIGTERM / SIGINT) writes
 *   what is buffered and each later item as it comes, so nothing is left in memory when the process exits.
 * - A failed write is counted (`stats.failed`) and reported, never thrown into the caller.
 */
import { trackBackground } from "./background";

export interface BatchWriterOptions {
  flushMs: number;
  maxBatch: number;
  maxBuffered: number;
}

export class BatchWriter<T> {
  private buffer: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private immediate = false;
  readonly stats = { written: 0, dropped: 0, failed: 0 };

  constructor(
    private readonly label: string,
    private readonly write: (batch: T[]) => Promise<void>,
    readonly options: BatchWriterOptions,
  ) {}

  get buffered(): number {
    return this.buffer.length;
  }

  /** Buffer an item; false when the buffer is full (the item is dropped and counted). */
  add(item: T): boolean {
    if (this.buffer.length >= this.options.maxBuffered) {
      this.stats.dropped++;
      return false;
    }
    this.buffer.push(item);
    if (this.immediate || this.buffer.length >= this.options.maxBatch) void this.flushOnce();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flushOnce();
      }, this.options.flushMs);
      this.timer.unref?.();
    }
    return true;
  }

  /** Write everything buffered, including items added while this runs; resolves when it is written (or failed). */
  async flush(): Promise<void> {
    while (this.buffer.length || this.writing) await this.flushOnce();
  }

  /** A normal stop: write what is buffered and, from now on, each item as it comes. */
  stopping(): Promise<void> {
    this.immediate = true;
    return this.flush();
  }

  /** One pass over what is buffered now (items added meanwhile wait for their own timer); joins a pass under way. */
  private flushOnce(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.writing) return this.writing;
    const taken = this.buffer.splice(0, this.buffer.length);
    if (!taken.length) return Promise.resolve();
    this.writing = trackBackground(this.writeAll(taken)).finally(() => {
      this.writing = null;
      if (this.buffer.length && !this.timer) void this.flushOnce();
    });
    return this.writing;
  }

  private async writeAll(items: T[]) {
    for (let i = 0; i < items.length; i += this.options.maxBatch) {
      const batch = items.slice(i, i + this.options.maxBatch);
      try {
        await this.write(batch);
        this.stats.written += batch.length;
      } catch (err) {
        this.stats.failed += batch.length;
        console.warn(`[synthex ${this.label}] ${batch.length} not written: ${(err as Error).message}`);
      }
    }
  }
}
