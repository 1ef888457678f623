import { expect, test } from "@playwright/test";
import { createApiKey, newPipeline, signUp } from "./helpers";

/**
 * REST /api/v1 on the running server over real HTTP: no credentials, an API key made in the UI, a
 * session cookie; and the API reference page generated from the same OpenAPI document.
 */
const user = { email: `rest-${Date.now()}@example.com`, password: "rest-password-12" };

test("REST API: 401 without credentials, a key's own workspace, the session path, and the reference page", async ({ page, request }, testInfo) => {
  test.setTimeout(300_000);
  const anonymous = await request.get("/api/v1/pipelines");
  expect(anonymous.status()).toBe(401);
  expect(await anonymous.json()).toMatchObject({ error: { code: "UNAUTHORIZED", message: "Sign in or send an API key." } });

  const slug = await signUp(page, user);
  // An API key, made in the UI and shown once.
  const key = await createApiKey(page, slug, "rest");

  // A key implies its workspace: no workspaceId needed.
  const listed = await request.get("/api/v1/pipelines", { headers: { authorization: `Bearer ${key}` } });
  expect(listed.status()).toBe(200);
  expect(await listed.json()).toEqual([]);

  // The browser's session works too, and a person says which workspace.
  const bySession = await page.request.get("/api/v1/pipelines");
  expect(bySession.status()).toBe(400);
  expect(await bySession.json()).toMatchObject({ error: { code: "BAD_REQUEST", message: expect.stringMatching(/^workspaceId: required/) } });

  const missing = await request.get("/api/v1/pipelines/nope/search?query=x", { headers: { authorization: `Bearer ${key}` } });
  expect(missing.status()).toBe(404);
  expect(await missing.json()).toMatchObject({ error: { code: "NOT_FOUND" } });

  await page.goto(`/w/${slug}/api`);
  await expect(page.getByRole("heading", { name: "REST API" })).toBeVisible();
  await expect(page.getByTestId("endpoint-GET-/pipelines/{pipelineId}/search")).toContainText("Search a pipeline's memory");
  await expect(page.getByTestId("endpoint-POST-/pipelines/{pipelineId}/runs")).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath("api-reference.png"), fullPage: true });

  const doc = await request.get("/api/v1/openapi.json");
  expect(doc.status()).toBe(200);
  const json = (await doc.json()) as { openapi: string; paths: Record<string, unknown> };
  expect(json.openapi).toBe("3.1.0");
  expect(Object.keys(json.paths).length).toBeGreaterThanOrEqual(10);
});

test("API key restrictions made in Settings → API keys are shown there and hold over REST", async ({ page, request }) => {
  test.setTimeout(300_000);
  const slug = await signUp(page, { email: `keys-${Date.now()}@example.com`, password: "keys-password-12" });
  await newPipeline(page, slug, "memory");

  await page.goto(`/w/${slug}/settings/api-keys`);
  await page.getByPlaceholder("Key name, e.g. support-agent").fill("eng-reader");
  await page.getByLabel(/^Read-only/).check();
  await page.getByPlaceholder(/^e\.g\. acme:eng/).fill("acme:eng");
  await page.getByLabel("Only pipeline memory").check();
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = await page.getByTestId("api-key-secret").inputValue();
  expect(secret).toMatch(/^sx_/);
  const badges = page.getByTestId("key-restrictions-eng-reader");
  await expect(badges).toContainText("read-only");
  await expect(badges).toContainText("scope acme:eng");
  await expect(badges).toContainText("pipeline memory");

  const auth = { authorization: `Bearer ${secret}` };
  // Reads inside the limits work; a write, or a scope outside the prefix, is refused with the reason.
  expect((await request.get("/api/v1/pipelines", { headers: auth })).status()).toBe(200);
  const write = await request.post("/api/v1/pipelines/memory/sources/chats/messages", { headers: auth, data: { sessionId: "s1", messages: [{ role: "user", content: "hi" }] } });
  expect(write.status()).toBe(403);
  expect(await write.json()).toMatchObject({ error: { code: "FORBIDDEN", message: expect.stringMatching(/read-only/) } });
  const outside = await request.get("/api/v1/pipelines/memory/brief?scope=acme:sales", { headers: auth });
  expect(outside.status()).toBe(403);
  expect(await outside.json()).toMatchObject({ error: { message: expect.stringMatching(/limited to scope "acme:eng"/) } });
});
