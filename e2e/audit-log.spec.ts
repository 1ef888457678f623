import { expect, test } from "@playwright/test";
import { createApiKey, signUp } from "./helpers";

test("an owner sees who created and revoked an API key in Settings → Audit log", async ({ page }, testInfo) => {
  const email = `auditor-${Date.now()}@example.com`;
  const slug = await signUp(page, { email, password: "auditor-password-1" });
  await createApiKey(page, slug, "audited-agent");
  await page.getByRole("button", { name: "Revoke" }).click();
  await expect(page.getByText("revoked")).toBeVisible();

  await page.getByRole("link", { name: "Audit log" }).click();
  const log = page.getByTestId("audit-log");
  await expect(log.getByRole("row")).toHaveCount(3); // header + two entries
  const rows = log.getByRole("row");
  await expect(rows.nth(1)).toContainText("apiKey.revoke");
  await expect(rows.nth(2)).toContainText("apiKey.create");
  await expect(rows.nth(2)).toContainText(email);
  await expect(rows.nth(2)).toContainText("audited-agent");
  await page.getByLabel("Filter by action").fill("apiKey.create");
  await expect(log.getByRole("row")).toHaveCount(2);
  await page.screenshot({ path: testInfo.outputPath("audit-log.png") });
});
