import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { createApiKey, FIXTURE, newPipeline, SCREENSHOT_DIR, signUp, trpc, uploadToSource, waitForRun, workspaceId } from "./helpers";

/**
 * Shadow traffic (issue 37) in the browser: on the Traffic tab the owner sets a branch to shadow
 * main for an hour; an agent's searches over the API (with its key) are answered by the branch in
 * the background; the Traffic tab and the Promote screen (the branch against main) show the report
 * with the answered count; Stop ends it. Screenshots at 1024 and 1440 px.
 */
const stamp = Date.now();
const owner = { email: `shadow-owner-${stamp}@example.com`, password: "shadow-owner-1" };

async function shots(page: Page, name: string) {
  for (const width of [1024, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `shadow-${name}-${width}.png`), fullPage: true });
  }
}

test("shadow traffic: set on the Traffic tab, agents' searches answered by the branch, report on Traffic and Promote, stop", async ({ page, request }) => {
  test.setTimeout(300_000);
  const slug = await signUp(page, owner);
  const overview = await newPipeline(page, slug, "shadowed");
  await uploadToSource(page, "chats", FIXTURE, "5 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  const pipelineId = overview.split("/").pop()!;
  const wsId = await workspaceId(page, slug);
  await trpc(page, "branch.create", { workspaceId: wsId, pipelineId, name: "candidate" }, "mutation");
  const key = await createApiKey(page, slug, "shadow agent");

  await page.goto(`/w/${slug}/pipelines/${pipelineId}/traffic`);
  await expect(page.getByTestId("shadow-card")).toBeVisible();
  await expect(page.getByTestId("shadow-branch")).toHaveValue("candidate");
  await page.getByLabel("Hours").fill("1");
  await page.getByTestId("shadow-start").click();
  await expect(page.getByTestId("shadow-row-candidate")).toContainText("running");

  const queries = ["lighthouse key", "spare key", "sourdough"];
  for (const q of queries) {
    const res = await request.get(`/api/v1/pipelines/${pipelineId}/search?query=${encodeURIComponent(q)}&mode=fts&limit=5`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status()).toBe(200);
  }
  // The copies are answered in the background; the card refreshes every 5 s.
  await expect(page.getByTestId("shadow-answered")).toHaveText(/^3\b/, { timeout: 30_000 });
  await expect(page.getByTestId("shadow-overlap")).toHaveText("1.000 · 1.000");
  await expect(page.getByTestId("shadow-query")).toHaveCount(3);
  await shots(page, "traffic");

  await page.goto(`/w/${slug}/pipelines/${pipelineId}/branches/diff?branch=candidate`);
  await expect(page.getByTestId("shadow-report")).toContainText("Shadow traffic on candidate");
  await expect(page.getByTestId("shadow-report").getByTestId("shadow-answered")).toHaveText(/^3\b/);
  await expect(page.getByTestId("promote")).toBeVisible();
  await shots(page, "promote");

  await page.goto(`/w/${slug}/pipelines/${pipelineId}/traffic`);
  await page.getByTestId("shadow-stop-candidate").click();
  await expect(page.getByTestId("shadow-row-candidate")).toContainText("stopped");
});
