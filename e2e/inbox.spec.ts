import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { searchMemory, signUp, trpc, workspaceId as workspaceIdOf } from "./helpers";

/**
 * An inbox folder in Settings → Sources (issue 35): the owner sets a folder for a documents
 * pipeline's source, a file dropped into it is imported by the app server (the page says so) and
 * the run the import requested makes its text findable in the explorer. Clearing keeps the records.
 */
const stamp = Date.now();

test("inbox folder: set in Settings, a dropped file's text appears in the explorer", async ({ page }, info) => {
  test.setTimeout(240_000);
  const dir = await mkdtemp(path.join(tmpdir(), "synthex-e2e-inbox-"));
  try {
    const slug = await signUp(page, { email: `inbox-${stamp}@example.com`, password: "inbox-password-1" });
    const workspaceId = await workspaceIdOf(page, slug);
    const created = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: "inbox-notes", template: "documents", format: "folder" }, "mutation");

    await page.goto(`/w/${slug}/settings/sources`);
    const field = page.getByLabel("Inbox folder of inbox-notes / docs");
    // A relative path is refused with a message naming it.
    await field.fill("Inbox");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText(/"Inbox" is not an absolute path/)).toBeVisible();
    await field.fill(dir);
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText(`Watching ${dir} for docs.`)).toBeVisible();
    await expect(page.getByTestId("inbox-event-docs")).toContainText("watching");

    await writeFile(path.join(dir, "greenhouse.md"), "# Greenhouse\nThe greenhouse vents open automatically at 27 degrees Celsius.\n");
    await expect(page.getByTestId("inbox-event-docs")).toContainText("imported greenhouse.md: 1 read, 1 new (incremental run requested)", { timeout: 30_000 });
    await page.screenshot({ path: info.outputPath("01-inbox-imported.png"), fullPage: true });

    await expect(async () => {
      await page.goto(`/w/${slug}/pipelines/${created.pipeline.id}/explore`);
      await searchMemory(page, "greenhouse vents");
      await expect(page.getByTestId("search-result").first()).toContainText(/27 degrees/i, { timeout: 5_000 });
    }).toPass({ timeout: 120_000 });
    await page.screenshot({ path: info.outputPath("02-found.png"), fullPage: true });

    // Cleared: the row says nothing is watched; the records stay.
    await page.goto(`/w/${slug}/settings/sources`);
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(page.getByText("Inbox of docs cleared; its records stay.")).toBeVisible();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
