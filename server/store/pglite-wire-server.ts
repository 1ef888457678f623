/**
 * Serves one PGlite instance over the Postgres wire protocol to many client connections.
 *
 * Why not `PGLiteSocketServer` from `@electric-sql/pglite-socket` (0.2.17)? PGlite is one
 * backend session; that server queues client messages one by one and only keeps a connection
 * exclusive while an explicit transaction is open. Extended-protocol messages of two
 * connections (Parse/Bind/Execute/Sync, what `pg` sends for every parameterized query) then
 * interleave and clobber each other's unnamed statement and portal: two `pg` pools mixing
 * parameterized queries and transactions fail within milliseconds with
 * `portal "" does not exist`.
 *
 * Here a connection holds the session from its first message until the backend answers
 * ReadyForQuery with status Idle (no transaction, no half-finished extended-protocol
 * sequence, no COPY). Other connections wait their turn (FIFO). A connection that goes away
 * mid-sequence or mid-transaction is cleaned up (Sync, ROLLBACK) before the next one runs.
 *
 * Limits of sharing one session, same as with pglite-socket: session state (SET, named
 * prepared statements, temp tables, advisory locks) is shared by all connections, and a
 * connection idle inside a transaction blocks everyone else until it finishes (after
 * `idleInTransactionTimeoutMs` with others waiting, it is disconnected and rolled back).
 * Idle time is counted only while this process's event loop is free to read the client (see
 * `LoopClock`): a client whose next message waits unread behind a long CPU task of this process
 * (the CLI runs its evals and builds beside the database) is slow, not stuck.
 *
 * Authentication: PGlite accepts any startup message, so the server answers it itself with a
 * SCRAM-SHA-256 exchange against `password` and forwards the startup message to PGlite only
 * once the client has proved it knows the password. A wrong or missing password gets the
 * Postgres error 28P01 and the connection is closed before it reaches the database.
 */
import net from "node:net";
import type { PGlite } from "@electric-sql/pglite";
import { LoopClock } from "./loop-clock";
import { SCRAM_MECHANISM, ScramExchange, scramVerifier, type ScramVerifier } from "./wire-auth";

const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

const TYPE_READY = 0x5a; // 'Z'
const TYPE_COPY_IN = 0x47; // 'G'
const TYPE_COPY_BOTH = 0x57; // 'W'
const FE_TERMINATE = 0x58; // 'X'
const FE_FLUSH = 0x48; // 'H'
const STATUS_IDLE = 0x49; // 'I'
const FE_PASSWORD = 0x70; // 'p': SASLInitialResponse / SASLResponse
/** Messages before authentication are tiny; anything bigger is not a Postgres client. */
const MAX_AUTH_MESSAGE = 8 * 1024;
/**
 * Postgres's default authentication_timeout. A client in the same process as the server (the CLI,
 * `npm start`) answers each step only when the event loop is free, and a long query blocks it: ten
 * seconds refused healthy clients under load ("08006 authentication timed out").
 */
const AUTH_TIMEOUT_MS = 60_000;

export interface WireServerOptions {
  /** Every client must prove it knows this password (SCRAM-SHA-256); any user name is accepted. */
  password: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Called for unexpected errors (default: console.error). */
  onError?: (err: unknown) => void;
  /**
   * A connection that holds the session (inside a transaction) without sending anything for this
   * long while other connections wait is disconnected, which rolls it back. Default 60 s; 0 = never.
   */
  idleInTransactionTimeoutMs?: number;
}

export interface WireServer {
  readonly host: string;
  readonly port: number;
  /** Open client connections. */
  connectionCount(): number;
  /** Stops listening, drops clients (rolling back what they left open). Does not close the PGlite instance. */
  close(): Promise<void>;
}

function frontendMessage(type: string, body: Buffer = Buffer.alloc(0)): Uint8Array {
  const out = Buffer.alloc(5 + body.length);
  out.write(type, 0, "latin1");
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return new Uint8Array(out);
}
const SYNC = frontendMessage("S");
const ROLLBACK = frontendMessage("Q", Buffer.from("ROLLBACK\0"));
const COPY_FAIL = frontendMessage("f", Buffer.from("client disconnected\0"));

