import { expect, test, type Page } from "@playwright/test";
import { FIXTURE, newPipeline, searchMemory, signUp as signUpAs, trpc, uploadToSource, waitForRun, workspaceId } from "./helpers";

/**
 * What a first-time user trips on (issue 14), each in the real browser: canvas renames and
 * drafts, a branch's own last run, uploads (format picker, empty .json, no temp paths), the
 * favicon and the app's 404. Screenshots of the fixed screens land in test-results/screens/.
 */
test.use({ viewport: { width: 1600, height: 1000 } });

const stamp = Date.now();
const shot = (page: Page, name: string) => page.screenshot({ path: `test-results/screens/${name}.png`, fullPage: true });

/** Signs up `who` (a fresh address per run); returns the workspace slug. */
const signUp = (page: Page, who: string) => signUpAs(page, { email: `${who}-${stamp}@example.com`, password: `${who}-password-1` });

test("canvas: a rename applies on commit, never rewires through a name typed halfway, refuses a collision; unsaved edits survive leaving", async ({ page }) => {
  const slug = await signUp(page, "rename");
  const overview = await newPipeline(page, slug, "rename-walk");
  await page.goto(`${overview}/canvas`);
  const panel = page.getByTestId("node-panel");

  // Rename world-model to "summaries-v2", letter by letter: on the way it reads "summaries".
  await page.getByTestId("canvas-node-world-model").click();
  const name = panel.getByTestId("node-name");
  await name.fill("");
  await name.pressSequentially("summaries-v2");
  // Nothing applied while typing.
  await expect(page.getByTestId("canvas-node-world-model")).toBeVisible();
  await name.press("Enter");
  await expect(page.getByTestId("canvas-node-summaries-v2")).toBeVisible();
  await expect(page.getByTestId("canvas-node-world-model")).toHaveCount(0);
  await expect(page.getByTestId("problems-panel")).toContainText("No problems");
  // monthly still reads summaries; context follows the renamed node.
  await page.getByTestId("canvas-node-monthly").click();
  await expect(panel.getByTestId("node-from")).toHaveValue("summaries");
  await page.getByTestId("canvas-node-context").click();
  await expect(panel).toContainText("summaries-v2");

  // A collision is refused with a message, and nothing changes.
  await page.getByTestId("canvas-node-transcripts").click();
  await name.fill("summaries");
  await name.press("Enter");
  await expect(panel).toContainText('"summaries" is already the name of the step at steps[1]');
  await expect(page.getByTestId("canvas-node-transcripts")).toBeVisible();
  await shot(page, "01-canvas-rename-collision");
  await name.press("Escape");
  await expect(name).toHaveValue("transcripts");

  // Leave through the app's own link: the edit is kept as a draft and restored on return.
  await expect(page.getByTestId("unsaved-badge")).toBeVisible();
  await page.getByRole("link", { name: "Overview" }).click();
  await expect(page).toHaveURL(new RegExp(`${overview}\\?branch=main$`));
  await page.goBack();
  await expect(page.getByTestId("draft-restored")).toBeVisible();
  await expect(page.getByTestId("canvas-node-summaries-v2")).toBeVisible();
  await expect(page.getByTestId("unsaved-badge")).toBeVisible();
  await shot(page, "02-canvas-draft-restored");
  // Also after a reload (a closed tab).
  await page.reload();
  await expect(page.getByTestId("canvas-node-summaries-v2")).toBeVisible();
  // Discard goes back to the saved version.
  await page.getByTestId("discard-draft").click();
  await expect(page.getByTestId("canvas-node-world-model")).toBeVisible();
  await expect(page.getByTestId("unsaved-badge")).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("canvas-node-world-model")).toBeVisible();
  await expect(page.getByTestId("draft-restored")).toHaveCount(0);
});

