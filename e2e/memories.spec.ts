import path from "node:path";
import { expect, test } from "@playwright/test";
import { searchMemory, signUp, uploadToSource, waitForRun } from "./helpers";

/**
 * A person's path through Memex memories: a pipeline from the Memex template, an export where a
 * later conversation negates an earlier fact, the run, the deleted memory in the explorer, its
 * history on the record page, Restore, and the memory found by search again.
 */
const FIXTURE = path.join(import.meta.dirname, "fixtures", "chatgpt-memex.json");

test("memex: a deleted memory shows its history and is restored from the record page", async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  const shot = (name: string) => page.screenshot({ path: testInfo.outputPath(name), fullPage: true });
  await signUp(page, { email: "memex-e2e@example.com", password: "memex-e2e-password" });
  const pipelinesUrl = new URL(page.url()).pathname;

  await page.goto(`${pipelinesUrl}/new`);
  await page.getByTestId("template-memex").click();
  await page.getByLabel("Name").fill("memex-e2e");
  await page.getByTestId("create-pipeline-submit").click();
  await expect(page).toHaveURL(/\/pipelines\/(?!new)[^/?]+(\?.*)?$/);

  await uploadToSource(page, "chats", FIXTURE, "2 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  // The explorer lists the memory the second conversation deleted.
  await page.getByTestId("tab-explore").click();
  const panel = page.getByTestId("deleted-memories-memories");
  await expect(panel).toBeVisible();
  await panel.locator("summary").click();
  await shot("01-deleted-memories.png");
  await panel.getByTestId("deleted-memory").filter({ hasText: "saltwater aquarium" }).click();

  // Its history: v2 DELETE by the negating fact, v1 ADD; then Restore.
  const history = page.getByTestId("memory-history");
  await expect(history.getByTestId("memory-status")).toHaveText("deleted on main");
  const versions = history.getByTestId("memory-version");
  await expect(versions).toHaveCount(2);
  await expect(versions.nth(0)).toContainText("DELETE");
  await expect(versions.nth(0)).toContainText("user no longer keeps a saltwater aquarium");
  await expect(versions.nth(1)).toContainText("ADD");
  await shot("02-history-deleted.png");
  await history.getByTestId("memory-restore").click();
  await expect(history.getByTestId("memory-status")).toHaveText("active on main");
  await expect(versions).toHaveCount(3);
  await expect(versions.nth(0)).toContainText("RESTORE");
  await expect(history.getByTestId("memory-restore")).toHaveCount(0);
  await shot("03-history-restored.png");

  // Search finds the restored memory.
  await page.getByTestId("tab-explore").click();
  await searchMemory(page, "saltwater aquarium clownfish");
  await expect(page.getByTestId("search-result").filter({ hasText: "user keeps a saltwater aquarium" }).first()).toBeVisible();
  await expect(page.getByTestId("deleted-memories-memories")).toHaveCount(0);
  await shot("04-search-restored.png");
});