function backendMessage(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(5 + body.length);
  out.write(type, 0, "latin1");
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

function authMessage(code: number, data: Buffer | string = Buffer.alloc(0)): Buffer {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const body = Buffer.alloc(4 + bytes.length);
  body.writeInt32BE(code, 0);
  bytes.copy(body, 4);
  return backendMessage("R", body);
}

function fatal(code: string, message: string): Buffer {
  const field = (tag: string, value: string) => `${tag}${value}\0`;
  return backendMessage("E", Buffer.from(`${field("S", "FATAL")}${field("V", "FATAL")}${field("C", code)}${field("M", message)}\0`, "utf8"));
}

/** The key/value pairs of a startup message (after length and protocol version). */
function startupParams(msg: Buffer): Map<string, string> {
  const parts = msg.subarray(8).toString("utf8").split("\0");
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) out.set(parts[i]!, parts[i + 1]!);
  return out;
}

/** FIFO ownership of the single PGlite session. */
class SessionGate {
  private owner: Connection | null = null;
  private waiting: Array<{ conn: Connection; resolve: () => void; reject: (err: Error) => void }> = [];

  isOwner(conn: Connection) {
    return this.owner === conn;
  }

  /** The owner, if others are waiting for it. */
  blocking(): Connection | null {
    return this.waiting.length > 0 ? this.owner : null;
  }

  acquire(conn: Connection): Promise<void> {
    if (this.owner === conn) return Promise.resolve();
    if (this.owner === null) {
      this.owner = conn;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => this.waiting.push({ conn, resolve, reject }));
  }

  release(conn: Connection) {
    if (this.owner !== conn) return;
    this.owner = null;
    const next = this.waiting.shift();
    if (next) {
      this.owner = next.conn;
      next.resolve();
    }
  }

  /** Forget a connection that is going away (it may still own the session: caller cleans up, then releases). */
  drop(conn: Connection) {
    const mine = this.waiting.filter((w) => w.conn === conn);
    this.waiting = this.waiting.filter((w) => w.conn !== conn);
    for (const w of mine) w.reject(new Error("connection closed"));
  }
}

class Connection {
  private inBuf: Buffer = Buffer.alloc(0);
  /** startup: waiting for the startup message; auth: SCRAM exchange; ready: forwarding to PGlite. */
  private phase: "startup" | "auth" | "ready" = "startup";
  private startup: Uint8Array | null = null;
  private user = "";
  private scram: ScramExchange | null = null;
  private authTimer: NodeJS.Timeout | null = null;
  private queue: Uint8Array[] = [];
  private pumping = false;
  private closed = false;
  private executing = false;
  private lastActivity: number;
  readonly done: Promise<void>;
  private resolveDone!: () => void;