test("overview: the first plan estimates groups and shows ranges; a branch that has not run shows no other branch's last run", async ({ page }) => {
  const slug = await signUp(page, "branch");
  const overview = await newPipeline(page, slug, "branch-walk");
  const pipelineId = overview.split("/").pop()!;
  await page.getByTestId("upload-chats").locator('input[type="file"]').setInputFiles(FIXTURE);
  await expect(page.getByTestId("upload-report-chats")).toContainText("5 added");
  // The first plan (item 4): monthly groups counted from the conversations' dates (2 months), and
  // token ranges until a run calibrates them.
  await expect(page.getByTestId("pending-monthly")).toHaveText("~2");
  await expect(page.getByTestId("tokens-monthly")).toContainText("–");
  await expect(page.getByTestId("tokens-world-model")).toContainText("–");
  await expect(page.getByTestId("plan-totals")).toContainText("a range until the first run calibrates it");
  await shot(page, "11-first-plan-ranges");
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  await page.goto(`${overview}?branch=main`);
  await expect(page.getByTestId("plan-totals")).not.toContainText("a range");

  // There is no screen for creating a branch yet: make one the way the CLI/API does.
  await page.goto(`${overview}?branch=main`);
  await expect(page.getByTestId("last-run-status")).toBeVisible();
  await trpc(page, "branch.create", { workspaceId: await workspaceId(page, slug), pipelineId, name: "experiment" }, "mutation");
  await page.reload();

  await page.getByTestId("branch-select").selectOption("experiment");
  await expect(page).toHaveURL(/branch=experiment/);
  await expect(page.getByTestId("no-branch-runs")).toHaveText("no run on experiment yet");
  await expect(page.getByTestId("last-run-status")).toHaveCount(0);
  await shot(page, "03-branch-overview-not-run");
  await page.getByTestId("branch-select").selectOption("main");
  await expect(page.getByTestId("last-run-status")).toBeVisible();
});

