import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientAddress, installPeerStamp, stampPeer, trustedProxies, UNKNOWN_ADDRESS } from "./client-address";

/** Headers as a request from `peer` arrives after the server stamped it, plus what the client sent. */
function arriving(peer: string, sent: Record<string, string> = {}): Record<string, string | string[] | undefined> {
  const headers: http.IncomingHttpHeaders = { ...sent };
  stampPeer(headers, peer);
  return headers;
}

describe("client address", () => {
  it("is the socket peer: a client-sent X-Forwarded-For is ignored without SYNTHEX_TRUSTED_PROXIES", () => {
    const env = {};
    expect(clientAddress(arriving("203.0.113.5", { "x-forwarded-for": "1.2.3.4" }), env)).toBe("203.0.113.5");
    expect(clientAddress(arriving("::ffff:203.0.113.5", { "x-forwarded-for": "5.6.7.8" }), env)).toBe("203.0.113.5");
    // Behind a proxy that is not listed, every client shares the proxy's address.
    expect(clientAddress(arriving("10.0.0.9", { "x-forwarded-for": "1.2.3.4" }), { SYNTHEX_TRUSTED_PROXIES: "10.0.0.1" })).toBe("10.0.0.9");
  });

  it("behind a trusted proxy, is the right-most untrusted address of the chain", () => {
    const env = { SYNTHEX_TRUSTED_PROXIES: "10.0.0.0/8, 192.168.1.1" };
    expect(clientAddress(arriving("10.0.0.9", { "x-forwarded-for": "198.51.100.7" }), env)).toBe("198.51.100.7");
    // The client wrote "1.2.3.4" itself; the proxy appended the address it saw (198.51.100.7).
    expect(clientAddress(arriving("10.0.0.9", { "x-forwarded-for": "1.2.3.4, 198.51.100.7" }), env)).toBe("198.51.100.7");
    // Two trusted hops: skipped from the right.
    expect(clientAddress(arriving("10.0.0.9", { "x-forwarded-for": "1.2.3.4, 198.51.100.7, 192.168.1.1" }), env)).toBe("198.51.100.7");
    // A trusted peer that forwarded nothing is the client itself.
    expect(clientAddress(arriving("10.0.0.9"), env)).toBe("10.0.0.9");
  });

  it("a request without the server's stamp (or with a forged one) is 'unknown', never what it claims", () => {
    expect(clientAddress(new Headers({ "x-forwarded-for": "1.2.3.4" }), {})).toBe(UNKNOWN_ADDRESS);
    expect(clientAddress(new Headers({ "x-synthex-peer": "guess 1.2.3.4" }), {})).toBe(UNKNOWN_ADDRESS);
  });

  it("a bad SYNTHEX_TRUSTED_PROXIES entry is an error that names it", () => {
    expect(() => trustedProxies({ SYNTHEX_TRUSTED_PROXIES: "10.0.0.1, proxy.internal" })).toThrow(/SYNTHEX_TRUSTED_PROXIES: "proxy.internal" is not an IP address or CIDR range/);
  });

  describe("over a real socket", () => {
    let server: http.Server;
    let port = 0;
    beforeAll(async () => {
      installPeerStamp();
      server = http.createServer((req, res) => res.end(clientAddress(req.headers, {})));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const get = (localAddress: string, headers: Record<string, string>) =>
      new Promise<string>((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port, localAddress, headers }, (res) => {
          let body = "";
          res.on("data", (d: Buffer) => (body += d.toString()));
          res.on("end", () => resolve(body));
        });
        req.on("error", reject);
        req.end();
      });

    it("is stamped by the server, replacing a stamp the client sent", async () => {
      expect(await get("127.0.0.3", { "x-forwarded-for": "1.2.3.4", "x-synthex-peer": "forged 5.6.7.8" })).toBe("127.0.0.3");
      expect(await get("127.0.0.4", {})).toBe("127.0.0.4");
    });
  });
});
