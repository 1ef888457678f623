import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { createInvite, editSummariesInCanvas, FIXTURE, newPipeline, signUp, uploadToSource, waitForRun } from "./helpers";

/**
 * Issue 18 in the browser: create a branch from the overview, change the summaries prompt on it in
 * the canvas, see the plan with the cost ratio, run it, open the diff with a record pair side by
 * side, promote as the owner; an editor cannot promote into the protected main. Screenshots are
 * attached to the test.
 */
test.use({ viewport: { width: 1600, height: 1000 } });

const stamp = Date.now();
const owner = { email: `branch-owner-${stamp}@example.com`, password: "branch-owner-1" };
const editor = { email: `branch-editor-${stamp}@example.com`, password: "branch-editor-1" };
const EDIT = "List every decision first.";

async function shot(page: Page, testInfo: TestInfo, name: string) {
  const file = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

test("branches: create, edit in the canvas, plan with the cost ratio, run, diff side by side, promote; an editor cannot promote into protected main", async ({ browser }, testInfo) => {
  test.setTimeout(420_000);
  const page = await (await browser.newContext()).newPage();
  const slug = await signUp(page, owner);
  const overview = await newPipeline(page, slug, "branchy");
  await uploadToSource(page, "chats", FIXTURE, "5 added");
  await page.getByTestId("run-button").click();
  await waitForRun(page);

  // Create a branch from the overview: nothing is computed.
  await page.goto(`${overview}?branch=main`);
  await page.getByTestId("new-branch").click();
  await page.getByTestId("branch-name").fill("decisions");
  await shot(page, testInfo, "01-new-branch-dialog");
  await page.getByTestId("create-branch").click();
  await expect(page.getByText(/Created branch "decisions" from main: 0 records computed, [\d,]+ records shared with main\./)).toBeVisible();
  await expect(page).toHaveURL(/branch=decisions/);
  await expect(page.getByTestId("branch-select")).toHaveValue("decisions");
  await shot(page, testInfo, "02-branch-created");

  // Change the summaries prompt on the branch in the canvas.
  await editSummariesInCanvas(page, overview, "decisions", EDIT, "decisions first");
  await shot(page, testInfo, "03-canvas-saved-on-branch");

  // The plan on the branch: summaries and downstream changed, transcripts reused, the cost against main.
  await page.goto(`${overview}?branch=decisions`);
  await expect(page.getByTestId("state-summaries")).toHaveText("changed");
  await expect(page.getByTestId("state-world-model")).toHaveText("changed");
  await expect(page.getByTestId("state-transcripts")).toHaveText("up to date");
  await expect(page.getByTestId("pending-summaries")).toHaveText("5");
  await expect(page.getByTestId("cost-ratio")).toContainText(/A full run of decisions costs [\d.]+× main/);
  await shot(page, testInfo, "04-branch-plan-cost-ratio");
  // Main is untouched.
  await page.getByTestId("branch-select").selectOption("main");
  await expect(page).toHaveURL(/branch=main/);
  await expect(page.getByTestId("state-summaries")).toHaveText("up to date");

  // Run the branch: transcripts are reused, summaries recomputed.
  await page.goto(`${overview}?branch=decisions`);
  await page.getByTestId("run-button").click();
  await waitForRun(page);
  await expect(page.getByTestId("made-transcripts")).toHaveText("0");
  await expect(page.getByTestId("skipped-transcripts")).toHaveText("5");
  await expect(page.getByTestId("made-summaries")).toHaveText("5");
  await shot(page, testInfo, "05-branch-run");

  // The diff page: why per step, counts, and a record pair side by side.
  await page.getByTestId("tab-branches").click();
  await expect(page.getByTestId("branch-row-decisions")).toBeVisible();
  await page.getByTestId("compare-decisions").click();
  await expect(page.getByTestId("diff-why-summaries")).toHaveText("template changed");
  await expect(page.getByTestId("diff-why-monthly")).toHaveText("upstream summaries changed");
  await expect(page.getByTestId("only-a-summaries")).toHaveText("5");
  await expect(page.getByTestId("only-b-summaries")).toHaveText("5");
  await expect(page.getByTestId("shared-transcripts")).toHaveText("5");
  await page.getByTestId("show-pairs-summaries").click();
  await expect(page.getByTestId("pair-item")).toHaveCount(5);
  await page.getByTestId("pair-item").nth(1).click();
  await expect(page).toHaveURL(/step=summaries&group=/);
  await expect(page.getByTestId("pair-left")).toContainText("main");
  await expect(page.getByTestId("pair-right")).toContainText("decisions");
  await expect(page.getByTestId("pair-left").locator("pre")).not.toBeEmpty();
  await expect(page.getByTestId("pair-right").locator("pre")).not.toBeEmpty();
  await shot(page, testInfo, "06-diff-record-pair");
  const diffUrl = new URL(page.url()).pathname + new URL(page.url()).search;

  // An editor sees the diff but cannot promote into the protected main.
  const link = await createInvite(page, "editor");
  const editorPage = await (await browser.newContext()).newPage();
  await editorPage.goto(link);
  await editorPage.getByRole("link", { name: "Create an account to join" }).click();
  await editorPage.waitForURL(/\/signup\?invite=/);
  await editorPage.getByLabel("Email").fill(editor.email);
  await editorPage.getByLabel("Password").fill(editor.password);
  await editorPage.getByRole("button", { name: "Create account" }).click();
  await expect(editorPage.getByTestId("current-role")).toHaveText("editor");
  await editorPage.goto(diffUrl);
  await expect(editorPage.getByTestId("diff-why-summaries")).toHaveText("template changed");
  await expect(editorPage.getByTestId("promote")).toBeDisabled();
  await expect(editorPage.getByTestId("promote-blocker")).toHaveText("Main is protected: only admins and owners can promote into it.");
  await shot(editorPage, testInfo, "07-editor-cannot-promote");

  // The owner promotes: main takes the branch's records, and the promotion is listed.
  await page.goto(diffUrl);
  await page.getByTestId("promote").click();
  await page.getByTestId("confirm-promote").click();
  await expect(page.getByText(/Promoted "decisions" into main: summaries, monthly, world-model now show the branch's records/)).toBeVisible();
  await expect(page).toHaveURL(/\/branches\?branch=main/);
  const row = page.getByTestId("promotion-row");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("decisions → main");
  await expect(row).toContainText(owner.email);
  await expect(row).toContainText("summaries (5 upserted)");
  await shot(page, testInfo, "08-promoted");
  await page.goto(`${overview}?branch=main`);
  await expect(page.getByTestId("state-summaries")).toHaveText("up to date");
  await expect(page.getByTestId("pending-summaries")).toHaveText("0");
  await shot(page, testInfo, "09-main-after-promote");
});
