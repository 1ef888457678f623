/**
 * The client's address, for the per-address limits of sign-up and sign-in.
 *
 * Next's route handlers see no socket, and Next fills `X-Forwarded-For` with the peer address only
 * when the request has none: a client that sends its own header names any address it likes. So the
 * server process stamps every request it accepts with its socket's peer address
 * (`installPeerStamp`, called from instrumentation.ts before Next handles a request), in a header
 * that carries a random per-process token and replaces any value of that name the client sent.
 * A stamp without the token is not ours: such a request (none reaches a route through Next once the
 * stamp is installed) counts as the address "unknown", a budget shared by all such requests, never
 * one the client chose.
 *
 * `X-Forwarded-For` is read only when the peer is a trusted proxy (`SYNTHEX_TRUSTED_PROXIES`,
 * comma-separated addresses or CIDR ranges): then the client is the right-most address of the
 * chain that is not a trusted proxy (each proxy appends the address it received the request from;
 * what the client wrote itself sits to the left of it).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import net from "node:net";
import { processState } from "../core/process-state";
import { addRange } from "./outbound";
import { onEveryHttpRequest } from "./request-hook";

const PEER_HEADER = "x-synthex-peer";
/** Every request that carries no valid stamp. */
export const UNKNOWN_ADDRESS = "unknown";

type HeaderBag = Headers | Record<string, unknown> | undefined;

// The process's (server/core/process-state.ts): the copy that stamps and the one that reads may differ.
const peerToken = () => processState("client-address.peerToken", () => randomBytes(18).toString("base64url"));

/** Writes the peer stamp into a Node request's headers (replacing whatever the client sent under that name). */
export function stampPeer(headers: http.IncomingHttpHeaders, address: string | undefined): void {
  headers[PEER_HEADER] = `${peerToken()} ${address ?? UNKNOWN_ADDRESS}`;
}

/** Makes every HTTP(S) server of this process stamp each request with its peer address (once per process). */
export function installPeerStamp(): void {
  onEveryHttpRequest("peer-stamp", (req) => stampPeer(req.headers, req.socket?.remoteAddress));
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (!headers) return undefined;
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value.join(", ") : typeof value === "string" ? value : undefined;
}

/** `::ffff:10.0.0.1` is `10.0.0.1`; other text is kept as it is (trimmed). */
function normalize(address: string): string {
  const a = address.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped ? mapped[1]! : a;
}

/** The socket peer address the server stamped on this request; null when it carries no valid stamp. */
export function peerAddress(headers: HeaderBag): string | null {
  const [token, address] = (header(headers, PEER_HEADER) ?? "").split(" ");
  const expected = Buffer.from(peerToken());
  const given = Buffer.from(token ?? "");
  if (!address || given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return normalize(address);
}

let parsed: { setting: string; list: net.BlockList | null } | null = null;

/** SYNTHEX_TRUSTED_PROXIES as a block list (null: no proxy is trusted). A bad entry is an error naming it. */
export function trustedProxies(env: Record<string, string | undefined> = process.env): net.BlockList | null {
  const setting = env.SYNTHEX_TRUSTED_PROXIES?.trim() ?? "";
  if (parsed?.setting === setting) return parsed.list;
  const ranges = setting.split(",").map((s) => s.trim()).filter(Boolean);
  let list: net.BlockList | null = null;
  if (ranges.length) {
    list = new net.BlockList();
    for (const range of ranges) addRange(list, range, "SYNTHEX_TRUSTED_PROXIES");
  }
  parsed = { setting, list };
  return list;
}

function isTrusted(list: net.BlockList, address: string): boolean {
  const family = net.isIP(address);
  return family !== 0 && list.check(address, family === 6 ? "ipv6" : "ipv4");
}

/**
 * The address per-address limits count: the socket peer, or — when the peer is a trusted proxy —
 * the right-most address of `X-Forwarded-For` that is not a trusted proxy.
 */
export function clientAddress(headers: HeaderBag, env: Record<string, string | undefined> = process.env): string {
  const peer = peerAddress(headers);
  if (!peer) return UNKNOWN_ADDRESS;
  const trusted = trustedProxies(env);
  if (!trusted || !isTrusted(trusted, peer)) return peer;
  const chain = (header(headers, "x-forwarded-for") ?? "").split(",").map(normalize).filter(Boolean);
  let address = peer;
  for (let i = chain.length - 1; i >= 0; i--) {
    address = chain[i]!;
    if (!isTrusted(trusted, address)) return address;
  }
  // Every hop is a trusted proxy: the left-most one is as far as the chain goes.
  return address;
}
