import { expect, test } from "@playwright/test";
import { createApiKey, FIXTURE, newPipeline, signUp, uploadToSource, waitForRun } from "./helpers";

/**
 * Issue #33 items 2, 8 and 9 in a browser: the run view lists every step with its state and
 * counts; the explorer says "No good match" for a phrase in no record and for a query of stop
 * words (instead of unrelated hits or an error); a new API key can be copied; the audit log names
 * what was acted on; template cards say what each is good for.
 */
test("run view: every step with its state, work items and state counts", async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const slug = await signUp(page, { email: `runs-${Date.now()}@example.com`, password: "runs-view-password-1" });
  await newPipeline(page, slug, "runs-view");
  await uploadToSource(page, "chats", FIXTURE, "added");
  await page.getByTestId("run-button").click();
  // From the run's first screen on, the whole plan is listed: no step appears only when it ends.
  await expect(page).toHaveURL(/\/runs\/[^/?]+/);
  for (const step of ["transcripts", "summaries", "monthly", "world-model", "windows"]) await expect(page.getByTestId(`step-row-${step}`)).toBeVisible();
  await waitForRun(page);
  await expect(page.getByTestId("step-counts")).toHaveText("5 completed");
  await expect(page.getByTestId("items-summaries")).toHaveText(/^[1-9]\d*$/);
  await page.screenshot({ path: testInfo.outputPath("run-view.png"), fullPage: true });
});

test("explorer: no good match for a phrase in no record, and for stop words, in semantic mode", async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const slug = await signUp(page, { email: `floor-${Date.now()}@example.com`, password: "floor-password-1" });
  const overview = await newPipeline(page, slug, "floor");
  await uploadToSource(page, "chats", FIXTURE, "added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  for (const q of ["quixotic zeppelin marmalade", "the"]) {
    await page.goto(`${overview}/explore?q=${encodeURIComponent(q)}&mode=semantic`);
    await expect(page.getByTestId("no-good-match")).toBeVisible();
    await expect(page.getByTestId("no-good-match")).toContainText("No good match");
    await expect(page.getByTestId("search-result")).toHaveCount(0);
  }
  await page.screenshot({ path: testInfo.outputPath("no-good-match.png"), fullPage: true });
  // A phrase that is there is still found.
  await page.goto(`${overview}/explore?q=${encodeURIComponent("lighthouse cabin key")}&mode=semantic`);
  await expect(page.getByTestId("search-result").first()).toBeVisible();
  await expect(page.getByTestId("no-good-match")).toHaveCount(0);
});

test("smaller: a new API key has a copy button, the audit log names targets, template cards say what they are good for", async ({ page, context }, testInfo) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const slug = await signUp(page, { email: `smaller-${Date.now()}@example.com`, password: "smaller-password-1" });
  const secret = await createApiKey(page, slug, "copied-agent");
  await page.getByTestId("copy-api-key").click();
  await expect(page.getByText("API key copied")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

  await page.getByRole("button", { name: "Revoke" }).click();
  await page.getByRole("link", { name: "Audit log" }).click();
  const targets = page.getByTestId("audit-target");
  await expect(targets.first()).toHaveText("API key copied-agent");
  await page.screenshot({ path: testInfo.outputPath("audit-names.png"), fullPage: true });

  await page.goto(`/w/${slug}/pipelines/new`);
  const synapse = page.getByTestId("template-synapse");
  await expect(synapse.getByTestId("template-good-for")).toContainText("recalls each user's last sessions");
  await expect(synapse).not.toContainText(/seed 00\d/);
  await page.screenshot({ path: testInfo.outputPath("template-cards.png"), fullPage: true });
});
