/** Steps the browser tests share: sign up, a new pipeline through the UI, waiting for a run, setup calls. */
import path from "node:path";
import { expect, type Locator, type Page } from "@playwright/test";

/** Where the screenshot-taking specs save their pictures: MEASURE_DIR, or test-results/screenshots in the repository. */
export const SCREENSHOT_DIR = process.env.MEASURE_DIR ?? path.join(import.meta.dirname, "../test-results/screenshots");

export const FIXTURE = path.join(import.meta.dirname, "fixtures", "chatgpt-export.json");

/** Signs up through the form and lands on the pipelines page; returns the workspace slug. */
export async function signUp(page: Page, user: { email: string; password: string }) {
  await page.goto("/signup");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(/\/w\/[^/]+\/pipelines$/);
  return new URL(page.url()).pathname.split("/")[2]!;
}

/** An API key made in Settings → API keys (shown once); returns the secret. */
export async function createApiKey(page: Page, slug: string, name: string) {
  await page.goto(`/w/${slug}/settings/api-keys`);
  await page.getByPlaceholder("Key name, e.g. support-agent").fill(name);
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = page.getByTestId("api-key-secret");
  await expect(secret).toHaveValue(/^sx_/);
  return secret.inputValue();
}

/** New pipeline from the chat-memory template, through the UI; returns the overview path. */
export async function newPipeline(page: Page, slug: string, name: string) {
  await page.goto(`/w/${slug}/pipelines/new`);
  await page.getByTestId("template-chat-memory").click();
  await page.getByLabel("Name").fill(name);
  await page.getByTestId("create-pipeline-submit").click();
  await expect(page).toHaveURL(/\/pipelines\/(?!new)[^/?]+(\?.*)?$/);
  return new URL(page.url()).pathname;
}

/**
 * Uploads files to a source through its drop zone and waits until the report says `added` and the
 * plan has caught up (the Run button offers pending work). Clicking Run before that races the plan's
 * refresh: the "Nothing to run yet" notice leaves, the card shrinks and the button moves under the click.
 */
export async function uploadToSource(page: Page, source: string, files: Parameters<Locator["setInputFiles"]>[0], added: string, timeout = 15_000) {
  await page.getByTestId(`upload-${source}`).locator('input[type="file"]').setInputFiles(files);
  await expect(page.getByTestId(`upload-report-${source}`).first()).toContainText(added, { timeout });
  await expect(page.getByTestId("run-button")).toHaveText(/^Run$/, { timeout });
}

/**
 * Types `query` into the explorer's search box the page shows and submits it (Enter, or the Search
 * button). A page can hold hidden copies of the box: Next keeps routes rendered before (React
 * Activity, see first-walk.spec.ts), and while React streams the explorer's Suspense boundary its
 * server-rendered copy can stay for a moment in a `<div hidden id="S:0">` beside the hydrated one
 * (a CI trace showed both); a strict locator would then match two.
 */
export async function searchMemory(page: Page, query: string, submit: "enter" | "button" = "enter") {
  const input = page.getByTestId("search-input").filter({ visible: true });
  await input.fill(query);
  if (submit === "enter") await input.press("Enter");
  else await page.getByTestId("search-submit").filter({ visible: true }).click();
}

/** On a run's page: waits until it ends, and expects `status`. */
export async function waitForRun(page: Page, status = "completed") {
  await expect(page).toHaveURL(/\/runs\/[^/?]+/);
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", /^(completed|completed_with_errors|failed|cancelled)$/, { timeout: 120_000 });
  await expect(page.getByTestId("run-status")).toHaveAttribute("data-status", status);
}

/** A tRPC call from the page (same session cookie), superjson-encoded: only for setup the UI has no screen for. */
export async function trpc<T>(page: Page, proc: string, input: unknown, kind: "query" | "mutation" = "query"): Promise<T> {
  return page.evaluate(
    async ({ proc, input, kind }) => {
      const res =
        kind === "query"
          ? await fetch(`/api/trpc/${proc}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`)
          : await fetch(`/api/trpc/${proc}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: input }) });
      const body = await res.json();
      if (!res.ok) throw new Error(`${proc}: ${JSON.stringify(body)}`);
      return body.result.data.json;
    },
    { proc, input, kind },
  ) as Promise<T>;
}

export async function workspaceId(page: Page, slug: string) {
  const workspaces = await trpc<Array<{ id: string; slug: string }>>(page, "workspace.list", undefined);
  return workspaces.find((w) => w.slug === slug)!.id;
}

/** Opens the canvas on `branch`, appends `text` to the summaries prompt and saves a version. A failure fails the test. */
export async function editSummariesInCanvas(page: Page, overviewPath: string, branch: string, text: string, message: string) {
  await page.goto(`${overviewPath}/canvas?branch=${encodeURIComponent(branch)}`);
  const node = page.getByTestId("canvas-node-summaries");
  await node.waitFor({ timeout: 20_000 });
  await node.click();
  const editor = page.getByTestId("node-panel").getByTestId("template-editor").locator(".cm-content");
  await editor.click({ timeout: 10_000 });
  await page.keyboard.press("Control+End");
  await page.keyboard.type(`\n${text}`);
  await expect(page.getByTestId("save-version")).toBeEnabled({ timeout: 10_000 });
  await page.getByTestId("save-version").click();
  await page.getByTestId("version-message").fill(message);
  await page.getByTestId("confirm-save").click();
  await expect(page.getByTestId("version-message")).toBeHidden({ timeout: 15_000 });
}

/** Members settings: a new invite link for `role` (the page must show the workspace's shell). */
export async function createInvite(page: Page, role: string) {
  await page.getByRole("link", { name: "Members" }).click();
  await page.getByTestId("invite-role").click();
  await page.getByRole("option", { name: role }).click();
  const field = page.getByTestId("invite-link");
  const previous = (await field.count()) ? await field.inputValue() : "";
  await page.getByTestId("create-invite").click();
  await expect(field).toHaveValue(/\/invite\//);
  await expect(field).not.toHaveValue(previous);
  return field.inputValue();
}
