/**
 * npx tsx bench/pages.ts <base-url> — time to content in Chromium, on a running Synthex (the
 * embedded database): the first page after sign-up, a pipeline's overview, records browse, branch
 * create and promote (each from the click to the screen that shows it done). Prints median ms of
 * `--repeat` (default 3) for the pages; asserts nothing. Start a server first, e.g.
 *   PORT=3190 SYNTHEX_DATA_DIR=/tmp/pages node --import tsx scripts/start.ts
 */
import path from "node:path";
import { chromium, type Page } from "@playwright/test";

const base = process.argv[2] ?? "http://localhost:3190";
const repeat = Number(process.argv.find((a) => a.startsWith("--repeat="))?.split("=")[1] ?? 3);
const fixture = path.join(import.meta.dirname, "../e2e/fixtures/chatgpt-export.json");

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(what: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await what();
  return Math.round(performance.now() - t);
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  const page: Page = await browser.newPage({ baseURL: base });
  page.setDefaultTimeout(120_000);
  const out: Record<string, number> = {};

  // First page after sign-up: from the click to the pipelines list.
  await page.goto("/signup");
  await page.getByLabel("Email").fill(`pages-${Date.now()}@example.com`);
  await page.getByLabel("Password").fill("pages-bench-password-1");
  out["first page after sign-up"] = await timed(async () => {
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/w\/[^/]+\/pipelines$/);
    await page.getByRole("heading").first().waitFor();
  });
  const slug = new URL(page.url()).pathname.split("/")[2]!;

  await page.goto(`/w/${slug}/pipelines/new`);
  await page.getByTestId("template-chat-memory").click();
  await page.getByLabel("Name").fill("pages");
  await page.getByTestId("create-pipeline-submit").click();
  await page.waitForURL(/\/pipelines\/(?!new)[^/?]+(\?.*)?$/);
  const overview = new URL(page.url()).pathname;
  await page.getByTestId("upload-chats").locator('input[type="file"]').setInputFiles(fixture);
  await page.getByTestId("upload-report-chats").first().waitFor();
  await page.getByTestId("run-button").click();
  await page.waitForURL(/\/runs\/[^/?]+/);
  await page.locator('[data-testid="run-status"][data-status="completed"]').waitFor({ timeout: 180_000 });

  const overviewTimes: number[] = [];
  const recordTimes: number[] = [];
  for (let i = 0; i < repeat; i++) {
    overviewTimes.push(await timed(async () => {
      await page.goto(overview);
      await page.getByTestId("plan-table").waitFor();
    }));
    recordTimes.push(await timed(async () => {
      await page.goto(`${overview}/records`);
      await page.getByTestId("record-row").first().waitFor();
    }));
  }
  out["overview (median)"] = median(overviewTimes);
  out["records browse (median)"] = median(recordTimes);

  // Branch create: from Create to the branch selected in the bar.
  await page.goto(overview);
  await page.getByTestId("new-branch").click();
  await page.getByTestId("branch-name").fill("bench");
  out["branch create"] = await timed(async () => {
    await page.getByTestId("create-branch").click();
    await page.getByTestId("branch-name").waitFor({ state: "hidden" });
  });

  // Promote: from the confirmation to the dialog gone (main points at the branch's records).
  await page.goto(`${overview}/branches/diff?branch=bench&against=main`);
  await page.getByRole("button", { name: /Promote bench into main/ }).click();
  out.promote = await timed(async () => {
    await page.getByTestId("confirm-promote").click();
    await page.getByTestId("confirm-promote").waitFor({ state: "hidden" });
  });

  await browser.close();
  for (const [k, v] of Object.entries(out)) console.log(`${k.padEnd(28)} ${String(v).padStart(6)} ms`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
