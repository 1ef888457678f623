/**
 * Server-side requests to user-supplied URLs (projection webhooks, model provider base URLs)
 * may only go to the public internet:
 * - scheme https, or http for hosts an operator lists in SYNTHEX_ALLOW_HTTP_HOSTS (development);
 * - every address the host resolves to must be public: loopback, private, link-local (cloud
 *   metadata 169.254.169.254, fd00:ec2::254), CGNAT, multicast and reserved ranges are refused
 *   unless listed in SYNTHEX_ALLOW_PRIVATE_NETWORKS (CIDRs, or `*`);
 * - checked when the URL is saved (`assertOutboundUrl`) and again on every request
 *   (`outboundFetch`): its connections resolve names through a filtering lookup, so a name that
 *   changes its answer after the check (DNS rebinding) is still refused, and redirects are
 *   followed by hand, each hop checked the same way.
 */
import dns from "node:dns";
import net from "node:net";
import { Agent, fetch as undiciFetch } from "undici";

export class OutboundUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutboundUrlError";
  }
}

export interface OutboundPolicy {
  /** Hostnames (or IP literals) that may be called over plain http. `*`: any. */
  allowHttpHosts: ReadonlySet<string>;
  /** Non-public networks that may be called anyway; null = none, "all" = any. */
  allowedNetworks: net.BlockList | "all" | null;
}

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

/** Adds an address or CIDR range of an environment setting to `block` (an error names the setting). */
export function addRange(block: net.BlockList, range: string, setting: string) {
  const [address, prefix] = range.split("/");
  const family = net.isIPv6(address ?? "") ? "ipv6" : net.isIPv4(address ?? "") ? "ipv4" : null;
  if (!family) throw new Error(`${setting}: "${range}" is not an IP address or CIDR range`);
  if (prefix === undefined) block.addAddress(address!, family);
  else block.addSubnet(address!, Number(prefix), family);
}

/** The policy from the environment (read on every call, so tests and operators can change it). */
export function outboundPolicy(env: Record<string, string | undefined> = process.env): OutboundPolicy {
  const networks = list(env.SYNTHEX_ALLOW_PRIVATE_NETWORKS);
  let allowedNetworks: OutboundPolicy["allowedNetworks"] = null;
  if (networks.includes("*")) allowedNetworks = "all";
  else if (networks.length) {
    allowedNetworks = new net.BlockList();
    for (const range of networks) addRange(allowedNetworks, range, "SYNTHEX_ALLOW_PRIVATE_NETWORKS");
  }
  return { allowHttpHosts: new Set(list(env.SYNTHEX_ALLOW_HTTP_HOSTS)), allowedNetworks };
}

/** Addresses that are not the public internet. */
const NON_PUBLIC = (() => {
  const b = new net.BlockList();
  for (const [a, p] of [
    ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
    ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15],
    ["198.51.100.0", 24], ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
  ] as const) b.addSubnet(a, p, "ipv4");
  for (const [a, p] of [
    ["::", 128], ["::1", 128], ["64:ff9b::", 96], ["64:ff9b:1::", 48], ["100::", 64], ["2001::", 23], ["2001:db8::", 32],
    ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8],
  ] as const) b.addSubnet(a, p, "ipv6");
  return b;
})();

