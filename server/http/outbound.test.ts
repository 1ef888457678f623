import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertOutboundUrl, checkUrlShape, embeddedIPv4, outboundFetch, outboundPolicy, OutboundUrlError, refusedAddress } from "./outbound";

/** What a production deployment has: no allowances. */
const strict = outboundPolicy({});
/** http allowed for the test hosts, but no private networks. */
const httpOnly = outboundPolicy({ SYNTHEX_ALLOW_HTTP_HOSTS: "127.0.0.1,127.0.0.2,localhost,rebind.test" });

const refused = async (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

interface Listener {
  server: Server;
  port: number;
  hits: string[];
}

async function listen(host: string, handler: (path: string) => { status: number; location?: string }): Promise<Listener> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const answer = handler(req.url ?? "/");
    res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

describe("outbound URL checks (when saved)", () => {
  it.each([
    ["http://example.com/hook", /use https/],
    ["ftp://example.com/x", /ftp: URLs are not allowed/],
    ["https://127.0.0.1/hook", /127\.0\.0\.1 is a private, loopback/],
    ["https://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a private, loopback, link-local/],
    ["https://[::1]:8080/", /::1 is a private/],
    ["https://[::ffff:127.0.0.1]/", /is a private/],
    ["https://10.1.2.3/", /is a private/],
    ["https://192.168.0.10/", /is a private/],
    ["https://[fd00:ec2::254]/", /is a private/],
    ["not a url", /is not a URL/],
  ])("%s is refused", (url, why) => {
    expect(() => checkUrlShape(url, strict)).toThrow(why);
  });

  it.each([
    // IPv4-compatible, SIIT, 6to4 and NAT64 spellings of loopback, metadata and private addresses
    ["::7f00:1", "127.0.0.1"],
    ["::127.0.0.1", "127.0.0.1"],
    ["::ffff:0:7f00:1", "127.0.0.1"],
    ["::ffff:0:127.0.0.1", "127.0.0.1"],
    ["2002:7f00:1::", "127.0.0.1"],
    ["2002:a9fe:a9fe::1", "169.254.169.254"],
    ["64:ff9b::7f00:1", "127.0.0.1"],
    ["64:ff9b::10.0.0.1", "10.0.0.1"],
    ["::ffff:7f00:1", "127.0.0.1"],
    ["0:0:0:0:0:FFFF:C0A8:0001", "192.168.0.1"],
  ])("[%s] carries %s and is refused as it", (v6, v4) => {
    expect(embeddedIPv4(v6)).toBe(v4);
    expect(refusedAddress(v6, strict)).toMatch(/is a private, loopback/);
    expect(() => checkUrlShape(`https://[${v6}]:8443/`, strict)).toThrow(/is a private, loopback/);
  });

  it("embedded public IPv4 addresses pass; other IPv6 addresses are not decoded", () => {
    expect(refusedAddress("2002:5db8:d822::1", strict)).toBeNull(); // 6to4 of 93.184.216.34
    expect(refusedAddress("64:ff9b::93.184.216.34", strict)).toBeNull();
    expect(embeddedIPv4("2606:4700::6810:84e5")).toBeNull();
    expect(refusedAddress("2606:4700::6810:84e5", strict)).toBeNull();
    expect(refusedAddress("fe80::1%eth0", strict)).toMatch(/is a private/);
    // An operator's allowance of 127.0.0.1 covers its IPv6 spellings too.
    const dev = outboundPolicy({ SYNTHEX_ALLOW_PRIVATE_NETWORKS: "127.0.0.1/32" });
    expect(refusedAddress("::ffff:0:7f00:1", dev)).toBeNull();
  });

  it("a public https URL passes; http passes only for allowed hosts", () => {
    expect(checkUrlShape("https://93.184.216.34/hook", strict).host).toBe("93.184.216.34");
    expect(checkUrlShape("https://hooks.example.com/x", strict).host).toBe("hooks.example.com");
    expect(() => checkUrlShape("http://127.0.0.1:9/x", httpOnly)).toThrow(/is a private/); // http allowed, address still not
    const dev = outboundPolicy({ SYNTHEX_ALLOW_HTTP_HOSTS: "127.0.0.1", SYNTHEX_ALLOW_PRIVATE_NETWORKS: "127.0.0.1/32" });
    expect(checkUrlShape("http://127.0.0.1:9/x", dev).port).toBe("9");
    expect(() => checkUrlShape("http://127.0.0.2:9/x", dev)).toThrow(/use https/);
  });

  it("a DNS name that resolves to loopback or metadata is refused", async () => {
    const lookup = async (host: string) =>
      host === "evil.test" ? [{ address: "127.0.0.1", family: 4 }] : host === "meta.test" ? [{ address: "169.254.169.254", family: 4 }] : [{ address: "93.184.216.34", family: 4 }];
    expect(String(await refused(assertOutboundUrl("https://evil.test/hook", strict, lookup)))).toMatch(/evil\.test resolves to 127\.0\.0\.1/);
    expect(String(await refused(assertOutboundUrl("https://meta.test/", strict, lookup)))).toMatch(/resolves to 169\.254\.169\.254/);
    expect((await assertOutboundUrl("https://fine.test/", strict, lookup)).host).toBe("fine.test");
    // The real resolver: localhost is 127.0.0.1 on this machine.
    expect(await refused(assertOutboundUrl("https://localhost:8443/", strict))).toBeInstanceOf(OutboundUrlError);
  });
});

describe("outbound requests (when called)", () => {
  let target: Listener;
  let redirector: Listener;

  beforeAll(async () => {
    target = await listen("127.0.0.1", () => ({ status: 200 }));
    // Stands in for a public server (its address is allowed below) that redirects to loopback.
    redirector = await listen("127.0.0.2", (p) => ({ status: 302, location: p === "/to-name" ? `http://localhost:${target.port}/via-name` : `http://127.0.0.1:${target.port}/internal` }));
  });
  afterAll(() => {
    target.server.close();
    redirector.server.close();
  });

  it("refuses loopback by address and by name; nothing reaches the listener", async () => {
    const guarded = outboundFetch({ policy: httpOnly });
    expect(await refused(guarded(`http://127.0.0.1:${target.port}/direct`, { method: "POST", body: "{}" }))).toBeInstanceOf(OutboundUrlError);
    const byName = await refused(guarded(`http://localhost:${target.port}/by-name`));
    expect(byName).toBeInstanceOf(OutboundUrlError);
    expect(String(byName)).toMatch(/localhost is not allowed: it resolves to 127\.0\.0\.1/);
    expect(target.hits).toEqual([]);
  });

  it("never follows a redirect to loopback", async () => {
    const policy = outboundPolicy({ SYNTHEX_ALLOW_HTTP_HOSTS: "127.0.0.1,127.0.0.2,localhost", SYNTHEX_ALLOW_PRIVATE_NETWORKS: "127.0.0.2/32" });
    const guarded = outboundFetch({ policy });
    expect(String(await refused(guarded(`http://127.0.0.2:${redirector.port}/start`)))).toMatch(/127\.0\.0\.1 is a private/);
    expect(String(await refused(guarded(`http://127.0.0.2:${redirector.port}/to-name`)))).toMatch(/localhost is not allowed/);
    expect(redirector.hits).toEqual(["GET /start", "GET /to-name"]);
    expect(target.hits).toEqual([]);
    // Not following at all answers the 302 itself.
    const manual = await outboundFetch({ policy, followRedirects: false })(`http://127.0.0.2:${redirector.port}/start`);
    expect(manual.status).toBe(302);
  });

  it("an operator's explicit allowance lets development servers through (how the tests reach their mock servers)", async () => {
    const dev = outboundPolicy({ SYNTHEX_ALLOW_HTTP_HOSTS: "127.0.0.1,localhost", SYNTHEX_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8" });
    const res = await outboundFetch({ policy: dev })(`http://localhost:${target.port}/allowed`, { method: "POST", body: "x" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
    expect(target.hits).toEqual(["POST /allowed"]);
  });
});
