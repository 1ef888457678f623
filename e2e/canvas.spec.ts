import { expect, test, type Page } from "@playwright/test";

test.use({ viewport: { width: 1600, height: 1000 } });

const stamp = Date.now();
const carol = { email: `carol-${stamp}@example.com`, password: "carol-password-1" };

async function signUp(page: Page, user: { email: string; password: string }) {
  await page.goto("/signup");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Create account" }).click();
}

test("new pipeline from the chat-memory template, edit the summaries template in the canvas, save and diff", async ({ page }, testInfo) => {
  await signUp(page, carol);
  await expect(page).toHaveURL(/\/w\/[^/]+\/pipelines$/);
  const slug = new URL(page.url()).pathname.split("/")[2]!;
  await expect(page.getByText("No pipelines yet")).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath("01-pipelines-empty.png") });

  // New pipeline from the chat-memory template.
  await page.getByTestId("create-pipeline").click();
  await expect(page).toHaveURL(new RegExp(`/w/${slug}/pipelines/new$`));
  await expect(page.getByTestId("template-chat-memory")).toHaveAttribute("aria-checked", "true");
  await page.getByLabel("Name").fill("carol-memory");
  await page.getByLabel("Agent").fill("carol-assistant");
  await page.screenshot({ path: testInfo.outputPath("02-new-pipeline.png") });
  await page.getByTestId("create-pipeline-submit").click();
  await page.waitForURL(new RegExp(`/w/${slug}/pipelines/(?!new)[^/]+$`));
  const pipelineId = new URL(page.url()).pathname.split("/")[4]!;

  // It shows up in the list.
  await page.goto(`/w/${slug}/pipelines`);
  await expect(page.getByTestId("pipeline-row-carol-memory")).toContainText("carol-assistant");
  await page.screenshot({ path: testInfo.outputPath("03-pipelines-list.png") });

  // The canvas: the spec as a graph.
  await page.goto(`/w/${slug}/pipelines/${pipelineId}/canvas`);
  for (const name of ["chats", "transcripts", "summaries", "monthly", "world-model", "context", "search"]) {
    await expect(page.getByTestId(`canvas-node-${name}`)).toBeVisible();
  }
  await expect(page.getByTestId("problems-panel")).toContainText("No problems");
  await expect(page.getByTestId("save-version")).toBeDisabled();
  await page.screenshot({ path: testInfo.outputPath("04-canvas.png") });

  // Select summaries: the side panel edits it.
  await page.getByTestId("canvas-node-summaries").click();
  const panel = page.getByTestId("node-panel");
  await expect(panel).toBeVisible();
  await expect(panel.getByTestId("node-name")).toHaveValue("summaries");
  await expect(page.getByTestId("template-preview")).toContainText("Summarize this conversation");
  await expect(page.getByTestId("template-preview")).toContainText("Lisbon offsite");

  // Validation as you edit: an out-of-range temperature marks the node and blocks saving.
  await panel.getByTestId("node-temperature").fill("5");
  await expect(page.getByTestId("problems-panel")).toContainText("temperature must be from 0 to 2");
  await expect(page.getByTestId("canvas-node-summaries")).toHaveAttribute("data-invalid", "true");
  await expect(page.getByTestId("save-version")).toBeDisabled();
  await page.screenshot({ path: testInfo.outputPath("05-canvas-invalid.png") });
  await panel.getByTestId("node-temperature").fill("0");
  await expect(page.getByTestId("problems-panel")).toContainText("No problems");

  // Change the template: the live preview follows.
  await page.getByTestId("template-editor").locator(".cm-content").click();
  await page.keyboard.press("Control+Home");
  await page.keyboard.type("Focus on decisions and dates. ");
  await expect(page.getByTestId("template-preview")).toContainText("Focus on decisions and dates. Summarize this conversation");
  await expect(page.getByTestId("save-version")).toBeEnabled();
  await page.screenshot({ path: testInfo.outputPath("06-template-edit.png") });

  // Save a version with a message.
  await page.getByTestId("save-version").click();
  await page.getByTestId("version-message").fill("Summaries: focus on decisions");
  await page.screenshot({ path: testInfo.outputPath("07-save-dialog.png") });
  await page.getByTestId("confirm-save").click();
  await expect(page.getByTestId("version-message")).toBeHidden();

  // The versions list has it, and the diff says why each step changed.
  const versions = page.getByTestId("versions-panel");
  await expect(versions.getByTestId("version-row").first()).toContainText("Summaries: focus on decisions");
  await expect(versions.getByTestId("version-row")).toHaveCount(2);
  await expect(page.getByTestId("diff-summaries")).toContainText("template changed");
  await expect(page.getByTestId("diff-monthly")).toContainText("upstream summaries changed");
  await expect(page.getByTestId("diff-world-model")).toContainText("upstream monthly changed");
  await expect(page.getByTestId("diff-transcripts")).toHaveCount(0);
  await expect(page.getByTestId("version-diff-result")).toContainText("Re-run: summaries, monthly, world-model");
  await page.screenshot({ path: testInfo.outputPath("08-versions-diff.png") });

  // Reloading shows the saved spec (the template edit persisted).
  await page.reload();
  await page.getByTestId("canvas-node-summaries").click();
  await expect(page.getByTestId("template-preview")).toContainText("Focus on decisions and dates.");
  await expect(page.getByTestId("save-version")).toBeDisabled();

  // Palette: a new step reads from the selected node.
  await page.getByTestId("canvas-node-summaries").click();
  await page.getByTestId("palette-chunk").click();
  await expect(page.getByTestId("canvas-node-chunks")).toBeVisible();
  await expect(page.getByTestId("node-panel").getByTestId("node-from")).toHaveValue("summaries");
  await expect(page.getByTestId("problems-panel")).toContainText("No problems");

  // Keyboard: copy/paste renames, Delete removes, Ctrl+Z / Ctrl+Shift+Z undo and redo.
  await page.getByTestId("canvas-node-monthly").click();
  await page.keyboard.press("Control+c");
  await page.keyboard.press("Control+v");
  await expect(page.getByTestId("canvas-node-monthly-copy")).toBeVisible();
  await expect(page.getByTestId("node-panel").getByTestId("node-name")).toHaveValue("monthly-copy");
  await page.getByTestId("auto-layout").click();
  await page.screenshot({ path: testInfo.outputPath("09-palette-paste.png") });
  await page.keyboard.press("Delete");
  await expect(page.getByTestId("canvas-node-monthly-copy")).toHaveCount(0);
  await page.keyboard.press("Control+z");
  await expect(page.getByTestId("canvas-node-monthly-copy")).toBeVisible();
  await page.keyboard.press("Control+z");
  await page.keyboard.press("Control+z");
  await expect(page.getByTestId("canvas-node-monthly-copy")).toHaveCount(0);
  await expect(page.getByTestId("canvas-node-chunks")).toHaveCount(0);
  await expect(page.getByTestId("save-version")).toBeDisabled();
  await page.keyboard.press("Control+Shift+z");
  await expect(page.getByTestId("canvas-node-chunks")).toBeVisible();
  await expect(page.getByTestId("save-version")).toBeEnabled();
});
