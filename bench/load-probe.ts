/**
 * bench:load's measuring parts: the HTTP client of the load, the processes of a target and their
 * CPU, waiting for a server, percentiles.
 */
import { readFileSync, readdirSync } from "node:fs";
import { gunzipSync, inflateSync } from "node:zlib";
import { Pool } from "undici";

/** What a measured call returns: the status and the whole body (read in full, like a client would). */
export interface Answer {
  status: number;
  text(): Promise<string>;
}

/**
 * The load's HTTP client: undici's `Pool.request()`, one keep-alive pool per origin, as a load
 * generator (autocannon) does, instead of the global `fetch` — its WHATWG layer (Headers, Request,
 * Response, web streams) cost this process several times the CPU per call, on the same 2 cores the
 * app and the database use — or `request(url)` through an Agent (which parses the URL and looks the
 * origin's pool up on every call). The requests are the ones `fetch` sent: same URL, method, body
 * and headers, the defaults `fetch` adds included (accept, accept-language, sec-fetch-mode,
 * user-agent, accept-encoding; merged once per headers object); each answer's whole body is read,
 * and an encoded body is decoded as `fetch` would. No pipelining: one request at a time per
 * connection, like an agent's client.
 */
const pools = new Map<string, Pool>();
const FETCH_DEFAULT_HEADERS = { accept: "*/*", "accept-language": "*", "sec-fetch-mode": "cors", "user-agent": "node", "accept-encoding": "gzip, deflate" };
const sentHeaders = new WeakMap<Record<string, string>, Record<string, string>>();
export async function http(url: string, init: { method?: "GET" | "POST"; headers: Record<string, string>; body?: string }): Promise<Answer> {
  const cut = url.indexOf("/", url.indexOf("//") + 2);
  const origin = url.slice(0, cut);
  let pool = pools.get(origin);
  if (!pool) pools.set(origin, (pool = new Pool(origin, { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, pipelining: 1 })));
  let headers = sentHeaders.get(init.headers);
  if (!headers) sentHeaders.set(init.headers, (headers = { ...FETCH_DEFAULT_HEADERS, ...init.headers }));
  const res = await pool.request({ path: url.slice(cut), method: init.method ?? "GET", headers, body: init.body });
  const encoding = res.headers["content-encoding"];
  const text = encoding === "gzip" || encoding === "deflate"
    ? await res.body.arrayBuffer().then((b) => (encoding === "gzip" ? gunzipSync(Buffer.from(b)) : inflateSync(Buffer.from(b))).toString("utf8"))
    : await res.body.text();
  return { status: res.statusCode, text: async () => text };
}

/** Parent pid → children, from /proc. */
function processTree(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

export function descendants(pid: number, tree = processTree()): number[] {
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(tree.get(p) ?? []));
  }
  return out;
}

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime, stime in clock ticks (USER_HZ = 100)
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** The app and the database processes of a target, for the CPU columns (asked again at each sample: backends come and go). */
export interface Probe {
  app(): number[];
  db(): number[];
}

/**
 * CPU of a set of processes from now on: what each process of the set used since the start (0 at
 * the start for one born meanwhile), sampled every 200 ms so that a process that ends meanwhile
 * counts with its last sample (losing at most 200 ms of its CPU). Children's CPU that a process
 * reaps (`cutime`) is not counted: when the app server's idle pool connections close, PostgreSQL's
 * postmaster reaps their backends' CPU of their whole lives — the setup's import and run included —
 * which a meter reading the postmaster's reaped time put into whichever row was measuring then.
 */
export function cpuMeter(pids: () => number[]): () => number {
  const start = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = (first: boolean) => {
    for (const p of pids()) {
      const s = cpuSeconds(p);
      if (first) start.set(p, s);
      else if (!start.has(p)) start.set(p, 0);
      if (s > 0) last.set(p, s);
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), 200);
  timer.unref();
  return () => {
    clearInterval(timer);
    sample(false);
    let sum = 0;
    for (const [p, s] of last) sum += Math.max(0, s - (start.get(p) ?? 0));
    return sum;
  };
}

export async function waitFor(url: string, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
}

export function percentile(sorted: number[], p: number) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
