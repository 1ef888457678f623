import { expect, test } from "@playwright/test";
import { editSummariesInCanvas, FIXTURE, searchMemory, signUp, waitForRun } from "./helpers";

/**
 * The hello-world path in a real browser, on the embedded defaults and the offline model:
 * sign up → chat-memory pipeline → upload a ChatGPT export → plan → run → search a planted phrase
 * at `monthly` and drill down to the raw conversation → change the summaries prompt → the overview
 * marks summaries and everything downstream as changed → run again → only that work runs.
 * The prompt is changed in the canvas only: a canvas that cannot do it fails this test.
 */
const stamp = Date.now();
const user = { email: `hello-${stamp}@example.com`, password: "hello-password-1" };
const PLANTED = "the lighthouse key is hidden under the blue ceramic frog";
const QUERY = "blue ceramic frog";

const EDIT = "Keep names, places and where things are kept.";

test("hello world: upload, run, search, drill down, change a prompt, re-run incrementally", async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  const shot = (name: string) => page.screenshot({ path: testInfo.outputPath(name), fullPage: true });

  await signUp(page, user);
  const pipelinesUrl = new URL(page.url()).pathname;

  // New pipeline from the chat-memory template.
  await page.goto(`${pipelinesUrl}/new`);
  await page.getByTestId("template-chat-memory").click();
  await page.getByLabel("Name").fill("hello-world");
  await shot("01-new-pipeline.png");
  await page.getByTestId("create-pipeline-submit").click();
  await expect(page).toHaveURL(/\/pipelines\/(?!new)[^/?]+(\?.*)?$/);
  const overviewUrl = new URL(page.url()).pathname;
  await expect(page.getByText("Nothing to run yet")).toBeVisible();
  await shot("02-overview-empty.png");

  // Upload the export: a per-file report, the source count, and a plan.
  await page.getByTestId("upload-chats").locator('input[type="file"]').setInputFiles(FIXTURE);
  await expect(page.getByTestId("upload-report-chats")).toContainText("5 added");
  await expect(page.getByTestId("source-count-chats")).toHaveText("5");
  await expect(page.getByTestId("pending-transcripts")).toHaveText("5");
  await expect(page.getByTestId("step-row-monthly")).toBeVisible();
  await shot("03-uploaded-plan.png");

  // Run and watch it finish.
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  await expect(page.getByTestId("made-transcripts")).toHaveText("5");
  await shot("04-run-completed.png");

  // Search the planted phrase with the defaults (every indexed step, hybrid): the rare phrase said
  // once is the top hit, in the 3-turn window that holds it; then drill down to the raw conversation.
  await page.getByTestId("tab-explore").click();
  await searchMemory(page, QUERY);
  const hit = page.getByTestId("search-result").first();
  await expect(hit).toBeVisible();
  await expect(hit).toHaveAttribute("data-step", "windows");
  await expect(hit).toContainText(/blue ceramic frog/i);
  await shot("05-search-default.png");
  await hit.click();
  const content = page.getByTestId("record-content");
  for (let depth = 0; depth < 6; depth++) {
    const items = page.getByTestId("source-column").getByTestId("source-item");
    await expect(items.first()).toBeVisible();
    const matching = items.filter({ hasText: /ceramic frog/i });
    await ((await matching.count()) ? matching.first() : items.first()).click();
    await expect(content).toBeVisible();
    await shot(`06-drill-${depth}.png`);
    if (await page.getByTestId("leaf-badge").isVisible()) break;
    await page.getByTestId("drill-down").click();
  }
  await expect(page.getByTestId("leaf-badge")).toBeVisible();
  await expect(content).toContainText(PLANTED, { ignoreCase: true });
  await shot("07-leaf.png");

  // Record detail with audit and lineage, from the explorer.
  await page.getByTestId("open-record").click();
  await expect(page.getByTestId("record-content")).toContainText(PLANTED, { ignoreCase: true });
  await shot("08-record-leaf.png");

  // The record browser at `monthly`, and a monthly record's audit and lineage graph.
  await page.goto(`${overviewUrl}/records?branch=main&step=monthly`);
  await expect(page.getByTestId("record-row")).toHaveCount(2);
  await shot("08b-records-monthly.png");
  await page.getByTestId("record-row").filter({ hasText: "2024-01" }).getByRole("link").click();
  await expect(page.getByTestId("extractive-label")).toBeVisible();
  await expect(page.getByTestId("lineage-graph")).toBeVisible();
  await expect(page.getByTestId("lineage-node-chats").first()).toBeVisible();
  await shot("08c-record-monthly-lineage.png");

  // Change the summaries prompt in the canvas (the owner may save on the protected main).
  await editSummariesInCanvas(page, overviewUrl, "main", EDIT, "summaries: keep places");
  await shot("09a-canvas-saved.png");

  await page.goto(`${overviewUrl}?branch=main`);
  await expect(page.getByTestId("state-summaries")).toHaveText("changed");
  await expect(page.getByTestId("state-monthly")).toHaveText("changed");
  await expect(page.getByTestId("state-world-model")).toHaveText("changed");
  await expect(page.getByTestId("state-transcripts")).toHaveText("up to date");
  await expect(page.getByTestId("changed-summaries")).toBeVisible();
  await expect(page.getByTestId("changed-transcripts")).toHaveCount(0);
  await shot("09-overview-changed.png");

  // Run again: transcripts are reused (skipped), summaries and downstream are recomputed.
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  await expect(page.getByTestId("step-row-summaries")).toBeVisible();
  await expect(page.getByTestId("made-transcripts")).toHaveText("0");
  await expect(page.getByTestId("skipped-transcripts")).toHaveText("5");
  await expect(page.getByTestId("made-summaries")).toHaveText("5");
  await shot("10-rerun-skipped.png");

  await page.getByTestId("tab-runs").click();
  await expect(page.getByTestId("run-row")).toHaveCount(2);
  await shot("11-runs-list.png");
});
