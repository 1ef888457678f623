/**
 * SCRAM-SHA-256 (RFC 5802 / 7677), the server side of Postgres' password exchange, for the
 * embedded database's wire server. The verifier (salt, StoredKey, ServerKey) is derived once per
 * server from the password; each connection then costs two HMACs, not a PBKDF2.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";

export const SCRAM_MECHANISM = "SCRAM-SHA-256";
const ITERATIONS = 4096;

export interface ScramVerifier {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

const hmac = (key: Buffer, data: string | Buffer) => createHmac("sha256", key).update(data).digest();

export function scramVerifier(password: string): ScramVerifier {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password.normalize("NFKC"), salt, ITERATIONS, 32, "sha256");
  const clientKey = hmac(salted, "Client Key");
  return {
    salt,
    iterations: ITERATIONS,
    storedKey: createHash("sha256").update(clientKey).digest(),
    serverKey: hmac(salted, "Server Key"),
  };
}

function attributes(message: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of message.split(",")) {
    const eq = part.indexOf("=");
    if (eq === 1) out.set(part[0]!, part.slice(2));
  }
  return out;
}

/** One connection's exchange: `first` takes the client-first-message, `final` the client-final-message. */
export class ScramExchange {
  private clientFirstBare = "";
  private serverFirst = "";
  private nonce = "";

  constructor(private readonly verifier: ScramVerifier) {}

  /** Returns server-first-message, or null when the client message is malformed or asks for channel binding. */
  first(clientFirst: string): string | null {
    // gs2 header: "n,," (no channel binding) or "y,," (client could, server does not offer it).
    if (!clientFirst.startsWith("n,,") && !clientFirst.startsWith("y,,")) return null;
    this.clientFirstBare = clientFirst.slice(3);
    const clientNonce = attributes(this.clientFirstBare).get("r");
    if (!clientNonce || !/^[\x21-\x2b\x2d-\x7e]+$/.test(clientNonce)) return null;
    this.nonce = clientNonce + randomBytes(18).toString("base64");
    this.serverFirst = `r=${this.nonce},s=${this.verifier.salt.toString("base64")},i=${this.verifier.iterations}`;
    return this.serverFirst;
  }

  /** Returns server-final-message when the proof is right, null otherwise. */
  final(clientFinal: string): string | null {
    const proofAt = clientFinal.lastIndexOf(",p=");
    if (!this.serverFirst || proofAt < 0) return null;
    const withoutProof = clientFinal.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    if (attrs.get("r") !== this.nonce) return null;
    const proof = Buffer.from(clientFinal.slice(proofAt + 3), "base64");
    if (proof.length !== 32) return null;
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientSignature = hmac(this.verifier.storedKey, authMessage);
    const clientKey = Buffer.alloc(32);
    for (let i = 0; i < 32; i++) clientKey[i] = proof[i]! ^ clientSignature[i]!;
    const candidate = createHash("sha256").update(clientKey).digest();
    if (!timingSafeEqual(candidate, this.verifier.storedKey)) return null;
    return `v=${hmac(this.verifier.serverKey, authMessage).toString("base64")}`;
  }
}