  // Backend state as seen from the output stream.
  private needReady = false; // sent something that will end with ReadyForQuery, not seen yet
  private txStatus = STATUS_IDLE;
  private copyIn = false;
  private outHeader = Buffer.alloc(5);
  private outHeaderLen = 0;
  private outBodyLeft = 0;
  private outBodyType = 0;
  private outBodyFirst = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly db: PGlite,
    private readonly gate: SessionGate,
    private readonly onError: (err: unknown) => void,
    private readonly verifier: ScramVerifier,
    private readonly clock: LoopClock,
  ) {
    this.lastActivity = clock.now();
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    // Checked again after pending I/O: an event loop blocked by a long query fires the timer late,
    // before the client's answer that arrived meanwhile has been read.
    this.authTimer = setTimeout(() => setImmediate(() => this.phase !== "ready" && this.refuse("08006", "authentication timed out")), AUTH_TIMEOUT_MS);
    this.authTimer.unref();
    socket.setNoDelay(true);
    socket.on("data", (chunk) => this.onData(chunk));
    socket.on("error", () => this.onClose());
    socket.on("close", () => this.onClose());
  }

  destroy() {
    this.socket.destroy();
    this.onClose();
  }

  /** Idle (not executing) for this many ms of free event loop (LoopClock). */
  idleFor(): number {
    return this.executing ? 0 : this.clock.now() - this.lastActivity;
  }

  private onData(chunk: Buffer) {
    if (this.closed) return;
    this.inBuf = this.inBuf.length ? Buffer.concat([this.inBuf, chunk]) : chunk;
    for (;;) {
      if (this.phase === "startup") {
        if (this.inBuf.length < 8) break;
        const len = this.inBuf.readInt32BE(0);
        if (len < 8 || len > MAX_AUTH_MESSAGE) return this.protocolError();
        if (this.inBuf.length < len) break;
        const code = this.inBuf.readInt32BE(4);
        const msg = this.inBuf.subarray(0, len);
        this.inBuf = this.inBuf.subarray(len);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.socket.write("N");
          continue;
        }
        if (code === CANCEL_REQUEST) {
          // Not supported (one session, queries are not interruptible from outside).
          this.socket.end();
          return;
        }
        if (code !== PROTOCOL_3) return this.refuse("0A000", "unsupported frontend protocol");
        // Kept until the client has authenticated; PGlite answers it with AuthenticationOk.
        this.startup = new Uint8Array(msg);
        this.user = startupParams(msg).get("user") ?? "";
        this.scram = new ScramExchange(this.verifier);
        this.phase = "auth";
        this.socket.write(authMessage(10, Buffer.from(`${SCRAM_MECHANISM}\0\0`, "utf8")));
        continue;
      }
      if (this.inBuf.length < 5) break;
      if (this.phase === "auth") {
        const len = this.inBuf.readInt32BE(1);
        if (len < 4 || len > MAX_AUTH_MESSAGE) return this.protocolError();
        if (this.inBuf.length < 1 + len) break;
        const type = this.inBuf[0];
        const body = this.inBuf.subarray(5, 1 + len);
        this.inBuf = this.inBuf.subarray(1 + len);
        if (type !== FE_PASSWORD || !this.authenticate(body)) return this.refuse("28P01", `password authentication failed for user "${this.user}"`);
        continue;
      }
      const len = this.inBuf.readInt32BE(1);
      if (len < 4) return this.protocolError();
      if (this.inBuf.length < 1 + len) break;
      this.queue.push(new Uint8Array(this.inBuf.subarray(0, 1 + len)));
      this.inBuf = this.inBuf.subarray(1 + len);
    }
    if (!this.pumping) void this.pump();
  }

  private protocolError() {
    this.socket.destroy();
    this.onClose();
  }

  /** Handles SASLInitialResponse, then SASLResponse; false means refuse the connection. */
  private authenticate(body: Buffer): boolean {
    const scram = this.scram!;
    if (!this.authStep) {
      const nul = body.indexOf(0);
      if (nul < 0 || body.subarray(0, nul).toString("utf8") !== SCRAM_MECHANISM || body.length < nul + 5) return false;
      const dataLen = body.readInt32BE(nul + 1);
      if (dataLen < 0 || body.length < nul + 5 + dataLen) return false;
      const serverFirst = scram.first(body.subarray(nul + 5, nul + 5 + dataLen).toString("utf8"));
      if (!serverFirst) return false;
      this.authStep = 1;
      this.socket.write(authMessage(11, serverFirst));
      return true;
    }
    const serverFinal = scram.final(body.toString("utf8"));
    if (!serverFinal) return false;
    if (this.authTimer) clearTimeout(this.authTimer);
    this.socket.write(authMessage(12, serverFinal));
    this.phase = "ready";
    this.scram = null;
    this.queue.push(this.startup!);
    this.startup = null;
    return true;
  }
  private authStep = 0;

  /** Answers with a FATAL error and closes; nothing has reached the database. */
  private refuse(code: string, message: string) {
    if (this.closed) return;
    if (this.socket.writable) this.socket.end(fatal(code, message));
    this.onClose();
  }

  private async pump() {
    this.pumping = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const msg = this.queue.shift()!;
        if (msg[0] === FE_TERMINATE) {
          this.socket.end();
          this.onClose();
          break;
        }
        try {
          await this.gate.acquire(this);
        } catch {
          break; // closed while waiting
        }
        if (msg[0] !== FE_FLUSH) this.needReady = true;
        await this.exec(msg, true);
        if (!this.needReady && this.txStatus === STATUS_IDLE) this.gate.release(this);
      }
    } catch (err) {
      this.onError(err);
      this.socket.destroy();
      this.closed = true;
    } finally {
      this.pumping = false;
      if (this.closed) await this.cleanup();
    }
  }

  /**
   * `onRawData` gets a view into PGlite's WASM memory (`HEAPU8.subarray`), valid only during the
   * call: the backend reuses that memory for the next chunk, and a memory growth detaches it. A
   * socket that cannot take a chunk at once (a result bigger than the kernel's buffer; the whole
   * result is produced synchronously, so the client cannot read in between) keeps a reference
   * and writes it later, so each chunk is copied before it is queued: without the copy, a result
   * of a few MB arrived corrupt or crashed the process with an uncaught RangeError.
   */
  private async exec(msg: Uint8Array, forward: boolean) {
    this.executing = true;
    const send = forward && !this.closed && this.socket.writable;
    if (send) this.socket.cork();
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(msg, {
          onRawData: (data: Uint8Array) => {
            this.scan(data);
            if (send && !this.closed && this.socket.writable) this.socket.write(Buffer.from(data));
          },
        }),
      );
    } finally {
      if (send) this.socket.uncork();
      this.executing = false;
      this.lastActivity = this.clock.now();
    }
  }

  /** Follows backend message framing to learn ReadyForQuery status and COPY-in mode. */
  private scan(data: Uint8Array) {
    let i = 0;
    while (i < data.length) {
      if (this.outBodyLeft > 0) {
        if (this.outBodyFirst && this.outBodyType === TYPE_READY) {
          this.txStatus = data[i];
          this.needReady = false;
          this.copyIn = false;
        }
        this.outBodyFirst = false;
        const n = Math.min(this.outBodyLeft, data.length - i);
        i += n;
        this.outBodyLeft -= n;
        continue;
      }
      this.outHeader[this.outHeaderLen++] = data[i++];
      if (this.outHeaderLen === 5) {
        this.outHeaderLen = 0;
        this.outBodyType = this.outHeader[0];
        this.outBodyLeft = this.outHeader.readInt32BE(1) - 4;
        this.outBodyFirst = true;
        if (this.outBodyType === TYPE_COPY_IN || this.outBodyType === TYPE_COPY_BOTH) this.copyIn = true;
      }
    }
  }

  private onClose() {
    if (this.closed) return;
    this.closed = true;
    if (this.authTimer) clearTimeout(this.authTimer);
    this.queue = [];
    this.gate.drop(this);
    if (!this.pumping) void this.cleanup();
  }

  private cleanupStarted = false;
  private async cleanup() {
    if (this.cleanupStarted) return;
    this.cleanupStarted = true;
    try {
      if (this.gate.isOwner(this)) {
        // Leave the session as a fresh connection would find it.
        if (this.copyIn) await this.exec(COPY_FAIL, false);
        if (this.needReady) await this.exec(SYNC, false);
        if (this.txStatus !== STATUS_IDLE) await this.exec(ROLLBACK, false);
      }
    } catch (err) {
      this.onError(err);
    } finally {
      this.gate.release(this);
      this.resolveDone();
    }
  }
}

