import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { searchMemory, signUp, trpc, workspaceId as workspaceIdOf } from "./helpers";

/**
 * An inbox folder in Settings → Sources (issue 35): the owner sets a folder for a documents
 * pipeline's source, a file dropped into it is imported by the app server (the page says so) and
 * the run the import requested makes its text findable in the explorer. Clearing keeps the records.
 * The server runs with SYNTHEX_INBOX_ROOTS set to a root made for the run (playwright.config.ts):
 * the page shows this workspace's own folder inside it, and refuses folders outside it.
 */
const stamp = Date.now();

test("inbox folder: set in Settings, a dropped file's text appears in the explorer", async ({ page }, info) => {
  test.setTimeout(240_000);
  let dir: string | null = null;
  try {
    const slug = await signUp(page, { email: `inbox-${stamp}@example.com`, password: "inbox-password-1" });
    const workspaceId = await workspaceIdOf(page, slug);
    const created = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: "inbox-notes", template: "documents", format: "folder" }, "mutation");
    const settings = await trpc<{ enabled: boolean; folder: string }>(page, "source.inboxSettings", { workspaceId });
    expect(settings.enabled).toBe(true);
    // The server made the workspace's own folder (0700) under the run's root.
    expect(path.basename(settings.folder)).toBe(workspaceId);
    expect((await stat(settings.folder)).mode & 0o777).toBe(0o700);

    await page.goto(`/w/${slug}/settings/sources`);
    await expect(page.getByTestId("inbox-workspace-folder")).toContainText(settings.folder);
    const field = page.getByLabel("Inbox folder of inbox-notes / docs");
    // A folder outside the workspace's folder is refused, and the message names only what was typed.
    await field.fill("/etc");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText(`Inbox folder "/etc" is not inside this workspace's inbox folder ${settings.folder}.`, { exact: false })).toBeVisible();
    // A folder that does not exist yet is refused too.
    await field.fill("notes");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText(/"notes" does not exist or is not a folder/)).toBeVisible();
    dir = path.join(settings.folder, "notes");
    await mkdir(dir);
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
    if (dir) await rm(dir, { recursive: true, force: true });
  }
});
