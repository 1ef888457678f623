import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { newPipeline, signUp, workspaceId } from "./helpers";

/**
 * Cross-site request forgery from another port of the same host (the same *site*, so the
 * SameSite=Lax session cookie goes along): a signed-in user opens an attacker's page served on
 * another loopback port. It writes a memory with `fetch(…, { mode: "no-cors", credentials:
 * "include" })` and a text/plain body (no preflight), purges a scope the same way, and submits an
 * HTML form with enctype=text/plain. Every one is refused; the user's own data is untouched, as the
 * app's API shows the user afterwards. And the security headers are on pages and API answers.
 */
const user = { email: `csrf-${Date.now()}@example.com`, password: "csrf-e2e-password" };

function attackerPage(app: string, ws: string, pipelineId: string) {
  const messages = `${app}/api/v1/pipelines/${pipelineId}/sources/chats/messages`;
  const write = JSON.stringify({ workspaceId: ws, pipelineId, sessionId: "csrf-fetch", messages: [{ role: "user", content: "planted by another site" }] });
  const purge = JSON.stringify({ workspaceId: ws, scope: "victim", dryRun: false });
  // A text/plain form body is `name=value`: the "=" lands inside a JSON string, so it parses.
  const formName = JSON.stringify({ workspaceId: ws, pipelineId, sessionId: "csrf-form", messages: [{ role: "user", content: "planted by a form X" }] }).replace(/X"\}\]\}$/, "");
  return `<!doctype html><html><body><h1>Win a prize</h1>
<form id="f" method="POST" enctype="text/plain" action="${messages}"><input type="hidden" name='${formName}' value='Y"}]}'></form>
<script>
(async () => {
  const opts = (body) => ({ method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": "text/plain" }, body });
  await fetch(${JSON.stringify(messages)}, opts(${JSON.stringify(write)})).catch(() => {});
  await fetch(${JSON.stringify(`${app}/api/v1/pipelines/${pipelineId}/purge`)}, opts(${JSON.stringify(purge)})).catch(() => {});
  document.getElementById("f").submit();
})();
</script></body></html>`;
}

test("a page on another port cannot write or purge with the user's session cookie", async ({ page, baseURL }, testInfo) => {
  test.setTimeout(180_000);
  const app = new URL(baseURL!).origin;
  const slug = await signUp(page, user);
  const ws = await workspaceId(page, slug);
  const overview = await newPipeline(page, slug, "csrf-target");
  const pipelineId = overview.split("/").at(-1)!;
  const session = (id: string) => page.request.get(`/api/v1/pipelines/${pipelineId}/sources/chats/sessions/${id}?workspaceId=${ws}`);

  // The user's own page writes a memory: same origin, JSON (the guard lets the app's calls through).
  const own = await page.evaluate(
    async ({ pipelineId, ws }) => {
      const res = await fetch(`/api/v1/pipelines/${pipelineId}/sources/chats/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ workspaceId: ws, pipelineId, sessionId: "victim-session", scope: "victim", messages: [{ role: "user", content: "my own memory" }] }),
      });
      return { status: res.status, body: await res.text() };
    },
    { pipelineId, ws },
  );
  expect(own.status, own.body).toBe(200);
  expect((await session("victim-session")).status()).toBe(200);

  // The attacker's page on another loopback port.
  let server: Server | null = null;
  try {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(attackerPage(app, ws, pipelineId));
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const attackerOrigin = `http://localhost:${(server.address() as AddressInfo).port}`;
    expect(attackerOrigin).not.toBe(app);

    await page.goto(`${attackerOrigin}/`);
    // The form's navigation lands on the app's answer: a 403 that says why.
    await page.waitForURL(`${app}/api/v1/pipelines/${pipelineId}/sources/chats/messages`);
    await page.screenshot({ path: testInfo.outputPath("csrf-form-refused.png") });
    const formAnswer = await page.locator("body").innerText();

    // Nothing the other site sent reached the workspace, and the user's memory is still there
    // (soft: a failure reports each attack that got through).
    expect.soft((await session("csrf-fetch")).status(), "the no-cors fetch wrote a memory").toBe(404);
    expect.soft((await session("csrf-form")).status(), "the text/plain form wrote a memory").toBe(404);
    const victim = await session("victim-session");
    expect.soft(victim.status(), "the no-cors fetch purged the user's scope").toBe(200);
    expect(JSON.stringify(await victim.json())).toContain("my own memory");
    expect(formAnswer).toContain("CROSS_SITE_REQUEST");
    expect(formAnswer).toMatch(/signed in by the session cookie/);
  } finally {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
});

test("pages and API answers carry the anti-framing and sniffing headers", async ({ request }) => {
  for (const path of ["/signin", "/api/v1/openapi.json", "/api/v1/pipelines"]) {
    const res = await request.get(path);
    const headers = res.headers();
    expect(headers["x-frame-options"], path).toBe("DENY");
    expect(headers["content-security-policy"], path).toContain("frame-ancestors 'none'");
    expect(headers["x-content-type-options"], path).toBe("nosniff");
    expect(headers["referrer-policy"], path).toBe("strict-origin-when-cross-origin");
  }
});