/** Serve `db` on host:port. The caller keeps owning `db` (open it before, close it after `close()`). */
export async function startWireServer(db: PGlite, options: WireServerOptions): Promise<WireServer> {
  if (!options.password) throw new Error("wire server: a password is required");
  const verifier = scramVerifier(options.password);
  const host = options.host ?? "127.0.0.1";
  const onError =
    options.onError ?? ((err: unknown) => console.error("[synthex db] wire server:", err instanceof Error ? err.message : err));
  await db.waitReady;
  const gate = new SessionGate();
  const idleLimit = options.idleInTransactionTimeoutMs ?? 60_000;
  // Ticks of at most a second, and several per limit, so a blocked event loop adds little to anyone's idle time.
  const tickMs = Math.min(1000, Math.max(1, Math.floor(idleLimit / 4)));
  const clock = new LoopClock(tickMs);
  const connections = new Set<Connection>();
  const server = net.createServer((socket) => {
    const conn = new Connection(socket, db, gate, onError, verifier, clock);
    connections.add(conn);
    void conn.done.then(() => connections.delete(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", onError);
  const stuck = (holder: Connection | null): holder is Connection => holder !== null && holder === gate.blocking() && holder.idleFor() > idleLimit;
  const watchdog =
    idleLimit > 0
      ? setInterval(() => {
          clock.tick();
          const holder = gate.blocking();
          if (!stuck(holder)) return;
          // Checked again after pending I/O (timers run before sockets are read): the client's
          // next message may be in its socket already.
          setImmediate(() => {
            if (!stuck(holder)) return;
            onError(new Error(`disconnecting a client idle in a transaction for over ${idleLimit} ms while others wait`));
            holder.destroy();
          });
        }, tickMs).unref()
      : null;
  const address = server.address();
  if (address === null || typeof address !== "object") throw new Error("wire server: no address");
  let closing: Promise<void> | null = null;
  return {
    host,
    port: address.port,
    connectionCount: () => connections.size,
    close() {
      closing ??= (async () => {
        if (watchdog) clearInterval(watchdog);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        const all = [...connections];
        for (const conn of all) conn.destroy();
        await Promise.all(all.map((c) => c.done));
        await stopped;
      })();
      return closing;
    },
  };
}
