import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * NEXTAUTH_SECRET from the environment, or a random one generated on first start and kept
 * in the data directory (mode 600) so sessions survive restarts on a dev machine.
 */
export function ensureAuthSecret(dataDir: string): string {
  const fromEnv = process.env.NEXTAUTH_SECRET ?? process.env.AUTH_SECRET;
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, "auth-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/**
 * With `DATABASE_URL` set (a shared database, possibly several app servers) the secrets must come
 * from the environment: a secret generated into one server's data directory would differ on the
 * next server (sessions signed by one would fail on the other). Throws saying what to set.
 */
export function requireEnvironmentSecrets(env: Record<string, string | undefined> = process.env): void {
  if (!env.DATABASE_URL?.trim()) return;
  if (env.NEXTAUTH_SECRET?.trim() || env.AUTH_SECRET?.trim()) return;
  throw new Error(
    "DATABASE_URL is set, so secrets are not generated into a local data directory: set NEXTAUTH_SECRET " +
      "(the same random value on every app server, e.g. `openssl rand -base64 32`) and NEXTAUTH_URL (the public URL). " +
      "SYNTHEX_ENCRYPTION_KEY (provider keys at rest) defaults to NEXTAUTH_SECRET. See .env.example.",
  );
}
