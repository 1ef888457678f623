import { expect, test, type Page } from "@playwright/test";
import { createInvite } from "./helpers";

const stamp = Date.now();
const alice = { email: `alice-${stamp}@example.com`, password: "alice-password-1" };
const bob = { email: `bob-${stamp}@example.com`, password: "bob-password-1" };
const vera = { email: `vera-${stamp}@example.com`, password: "vera-password-1" };

/** Signs up on `path`, or on the sign-up form the page is already showing when `path` is null. */
async function signUp(page: Page, user: { email: string; password: string }, path: string | null = "/signup") {
  if (path) await page.goto(path);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Create account" }).click();
}

test("sign up, second workspace, invite an editor and a viewer", async ({ browser }, testInfo) => {
  const ownerCtx = await browser.newContext();
  const owner = await ownerCtx.newPage();
  await signUp(owner, alice);
  await expect(owner).toHaveURL(/\/w\/[^/]+\/pipelines$/);
  await expect(owner.getByText("No pipelines yet")).toBeVisible();
  await expect(owner.getByTestId("current-role")).toHaveText("owner");
  await owner.screenshot({ path: testInfo.outputPath("01-personal-workspace.png") });

  // A duplicate email is explained without confirming the account exists to someone without its password.
  const probe = await browser.newPage();
  await signUp(probe, { email: alice.email, password: "another-password" });
  await expect(probe.getByText("Could not sign you in. If this email already has an account, sign in with its password instead.")).toBeVisible();
  await probe.close();

  await owner.getByTestId("workspace-switcher").click();
  await owner.getByRole("menuitem", { name: "Create workspace" }).click();
  await owner.getByLabel("Name").fill("Acme Research");
  await owner.getByRole("button", { name: "Create workspace" }).click();
  await expect(owner.getByTestId("workspace-switcher")).toContainText("Acme Research");

  const editorLink = await createInvite(owner, "editor");
  // The invite list names who made each link (a link ends when its maker leaves or loses the role).
  await expect(owner.getByTestId("invite-created-by").first()).toHaveText(alice.email);
  await owner.screenshot({ path: testInfo.outputPath("02-members-invite.png") });

  const bobCtx = await browser.newContext();
  const bobPage = await bobCtx.newPage();
  await bobPage.goto(editorLink);
  await expect(bobPage.getByText("Join Acme Research")).toBeVisible();
  await bobPage.getByRole("link", { name: "Create an account to join" }).click();
  await bobPage.waitForURL(/\/signup\?invite=/);
  await signUp(bobPage, bob, null);
  await expect(bobPage.getByTestId("workspace-switcher")).toContainText("Acme Research");
  await expect(bobPage.getByTestId("current-role")).toHaveText("editor");
  await expect(bobPage.getByTestId("create-pipeline")).toBeVisible();
  await bobPage.screenshot({ path: testInfo.outputPath("03-editor-joined.png") });

  // The used link does not work twice.
  const reuse = await browser.newPage();
  await reuse.goto(editorLink);
  await expect(reuse.getByText("already used")).toBeVisible();
  await reuse.close();

  const viewerLink = await createInvite(owner, "viewer");
  const veraCtx = await browser.newContext();
  const veraPage = await veraCtx.newPage();
  await veraPage.goto(viewerLink);
  await veraPage.getByRole("link", { name: "Create an account to join" }).click();
  await veraPage.waitForURL(/\/signup\?invite=/);
  await signUp(veraPage, vera, null);
  await expect(veraPage.getByTestId("current-role")).toHaveText("viewer");
  // Viewers see no write actions, and the server refuses them anyway.
  await expect(veraPage.getByTestId("create-pipeline")).toHaveCount(0);
  await veraPage.getByRole("link", { name: "Workspace" }).click();
  await expect(veraPage.getByRole("button", { name: "Save" })).toBeDisabled();
  await veraPage.getByRole("link", { name: "API keys" }).click();
  await expect(veraPage.getByText("Only owners and admins manage API keys")).toBeVisible();
  await veraPage.screenshot({ path: testInfo.outputPath("04-viewer.png") });

  // The owner sees both new members.
  await owner.reload();
  await expect(owner.getByTestId("member-row")).toHaveCount(3);
  await owner.screenshot({ path: testInfo.outputPath("05-members.png") });
});

test("an unknown workspace in the URL says so", async ({ page }) => {
  await signUp(page, { email: `carol-${stamp}@example.com`, password: "carol-password-1" });
  await expect(page).toHaveURL(/\/pipelines$/);
  await page.goto("/w/no-such-workspace/pipelines");
  await expect(page.getByText("Workspace not found")).toBeVisible();
});
