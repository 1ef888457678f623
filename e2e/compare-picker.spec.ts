import { mkdirSync } from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { locomoFixture } from "../server/eval/testing/locomo-fixture";
import { TWO_ALTITUDE_SPEC } from "../server/eval/testing/two-altitude-spec";
import { SCREENSHOT_DIR, signUp, trpc, workspaceId as workspaceIdOf } from "./helpers";

/**
 * The Compare page's run picker at 1024 and 1440 px: from a comparison of one run, "Add a run"
 * searches the workspace's ended runs (by template, pipeline, branch or dataset), adds a completed
 * and a failed one (the failed one joins as a row with its reason), the baseline is set among them,
 * one is removed — and the URL holds the selection through a reload. A pipeline's run is labelled
 * with its version number. Screenshots of the picker and the leaderboard per width go to SCREENSHOT_DIR.
 */
const stamp = Date.now();

/** A pipeline whose build needs a model nobody configured: its eval fails, with the reason. */
const FAILING_SPEC = {
  version: 1,
  sources: [{ name: "chats", format: "json" }],
  steps: [{ type: "transform", name: "notes", from: "chats", prompt: "Summarize: {{ record.content }}", model: "nowhere/no-model" }],
  outputs: [{ name: "search", surface: "search", from: ["notes"] }],
};

async function ended(page: Page, workspaceId: string, id: string) {
  await expect
    .poll(async () => (await trpc<{ status: string }>(page, "evals.get", { workspaceId, id })).status, { timeout: 240_000, intervals: [500] })
    .toMatch(/^(completed|failed|cancelled)$/);
  return trpc<{ id: string; status: string; error: string | null }>(page, "evals.get", { workspaceId, id });
}

const runsInUrl = (page: Page) => (new URL(page.url()).searchParams.get("runs") ?? "").split(",").filter(Boolean);

test("add runs to a comparison from the picker, set the baseline, remove one: the URL keeps the selection (1024 and 1440 px)", async ({ page }) => {
  test.setTimeout(480_000);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const slug = await signUp(page, { email: `picker-${stamp}@example.com`, password: "picker-password-1" });
  const workspaceId = await workspaceIdOf(page, slug);
  const dataset = await trpc<{ id: string }>(page, "evals.importDataset", { workspaceId, benchmark: "locomo", text: JSON.stringify(locomoFixture()), name: "tiny-locomo.json" }, "mutation");
  const start = async (input: Record<string, unknown>) => ended(page, workspaceId, (await trpc<{ id: string }>(page, "evals.start", { workspaceId, datasetId: dataset.id, ...input }, "mutation")).id);
  const sessions = await start({ template: "bm25-sessions" });
  const windows = await start({ template: "bm25-windows" });
  const team = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: `picker-team-${stamp}`, spec: TWO_ALTITUDE_SPEC }, "mutation");
  const teamRun = await start({ pipelineId: team.pipeline.id, mode: "bm25", step: "windows" });
  const broken = await trpc<{ pipeline: { id: string } }>(page, "pipeline.create", { workspaceId, name: `picker-broken-${stamp}`, spec: FAILING_SPEC }, "mutation");
  const failed = await start({ pipelineId: broken.pipeline.id, mode: "fts" });
  expect([sessions.status, windows.status, teamRun.status, failed.status]).toEqual(["completed", "completed", "completed", "failed"]);

  for (const width of [1024, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    // A comparison of one run, as a shared link would open it.
    await page.goto(`/w/${slug}/compare?dataset=${dataset.id}&runs=${sessions.id}&baseline=${sessions.id}`);
    await expect(page.getByTestId("leaderboard-row")).toHaveCount(1);

    // Search by template: the windows run; add it.
    await page.getByTestId("compare-add-run").click();
    const search = page.getByTestId("run-picker-search");
    await search.fill("bm25 windows");
    const results = page.getByTestId("run-picker-row");
    await expect(results).toHaveCount(1);
    await expect(results.first()).toHaveAttribute("data-run", windows.id);
    await results.first().getByRole("button", { name: /^Add / }).click();
    await expect.poll(() => runsInUrl(page)).toEqual([sessions.id, windows.id]);
    await expect(results.first().getByRole("button")).toHaveText("Added");

    // Search by pipeline name: the team's run, labelled with its version; and the failed one.
    await search.fill(`picker-team-${stamp}`);
    await expect(results).toHaveCount(1);
    await expect(results.first()).toContainText(`picker-team-${stamp}@main v1`);
    await results.first().getByRole("button", { name: /^Add / }).click();
    await search.fill("broken");
    await expect(results).toHaveCount(1);
    await expect(results.first()).toContainText(failed.error!.slice(0, 40));
    // Nothing in the picker is cut off.
    const clipped = await page.getByTestId("run-picker-results").evaluate((list) =>
      [...list.querySelectorAll<HTMLElement>("li span, li button")].filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => `"${el.textContent?.slice(0, 40)}" ${el.scrollWidth}>${el.clientWidth}`),
    );
    expect(clipped, `clipped in the picker at ${width} px`).toEqual([]);
    await search.fill("");
    await expect(results).toHaveCount(4);
    await page.getByRole("dialog").screenshot({ path: `${SCREENSHOT_DIR}/compare-picker-${width}.png` });
    await page.locator(`[data-testid="run-picker-row"][data-run="${failed.id}"]`).getByRole("button", { name: /^Add / }).click();
    await expect.poll(() => runsInUrl(page)).toEqual([sessions.id, windows.id, teamRun.id, failed.id]);
    await page.keyboard.press("Escape");

    // The leaderboard shows all four; the failed one as a row with its reason.
    await expect(page.getByTestId("leaderboard-row")).toHaveCount(4);
    const failedRow = page.locator(`[data-testid="leaderboard-row"][data-run="${failed.id}"]`);
    await expect(failedRow).toHaveAttribute("data-status", "failed");
    await expect(failedRow.getByTestId("leaderboard-reason")).toHaveText(failed.error!);

    // The baseline: any completed run of the comparison.
    await page.getByTestId("compare-baseline").selectOption(windows.id);
    await expect(page.locator('[data-testid="leaderboard-row"][data-baseline="true"]')).toHaveAttribute("data-run", windows.id);
    expect(new URL(page.url()).searchParams.get("baseline")).toBe(windows.id);

    // Remove one; a reload shows the same comparison.
    await page.getByRole("button", { name: "Remove template: bm25-sessions from the comparison" }).click();
    await expect.poll(() => runsInUrl(page)).toEqual([windows.id, teamRun.id, failed.id]);
    await page.reload();
    await expect(page.getByTestId("leaderboard-row")).toHaveCount(3);
    await expect(page.locator('[data-testid="leaderboard-row"][data-baseline="true"]')).toHaveAttribute("data-run", windows.id);
    await expect(page.locator(`[data-testid="leaderboard-row"][data-run="${teamRun.id}"]`)).toContainText("v1");
    await page.getByTestId("leaderboard").screenshot({ path: `${SCREENSHOT_DIR}/compare-picker-leaderboard-${width}.png` });
  }
});
