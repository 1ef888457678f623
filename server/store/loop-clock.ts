/** The embedded wire server's clock for idleness (pglite-wire-server.ts). */
/**
 * Milliseconds during which the event loop was free to read clients, advanced by the watchdog's
 * ticks, each by at most its nominal interval. A tick that comes late was held up by synchronous
 * work in this process (a long query for another client, a CPU loop of a build or an eval that
 * shares it, a machine at load 20): for that long no client could be heard, so that time is
 * nobody's idleness. Measured on wall time, an owner whose event loop was blocked for a minute
 * disconnected a client whose next statement had been waiting in its socket all along ("idle in a
 * transaction for over 60000 ms", twice in a parallel `synthex eval --template all` under load).
 */
export class LoopClock {
  private free = 0;
  private last = Date.now();
  constructor(private readonly interval: number) {}
  tick() {
    const now = Date.now();
    this.free += Math.min(now - this.last, this.interval);
    this.last = now;
  }
  now() {
    return this.free + Math.min(Date.now() - this.last, this.interval);
  }
}