/** The eight 16-bit groups of an IPv6 address (any spelling: the URL parser writes it canonically first). */
function ipv6Groups(address: string): number[] {
  // A zone (fe80::1%eth0) is not part of the address; URL refuses it.
  const canonical = new URL(`http://[${address.split("%")[0]}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split("::") as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries, in the spellings that reach it: IPv4-mapped
 * (::ffff:0:0/96), IPv4-compatible (::/96), SIIT (::ffff:0:0:0/96), 6to4 (2002::/16) and NAT64
 * (64:ff9b::/96). Null for any other IPv6 address.
 */
export function embeddedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const v4 = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6]!, g[7]!); // ::ffff:a.b.c.d
  if (zero(0, 6)) return v4(g[6]!, g[7]!); // ::a.b.c.d (also :: and ::1, refused as 0.0.0.0/8)
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!); // ::ffff:0:a.b.c.d
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!); // 2002:aabb:ccdd::
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6]!, g[7]!); // 64:ff9b::a.b.c.d
  return null;
}

/** An IPv6 address that carries an IPv4 one (see `embeddedIPv4`) is checked as that IPv4 address. */
function normalize(address: string): { address: string; family: "ipv4" | "ipv6" } {
  if (!net.isIPv6(address)) return { address, family: "ipv4" };
  const v4 = embeddedIPv4(address);
  return v4 ? { address: v4, family: "ipv4" } : { address: address.split("%")[0]!, family: "ipv6" };
}

/** Null when `address` may be called under `policy`; otherwise why not. */
export function refusedAddress(address: string, policy: OutboundPolicy): string | null {
  const { address: a, family } = normalize(address);
  if (!NON_PUBLIC.check(a, family)) return null;
  if (policy.allowedNetworks === "all" || policy.allowedNetworks?.check(a, family)) return null;
  return `${address} is a private, loopback, link-local or reserved address (allow it with SYNTHEX_ALLOW_PRIVATE_NETWORKS)`;
}

/** Scheme and literal-address checks (no DNS). Throws OutboundUrlError naming the problem. */
export function checkUrlShape(raw: string, policy: OutboundPolicy = outboundPolicy()): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlError(`"${raw}" is not a URL.`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (url.protocol === "http:") {
    if (!policy.allowHttpHosts.has(host) && !policy.allowHttpHosts.has("*")) {
      throw new OutboundUrlError(`${url.origin} uses http: use https (plain http is allowed only for hosts in SYNTHEX_ALLOW_HTTP_HOSTS).`);
    }
  } else if (url.protocol !== "https:") {
    throw new OutboundUrlError(`${url.protocol} URLs are not allowed: use https.`);
  }
  if (net.isIP(host)) {
    const why = refusedAddress(host, policy);
    if (why) throw new OutboundUrlError(`${url.origin} is not allowed: ${why}.`);
  }
  return url;
}

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;
const systemLookup: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Full check for a URL about to be saved or called: shape, then every address its host resolves
 * to. A name that does not resolve (yet) passes here: the request itself is checked again.
 */
/** DNS error codes: the name does not resolve (ENOTFOUND, ENODATA) or the resolver could not answer (EAI_AGAIN, ESERVFAIL …). */
const DNS_CODES = new Set(["ENOTFOUND", "ENODATA", "EAI_AGAIN", "EAI_FAIL", "ESERVFAIL", "ETIMEOUT", "EAI_NONAME", "EAI_NODATA"]);

/** The DNS code of an error or of any error in its `cause` chain, if it is a DNS failure. */
export function dnsFailureCode(err: unknown): string | null {
  for (let e = err, hop = 0; e && hop < 8; e = (e as { cause?: unknown }).cause, hop++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && DNS_CODES.has(code)) return code;
  }
  return null;
}

/**
 * Why the host of `raw` does not resolve, in words (null when it resolves, or is an address): a
 * connection check says "DNS" when DNS is the cause, instead of blaming the URL.
 */
export async function dnsProblem(raw: string, lookup: LookupAll = systemLookup): Promise<string | null> {
  let host: string;
  try {
    host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return null;
  }
  if (net.isIP(host)) return null;
  try {
    await lookup(host);
    return null;
  } catch (err) {
    const code = dnsFailureCode(err) ?? ((err as { code?: unknown }).code as string | undefined) ?? "error";
    return code === "EAI_AGAIN" || code === "ESERVFAIL" || code === "ETIMEOUT"
      ? `DNS lookup of ${host} failed (${code}): this server's DNS did not answer. Check its network and resolver, then try again.`
      : `DNS: the host name ${host} does not resolve (${code}). Check its spelling in the base URL, or this server's DNS.`;
  }
}

export async function assertOutboundUrl(raw: string, policy: OutboundPolicy = outboundPolicy(), lookup: LookupAll = systemLookup): Promise<URL> {
  const url = checkUrlShape(raw, policy);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (net.isIP(host)) return url;
  let addresses: Array<{ address: string }> = [];
  try {
    addresses = await lookup(host);
  } catch {
    return url;
  }
  for (const { address } of addresses) {
    const why = refusedAddress(address, policy);
    if (why) throw new OutboundUrlError(`${url.origin} is not allowed: ${host} resolves to ${why}.`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/** A `net.connect` lookup that refuses non-public answers (the connection-time check). */
function filteringLookup(policy: OutboundPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      for (const { address } of addresses) {
        const why = refusedAddress(address, policy);
        if (why) {
          const refused = new OutboundUrlError(`${hostname} is not allowed: it resolves to ${why}.`) as OutboundUrlError & { code: string };
          refused.code = "ESYNTHEXREFUSED";
          return callback(refused, "");
        }
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

const MAX_REDIRECTS = 5;

export interface OutboundFetchOptions {
  policy?: OutboundPolicy;
  /** Follow redirects (each hop checked); false answers the 3xx as is. Default true. */
  followRedirects?: boolean;
}

/**
 * A `fetch` for user-supplied URLs, with the checks above on every request and every redirect.
 * A refused URL throws OutboundUrlError (also when it is the cause of a connection failure).
 */
export function outboundFetch(options: OutboundFetchOptions = {}): typeof fetch {
  const policy = () => options.policy ?? outboundPolicy();
  const doFetch = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const current = policy();
    const dispatcher = new Agent({ connect: { lookup: filteringLookup(current) as never } });
    const request = input instanceof Request ? input : null;
    let url = request ? request.url : String(input);
    let method = init.method ?? request?.method ?? "GET";
    let body = init.body ?? (request ? await request.arrayBuffer() : undefined);
    const headers = new Headers(init.headers ?? request?.headers);
    try {
      for (let hop = 0; ; hop++) {
        checkUrlShape(url, current);
        let res: Response;
        try {
          res = (await undiciFetch(url, {
            ...(init as object),
            method,
            headers,
            body: body as never,
            redirect: "manual",
            dispatcher,
          } as never)) as unknown as Response;
        } catch (err) {
          const cause = (err as { cause?: unknown }).cause;
          if (cause instanceof OutboundUrlError) throw cause;
          throw err;
        }
        const location = res.headers.get("location");
        if (options.followRedirects === false || res.status < 300 || res.status >= 400 || !location) return res;
        if (hop >= MAX_REDIRECTS) throw new OutboundUrlError(`Too many redirects from ${new URL(url).origin}.`);
        await res.arrayBuffer().catch(() => undefined);
        url = new URL(location, url).toString();
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
          headers.delete("content-type");
          headers.delete("content-length");
        }
      }
    } finally {
      // Responses may still be streaming: close the pool once they are done, not now.
      void dispatcher.close().catch(() => {});
    }
  };
  return doFetch as typeof fetch;
}
