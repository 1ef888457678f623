/**
 * Process setup shared by `npm start`, the CLI and scripts: .env, the local auth secret, the database
 * (owning the embedded one if nobody does), migrations. Leaves DATABASE_URL set for child processes.
 */
import { existsSync } from "node:fs";
import { ensureAuthSecret } from "../auth/local-secret";
import { closeDb, getDatabaseUrl, getDb } from "./db";

export function dataDir(): string {
  return process.env.SYNTHEX_DATA_DIR ?? ".synthex";
}

export async function prepareRuntimeEnv(): Promise<{ url: string; close(): Promise<void> }> {
  if (existsSync(".env")) process.loadEnvFile(".env");
  process.env.NEXTAUTH_SECRET = ensureAuthSecret(dataDir());
  await getDb(); // opens (or finds) the database and applies migrations
  const url = await getDatabaseUrl();
  process.env.DATABASE_URL = url;
  return { url, close: closeDb };
}
