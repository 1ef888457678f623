/**
 * Live requests (issue 37) over real HTTP: a request counts from its arrival until its response is
 * closed — also while its body is still being written — and `whenNoLiveRequest` resolves only after
 * the last one ends; an aborted request ends its count too.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { beginLiveRequest, countLiveHttpRequests, liveRequestsInFlight, whenNoLiveRequest } from "./live-requests";

let server: http.Server;
let base = "";
const gates = new Map<string, () => void>();

beforeAll(async () => {
  countLiveHttpRequests();
  countLiveHttpRequests(); // once per process: a second call counts nothing twice
  server = http.createServer((req, res) => {
    // The response starts at once and ends when the test opens the request's gate.
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("first part;");
    gates.set(req.url!, () => res.end("last part"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const until = async (cond: () => boolean) => {
  const started = performance.now();
  while (!cond() && performance.now() - started < 5000) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
};

describe("live requests", () => {
  it("counts a request until its response closes; waiters resume after the last one", async () => {
    expect(liveRequestsInFlight()).toBe(0);
    const a = fetch(`${base}/a`).then((r) => r.text());
    const b = fetch(`${base}/b`).then((r) => r.text());
    await until(() => gates.size === 2);
    expect(liveRequestsInFlight()).toBe(2);
    let idle = false;
    void whenNoLiveRequest().then(() => (idle = true));
    gates.get("/a")!();
    expect(await a).toBe("first part;last part");
    await new Promise((r) => setTimeout(r, 50));
    expect(liveRequestsInFlight()).toBe(1);
    expect(idle).toBe(false);
    gates.get("/b")!();
    expect(await b).toBe("first part;last part");
    await until(() => idle);
    expect(liveRequestsInFlight()).toBe(0);
  });

  it("an aborted request ends its count; a procedure's count adds to it", async () => {
    gates.clear();
    const aborted = new AbortController();
    const c = fetch(`${base}/c`, { signal: aborted.signal }).then((r) => r.text()).catch(() => "aborted");
    await until(() => gates.size === 1);
    const procedure = beginLiveRequest();
    expect(liveRequestsInFlight()).toBe(2);
    aborted.abort();
    expect(await c).toBe("aborted");
    await until(() => liveRequestsInFlight() === 1);
    procedure();
    procedure(); // ending twice counts once
    expect(liveRequestsInFlight()).toBe(0);
    await whenNoLiveRequest();
  });
});
