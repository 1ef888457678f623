import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { freePort } from "../server/http/testing/free-port";

/**
 * The first screen after sign-up shows what this machine's CLI already made. On a machine of its
 * own (a fresh data directory and `npm start`'s script on a port of its own, so this account is the
 * machine's first): `synthex init --from` an export, then start the server, sign up, and the
 * personal workspace's pipelines page says "Local: 1 pipeline made with the CLI — open it"; the link
 * opens that pipeline in Local.
 */
const ROOT = path.resolve(import.meta.dirname, "..");
const FIXTURE = path.join(import.meta.dirname, "fixtures", "chatgpt-export.json");
const home = mkdtempSync(path.join(tmpdir(), "synthex-first-screen-"));
const dataDir = path.join(home, "data");
let server: ChildProcess | undefined;

test.afterAll(async () => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // already gone
    }
    await new Promise((r) => server!.once("exit", r).once("error", r));
  }
  rmSync(home, { recursive: true, force: true });
});

async function waitForServer(url: string, deadline: number) {
  while (Date.now() < deadline) {
    if (server?.exitCode !== null) throw new Error(`the server exited with ${server?.exitCode}`);
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`no answer from ${url}`);
}

test("after sign-up: 'Local: 1 pipeline made with the CLI — open it' when the CLI was used on this machine", async ({ page }) => {
  test.setTimeout(600_000);
  const env = { ...process.env, SYNTHEX_DATA_DIR: dataDir, DATABASE_URL: "" };
  const init = spawnSync(process.execPath, [path.join(ROOT, "bin/synthex.mjs"), "init", "personal-memory", "--from", FIXTURE], { cwd: ROOT, env, encoding: "utf8" });
  expect(init.stderr).toBe("");
  expect(init.stdout).toMatch(/Created pipeline "personal-memory"/);

  const port = await freePort();
  const base = `http://localhost:${port}`;
  server = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), NEXTAUTH_URL: base, SYNTHEX_DB_PORT: "0" },
    stdio: "ignore",
    detached: true,
  });
  await waitForServer(`${base}/signin`, Date.now() + 300_000);

  await page.goto(`${base}/signup`);
  await page.getByLabel("Email").fill(`first-${Date.now()}@example.com`);
  await page.getByLabel("Password").fill("first-screen-pw-1");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(/\/w\/[^/]+\/pipelines$/);
  expect(new URL(page.url()).pathname).not.toBe("/w/local/pipelines"); // the personal workspace

  const hint = page.getByTestId("local-cli-hint");
  await expect(hint).toHaveText("Local: 1 pipeline made with the CLI (personal-memory) — open it");
  await hint.getByTestId("local-cli-hint-open").click();
  await expect(page).toHaveURL(/\/w\/local\/pipelines\/[^/?]+$/);
  await expect(page.getByText("personal-memory").first()).toBeVisible();
});
