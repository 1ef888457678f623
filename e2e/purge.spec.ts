import { expect, test } from "@playwright/test";
import { FIXTURE, searchMemory, signUp, uploadToSource, waitForRun } from "./helpers";

/**
 * Purge (GDPR) in the browser: an owner finds the conversation that holds a phrase (exact search
 * over the sources), opens its record page, and Purge… lists exactly what would go — the source
 * and what was derived from it, step by step — before anything is deleted; the purge needs the
 * record id typed; afterwards the phrase is found nowhere and the audit log names the purge.
 */
const PHRASE = "blue ceramic frog";

test("purge a conversation from its record page: dry run first, typed confirmation, gone everywhere, audited", async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const shot = (name: string) => page.screenshot({ path: testInfo.outputPath(name), fullPage: true });
  await signUp(page, { email: `purge-${Date.now()}@example.com`, password: "purge-e2e-password" });
  const pipelinesUrl = new URL(page.url()).pathname;

  await page.goto(`${pipelinesUrl}/new`);
  await page.getByTestId("template-chat-memory").click();
  await page.getByLabel("Name").fill("purge-e2e");
  await page.getByTestId("create-pipeline-submit").click();
  await expect(page).toHaveURL(/\/pipelines\/(?!new)[^/?]+(\?.*)?$/);
  await uploadToSource(page, "chats", FIXTURE, "5 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  // The source conversation that says it: exact search reads the raw sources.
  await page.getByTestId("tab-explore").click();
  await page.getByLabel("exact").check();
  await searchMemory(page, PHRASE);
  const hit = page.getByTestId("search-result");
  await expect(hit).toHaveCount(1);
  await expect(hit).toHaveAttribute("data-step", "chats");
  await hit.click();
  await page.getByTestId("open-leaf-record").click();
  await expect(page.getByTestId("record-content")).toContainText(PHRASE, { ignoreCase: true });
  const recordId = new URL(page.url()).pathname.split("/").at(-1)!;

  // The dry run: the source and everything derived from it, by step; nothing deleted yet.
  await page.getByTestId("purge-open").click();
  const dialog = page.getByTestId("purge-dialog");
  const byStep = dialog.getByTestId("purge-by-step");
  await expect(byStep).toContainText("chats: 1");
  await expect(byStep).toContainText("transcripts: 1");
  await expect(byStep).toContainText(/windows: \d+/);
  // Copies of the text outside the records are counted too (none yet in a fresh workspace).
  await expect(dialog.getByTestId("purge-copies")).toContainText("0 eval case(s)");
  await shot("01-purge-dry-run.png");
  const confirm = dialog.getByTestId("purge-confirm");
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel(/Type the record id/).fill("not-the-id");
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel(/Type the record id/).fill(recordId);
  await confirm.click();

  // Back in the explorer: the phrase is gone from the sources and from every derived step.
  await expect(page).toHaveURL(/\/explore/);
  await searchMemory(page, PHRASE);
  await expect(page.getByTestId("results-column")).toContainText("No good match");
  await page.getByLabel("exact").uncheck();
  await page.getByTestId("search-mode").selectOption("fts");
  await searchMemory(page, PHRASE);
  await expect(page.getByTestId("results-column")).toContainText(/No good match|only stop words/);
  await expect(page.getByTestId("search-result").filter({ hasText: /ceramic frog/i })).toHaveCount(0);
  await shot("02-after-purge.png");

  // The record page says it no longer exists; the audit log names the purge.
  await page.goto(new URL(page.url()).pathname.replace(/\/explore$/, `/records/${recordId}`));
  await expect(page.getByText("Record not found")).toBeVisible();
  const slug = pipelinesUrl.split("/")[2]!;
  await page.goto(`/w/${slug}/settings/audit`);
  await expect(page.getByTestId("audit-log")).toContainText("purge");
  await shot("03-audit.png");
});
