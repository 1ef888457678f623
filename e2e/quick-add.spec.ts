import { expect, test, type Page } from "@playwright/test";
import { searchMemory, signUp, trpc, workspaceId as workspaceIdOf } from "./helpers";

/**
 * Quick add in a real browser (issue 35): on a documents pipeline's overview, a note typed into the
 * source's Quick add box is stored (the source counts it), the same note again adds nothing, the
 * run the note requested makes it findable in the explorer. Screenshots at 1024 and 1440 px wide.
 */
const stamp = Date.now();

async function shots(page: Page, name: string, out: (n: string) => string) {
  for (const width of [1024, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: out(`${name}-${width}.png`), fullPage: true });
  }
}

test("quick add a note: stored once, the requested run makes it searchable", async ({ page }, info) => {
  test.setTimeout(240_000);
  const out = (n: string) => info.outputPath(n);
  const slug = await signUp(page, { email: `quick-${stamp}@example.com`, password: "quick-password-1" });
  const workspaceId = await workspaceIdOf(page, slug);
  const created = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: "notes", template: "documents", format: "folder" }, "mutation");
  const overview = `/w/${slug}/pipelines/${created.pipeline.id}`;
  await page.goto(overview);

  const box = page.getByTestId("quick-add-docs");
  await expect(box).toBeVisible();
  await expect(page.getByTestId("quick-add-submit-docs")).toBeDisabled();
  await page.getByTestId("quick-add-title-docs").fill("Boiler service");
  await page.getByTestId("quick-add-text-docs").fill("The boiler in the cellar is serviced by Kessel & Sohn every October; the pressure must stay at 1.5 bar.");
  await shots(page, "01-quick-add-filled", out);
  await page.getByTestId("quick-add-submit-docs").click();
  await expect(page.getByText(/Note added/)).toBeVisible();
  await expect(page.getByTestId("quick-add-text-docs")).toHaveValue("");
  await expect(page.getByTestId("source-count-docs")).toHaveText("1");
  await shots(page, "02-quick-add-added", out);

  // The same note again: nothing added.
  await page.getByTestId("quick-add-title-docs").fill("Boiler service");
  await page.getByTestId("quick-add-text-docs").fill("The boiler in the cellar is serviced by Kessel & Sohn every October; the pressure must stay at 1.5 bar.");
  await page.getByTestId("quick-add-submit-docs").click();
  await expect(page.getByText(/already in this source: nothing added/)).toBeVisible();
  await expect(page.getByTestId("source-count-docs")).toHaveText("1");

  // The run the note asked for makes it findable.
  await expect(async () => {
    await page.goto(`${overview}/explore`);
    await searchMemory(page, "boiler pressure");
    await expect(page.getByTestId("search-result").first()).toContainText(/boiler/i, { timeout: 5_000 });
  }).toPass({ timeout: 120_000 });
  await shots(page, "03-found", out);
});
