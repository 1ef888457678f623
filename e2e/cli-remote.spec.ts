import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { createApiKey, signUp } from "./helpers";

/**
 * The quick start's `--url http://host:3000 --api-key sx_…`: the CLI against the running server that
 * Playwright started (`npm start`'s script), over real HTTP, with a key made in Settings → API keys.
 * What the CLI creates shows in the browser.
 */
const stamp = Date.now();
const user = { email: `cli-${stamp}@example.com`, password: "cli-password-12" };
const FIXTURE = path.join(import.meta.dirname, "fixtures", "chatgpt-export.json");
const ROOT = path.resolve(import.meta.dirname, "..");
const cliHome = mkdtempSync(path.join(tmpdir(), "synthex-cli-remote-"));
test.afterAll(() => rmSync(cliHome, { recursive: true, force: true }));

/** `synthex --url <server> --api-key <key> …args`, in a directory of its own (its config only). */
function synthex(baseURL: string, apiKey: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "bin/synthex.mjs"), "--url", baseURL, "--api-key", apiKey, ...args], {
      cwd: cliHome,
      // No DATABASE_URL: a remote command must not need the database.
      env: { ...process.env, SYNTHEX_DATA_DIR: path.join(cliHome, "data"), DATABASE_URL: "" },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

test("the CLI against a running server with an API key: init, import, plan, run, status, runs, search, get, lineage, export", async ({ page, baseURL }, testInfo) => {
  test.setTimeout(900_000);
  const slug = await signUp(page, user);
  // An API key, made in the UI and shown once.
  const key = await createApiKey(page, slug, "cli");
  const cli = (...args: string[]) => synthex(baseURL!, key, ...args);

  const bad = await synthex(baseURL!, "sx_not-a-real-key", "pipelines");
  expect(bad.code).toBe(1);
  expect(bad.err).toMatch(/API key is unknown or has been revoked/);

  const init = await cli("init", "remote-memory", "--from", FIXTURE);
  expect(init.err).toBe("");
  expect(init.code).toBe(0);
  expect(init.out).toMatch(/Created pipeline "remote-memory"/);
  expect(init.out).toMatch(/5 new/);

  const plan = await cli("plan");
  expect(plan.code).toBe(0);
  expect(plan.err).toBe("");
  expect(plan.out).toMatch(/transcripts\s+transform\s+5 of 5/);
  expect(plan.out).toMatch(/Estimated: \d+ item\(s\), [\d,]+ tokens, \$0\.0000\./);

  const run = await cli("run");
  expect(run.code).toBe(0);
  expect(run.out).toMatch(/: completed\. /);

  const status = await cli("status");
  expect(status.out).toMatch(/Pipeline remote-memory · branch main · last run: completed/);
  expect(status.out).toMatch(/summaries\s+5/);

  const runs = JSON.parse((await cli("runs", "--json")).out) as Array<{ id: string; status: string }>;
  expect(runs).toHaveLength(1);
  const detail = await cli("runs", runs[0]!.id);
  expect(detail.out).toMatch(new RegExp(`Run ${runs[0]!.id} on main: completed`));
  expect(detail.out).toMatch(/summaries\s+5\s+5\s+0\s+0/);

  const search = JSON.parse((await cli("search", "blue ceramic frog", "--step", "transcripts", "--mode", "fts", "--json")).out) as {
    hits: Array<{ id: string; step: string }>;
  };
  expect(search.hits[0]!.step).toBe("transcripts");
  const id = search.hits[0]!.id;
  const record = await cli("get", id);
  expect(record.out).toMatch(new RegExp(`^transcripts · ${id}`));
  const lineage = await cli("lineage", id);
  expect(lineage.out.split("\n").some((l) => /^\s*└ chats .*/.test(l))).toBe(true);

  const toml = await cli("export", "--toml");
  expect(toml.out).toMatch(/^# Synthex pipeline spec/);
  expect(toml.out).toMatch(/name = "remote-memory"/);

  // Importing the same file again adds nothing; the browser shows the pipeline the CLI made.
  const again = await cli("import", FIXTURE);
  expect(again.out).toMatch(/0 new/);
  await page.goto(`/w/${slug}/pipelines`);
  await expect(page.getByTestId("pipeline-row-remote-memory")).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath("cli-remote-pipelines.png") });
});