test("upload: format picker with auto-detect, an empty .json says empty, names never show a server temp path", async ({ page }) => {
  const slug = await signUp(page, "upload");
  const overview = await newPipeline(page, slug, "upload-walk");
  const input = page.getByTestId("upload-chats").locator('input[type="file"]');
  const picker = page.getByTestId("upload-format-chats");
  await expect(picker).toHaveValue("");
  await expect(picker.locator("option").first()).toHaveText("Auto-detect");

  await input.setInputFiles({ name: "conversations.json", mimeType: "application/json", buffer: Buffer.from("") });
  const report = page.getByTestId("upload-report-chats").first();
  await expect(report).toContainText("conversations.json is empty: expected a ChatGPT or Claude export");
  await expect(report).not.toContainText("markdown");
  await expect(report).not.toContainText("synthex-upload");

  // An untitled conversation is labelled by the uploaded file's name.
  const untitled = [{ id: "untitled-1", title: "", create_time: 1718000000, current_node: "m1", mapping: { m1: { id: "m1", parent: null, children: [], message: { author: { role: "user" }, content: { content_type: "text", parts: ["a conversation with no title"] } } } } }];
  await input.setInputFiles({ name: "my-export.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(untitled)) });
  await expect(page.getByTestId("upload-report-chats").first()).toContainText("1 added");

  // The picker overrides detection.
  await picker.selectOption("markdown");
  await input.setInputFiles({ name: "notes.json", mimeType: "application/json", buffer: Buffer.from("# Notes\n\nuser: picked by hand") });
  await expect(page.getByTestId("upload-report-chats").first()).toContainText("markdown");
  await expect(page.getByTestId("upload-report-chats").first()).toContainText("1 added");
  await shot(page, "04-upload-format-picker");

  await page.goto(`${overview}/records?branch=main&step=chats`);
  await expect(page.getByTestId("record-row")).toHaveCount(2);
  await expect(page.getByTestId("records-table")).toContainText("my-export.json");
  await expect(page.getByTestId("records-table")).not.toContainText("synthex-upload");
  await shot(page, "05-records-upload-names");
});

test("favicon and the app's own 404", async ({ page }) => {
  const icon = await page.request.get("/favicon.ico");
  expect(icon.status()).toBe(200);
  expect(icon.headers()["content-type"]).toMatch(/icon/);
  await page.goto("/no/such/page");
  await expect(page.getByTestId("not-found")).toBeVisible();
  await expect(page.getByRole("heading", { name: "This page does not exist" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Go to your pipelines" })).toBeVisible();
  await shot(page, "06-not-found");
});

test("a model with no provider: the canvas and the plan say so, the run refuses; after adding one, an expensive run asks first, and identical failures are grouped", async ({ page }) => {
  test.setTimeout(240_000);
  const slug = await signUp(page, "provider");
  const overview = await newPipeline(page, slug, "provider-walk");
  await page.getByTestId("upload-chats").locator('input[type="file"]').setInputFiles(FIXTURE);
  await expect(page.getByTestId("upload-report-chats")).toContainText("5 added");

  // The canvas: a model whose provider the workspace lacks is not a "Valid spec".
  await page.goto(`${overview}/canvas`);
  await page.getByTestId("canvas-node-summaries").click();
  await page.getByTestId("node-panel").getByTestId("node-model").fill("openai/gpt-4o-mini");
  await expect(page.getByTestId("validity")).toHaveText("Cannot run: no provider for openai — add one in Settings → Models");
  await expect(page.getByTestId("provider-problems")).toContainText('no provider for openai — add one in Settings → Models (model "openai/gpt-4o-mini")');
  await expect(page.getByTestId("canvas-node-summaries")).toHaveAttribute("data-invalid", "true");
  await shot(page, "07-canvas-no-provider");
  // Saving is allowed (the provider can be added later).
  await page.getByTestId("save-version").click();
  await page.getByTestId("version-message").fill("summaries on gpt-4o-mini");
  await page.getByTestId("confirm-save").click();
  await expect(page.getByTestId("version-message")).toBeHidden();

  // The plan says it before running, and the run button refuses.
  await page.goto(`${overview}?branch=main`);
  await expect(page.getByTestId("provider-problems")).toContainText("no provider for openai — add one in Settings → Models");
  await expect(page.getByTestId("run-button")).toBeDisabled();
  await shot(page, "08-plan-no-provider");

  // Add an openai provider (here one that cannot be reached), then run: every summary fails the same way.
  await page.goto(`/w/${slug}/settings/models`);
  await page.getByLabel("Name").fill("openai");
  await page.getByLabel("Base URL (optional)").fill("http://127.0.0.1:9/v1");
  await page.getByTestId("provider-key-input").fill("sk-unreachable");
  await page.getByLabel("Timeout (seconds)").fill("2");
  await page.getByRole("button", { name: "Add provider" }).click();
  await expect(page.getByTestId("provider-openai")).toBeVisible();
  // A price that makes this run expensive: the Run button asks first.
  const price = page.getByRole("row").filter({ has: page.getByLabel("gpt-4o-mini input price", { exact: true }) });
  await price.getByLabel("gpt-4o-mini input price", { exact: true }).fill("10000");
  await price.getByRole("button", { name: "Save" }).click();
  await expect(price).toContainText("override");

  await page.goto(`${overview}?branch=main`);
  await expect(page.getByTestId("provider-problems")).toHaveCount(0);
  await page.getByTestId("run-button").click();
  const ask = page.getByRole("dialog");
  await expect(ask).toContainText(/Run for about \$\d/);
  await expect(ask).toContainText("above the $1.00 confirmation threshold");
  await shot(page, "08b-run-asks-first");
  await ask.getByRole("button", { name: "Cancel" }).click();
  await expect(ask).toBeHidden();
  await expect(page).not.toHaveURL(/\/runs\//);
  await page.getByTestId("run-button").click();
  await page.getByTestId("confirm-run").click();
  await waitForRun(page, "completed_with_errors");
  const groups = page.getByTestId("run-failure-group");
  await expect(groups).toHaveCount(1);
  await expect(groups.first().getByTestId("failure-count")).toHaveText("5×");
  await expect(groups.first()).toContainText("summaries");
  await groups.first().locator("summary").click();
  await expect(groups.first().getByTestId("run-failure")).toContainText("One example of 5");
  await shot(page, "09-run-failures-grouped");
});

test("explorer: quick Altitude then Mode changes both stick; the URL holds the state and every control reads it", async ({ page }) => {
  const slug = await signUp(page, "explore");
  const overview = await newPipeline(page, slug, "explore-walk");
  await uploadToSource(page, "chats", FIXTURE, "5 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  // Next may keep a hidden copy of a route it rendered before (React Activity): assert on what is shown.
  const shown = (id: string) => page.locator(`[data-testid="${id}"]:visible`);
  await page.goto(`${overview}/explore?branch=main`);
  await searchMemory(page, "blue ceramic frog");
  await expect(page).toHaveURL(/q=blue\+ceramic\+frog/);
  // Two changes back to back, without waiting in between.
  await page.getByTestId("search-step").selectOption("transcripts");
  await page.getByTestId("search-mode").selectOption("fts");
  await expect(page).toHaveURL(/step=transcripts/);
  await expect(page).toHaveURL(/mode=fts/);
  await expect(page.getByTestId("search-step")).toHaveValue("transcripts");
  await expect(page.getByTestId("search-mode")).toHaveValue("fts");
  await expect(page.getByTestId("search-result").first()).toHaveAttribute("data-step", "transcripts");
  await shot(page, "10-explorer-url-state");

  // A fresh load of the URL restores every control.
  await page.reload();
  await expect(shown("search-input")).toHaveValue("blue ceramic frog");
  await expect(shown("search-step")).toHaveValue("transcripts");
  await expect(shown("search-mode")).toHaveValue("fts");
  // Selecting a result is a history entry: back returns to the list state.
  await shown("search-result").first().click();
  await expect(page).toHaveURL(/trail=/);
  await expect(shown("source-item").first()).toBeVisible();
  await page.goBack();
  await expect(page).not.toHaveURL(/trail=/);
  await expect(shown("search-step")).toHaveValue("transcripts");
  await expect(shown("search-mode")).toHaveValue("fts");
  // …and shows it: no record selected, no sources listed (the URL the result's click was written
  // over is back, and the explorer must show it, not what that click wrote).
  await expect(shown("source-item")).toHaveCount(0);
});

/** A ChatGPT export of `n` one-message conversations, all in May 2024. */
function bigExport(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: `big-${i}`,
    title: `Conversation ${i}`,
    create_time: 1714600000 + i * 60,
    current_node: `m${i}`,
    mapping: { [`m${i}`]: { id: `m${i}`, parent: null, children: [], message: { author: { role: "user" }, content: { content_type: "text", parts: [`Note ${i}: the tomato bed ${i} needs water on day ${i % 7}.`] } } } },
  }));
}

test("lineage: a 1,000-source record opens on its neighbourhood grouped by step and expands on click", async ({ page }) => {
  test.setTimeout(600_000);
  const slug = await signUp(page, "lineage");
  const overview = await newPipeline(page, slug, "lineage-walk");
  const bigFile = { name: "conversations.json", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(bigExport(1000))) };
  await uploadToSource(page, "chats", bigFile, "1000 added", 120_000);
  await page.getByTestId("run-button").click();
  await expect(page).toHaveURL(/\/runs\/[^/?]+/);
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", "completed", { timeout: 480_000 });

  // The one monthly record has 1,000 summaries as sources (and 3,000 records beneath it).
  await page.goto(`${overview}/records?branch=main&step=monthly`);
  await expect(page.getByTestId("record-row")).toHaveCount(1);
  await page.getByTestId("record-row").getByRole("link").click();
  const graph = page.getByTestId("lineage-graph");
  // Right after a run the embedded database is still busy indexing the 3,000 new records for search.
  await expect(graph).toBeVisible({ timeout: 120_000 });
  const group = graph.locator('[data-testid="lineage-group"][data-step="summaries"]');
  await expect(group).toContainText("1,000 records");
  await expect(graph.locator('[data-testid="lineage-ancestors"][data-step="transcripts"]')).toContainText("1,000 records");
  await expect(graph.locator('[data-testid="lineage-ancestors"][data-step="chats"]')).toContainText("1,000 records");
  await expect(graph.getByTestId("lineage-node-world-model")).toBeVisible();
  const nodes = graph.locator(".react-flow__node");
  expect(await nodes.count()).toBeLessThanOrEqual(6);
  await shot(page, "12-lineage-neighbourhood");

  // Open the group: one page of records and a "next" node, never 1,000 nodes.
  await group.click();
  await expect(graph.getByTestId("lineage-more")).toContainText("summaries: 1–25 of 1,000");
  await expect(graph.getByTestId("lineage-node-summaries")).toHaveCount(25);
  await shot(page, "13-lineage-group-open");
  await graph.getByTestId("lineage-more").click();
  await expect(graph.getByTestId("lineage-more")).toContainText("summaries: 26–50 of 1,000");
  await expect(graph.getByTestId("lineage-node-summaries")).toHaveCount(25);

  // A record opens its own neighbourhood: the transcript it came from appears, and a link to it.
  await graph.getByTestId("lineage-node-summaries").first().click();
  await expect(graph.getByTestId("lineage-node-transcripts").filter({ hasNot: page.getByTestId("lineage-ancestors") })).toHaveCount(1);
  await expect(page.getByTestId("lineage-selected")).toContainText("summaries");
  expect(await nodes.count()).toBeLessThanOrEqual(35);
  await shot(page, "14-lineage-expanded");
  await page.getByTestId("lineage-open-record").click();
  await expect(page).toHaveURL(/\/records\/[^/?]+\?branch=main/);
  await expect(page.getByTestId("lineage-graph")).toBeVisible();
});
