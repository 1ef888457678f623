/**
 * Secrets at rest (provider API keys): AES-256-GCM with a key derived (HKDF-SHA256) from
 * SYNTHEX_ENCRYPTION_KEY, else NEXTAUTH_SECRET / AUTH_SECRET. Ciphertext format:
 * `v1.<iv b64url>.<tag b64url>.<ciphertext b64url>`. Error messages never contain the plaintext.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";
const INFO = "synthex:provider-credentials:v1";

function serverSecret(): string {
  const secret = process.env.SYNTHEX_ENCRYPTION_KEY ?? process.env.NEXTAUTH_SECRET ?? process.env.AUTH_SECRET;
  if (!secret) {
    throw new Error("No server secret: set SYNTHEX_ENCRYPTION_KEY or NEXTAUTH_SECRET to store provider keys encrypted.");
  }
  return secret;
}

function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), Buffer.from("synthex"), Buffer.from(INFO), 32));
}

export function encryptSecret(plaintext: string, secret = serverSecret()): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", deriveKey(secret), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString("base64url"), tag.toString("base64url"), ciphertext.toString("base64url")].join(".");
}

export function decryptSecret(encrypted: string, secret = serverSecret()): string {
  const [version, iv, tag, data] = encrypted.split(".");
  if (version !== VERSION || !iv || !tag || data === undefined) throw new Error("Unreadable encrypted secret (unknown format).");
  try {
    const decipher = createDecipheriv("aes-256-gcm", deriveKey(secret), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new Error("Could not decrypt a stored secret: the server secret (SYNTHEX_ENCRYPTION_KEY / NEXTAUTH_SECRET) has changed. Re-enter the key.");
  }
}

/** What the UI may show of a key: its first 3 and last 4 characters. */
export function keyPreview(key: string): string {
  const k = key.trim();
  if (k.length <= 8) return "••••";
  return `${k.slice(0, 3)}…${k.slice(-4)}`;
}

/** Replace every occurrence of any of `secrets` in `text` (for error messages that echo requests). */
export function redact(text: string, secrets: Array<string | null | undefined>): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  return out;
}
