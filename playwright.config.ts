import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 3123);
// A fresh embedded database per e2e run, so tests never see an earlier run's users.
const dataDir = process.env.E2E_DATA_DIR ?? `.synthex-e2e/${Date.now()}`;
// Inbox folders are off without SYNTHEX_INBOX_ROOTS: a root made for this run (each workspace gets
// its own folder inside it). Kept in the environment so the workers, which load this file again, share it.
const inboxRoot = (process.env.E2E_INBOX_ROOT ??= mkdtempSync(path.join(tmpdir(), "synthex-e2e-inbox-root-")));

export default defineConfig({
  testDir: "e2e",
  timeout: 90_000,
  expect: { timeout: 15_000 },
  workers: 1,
  reporter: [["list"], ["json", { outputFile: "test-results/playwright.json" }]],
  use: {
    baseURL: `http://localhost:${port}`,
    screenshot: "on",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
  webServer: {
    command: "node --import tsx scripts/start.ts",
    url: `http://localhost:${port}/signin`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: "pipe",
    env: { PORT: String(port), SYNTHEX_DATA_DIR: dataDir, NEXTAUTH_URL: `http://localhost:${port}`, SYNTHEX_DB_PORT: "0",
      // The e2e mock model server listens on 127.0.0.1: allowed as an operator would for development.
      SYNTHEX_ALLOW_HTTP_HOSTS: "127.0.0.1,localhost", SYNTHEX_ALLOW_PRIVATE_NETWORKS: "127.0.0.1/32",
      // Every spec signs up its own people from 127.0.0.1 (about 25 per run): more than one address's budget.
      SYNTHEX_SIGNUP_RATE_PER_ADDRESS: "1000",
      SYNTHEX_INBOX_ROOTS: inboxRoot },
  },
});
