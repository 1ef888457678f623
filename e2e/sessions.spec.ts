import { request as httpRequest, createServer as createHttpServer } from "node:http";
import { connect, createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { signUp } from "./helpers";

/**
 * Sessions in Chromium (server/services/sessions.ts):
 * - a session cookie kept from before sign-out, put back into the browser, signs nobody in;
 * - cookie tossing: an attacker signs in to the app through a relay on another localhost port,
 *   then a page of theirs on yet another port plants that session cookie (cookies are not scoped
 *   by port: Chromium sends it to the app) in a signed-out victim's browser. The app does not
 *   sign the victim in as the attacker.
 */
const stamp = Date.now();

/** One request to 127.0.0.1:`port` with `host` as Host: the status, body and cookies set. */
function send(port: number, host: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  return new Promise<{ status: number; body: string; cookies: string[] }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), cookies: (res.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]!) }),
      );
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

test("a session cookie kept from before sign-out signs nobody in when it is put back", async ({ page, context, baseURL }) => {
  const slug = await signUp(page, { email: `kept-${stamp}@example.com`, password: "kept-e2e-password" });
  const kept = (await context.cookies(baseURL!)).filter((c) => c.name.endsWith("session-token"));
  expect(kept).toHaveLength(1);
  expect(((await (await page.request.get("/api/auth/session")).json()) as { user?: { email?: string } }).user?.email).toBe(`kept-${stamp}@example.com`);

  await page.getByTestId("user-menu").click();
  await page.getByRole("menuitem", { name: "Sign out", exact: true }).click();
  await expect(page).toHaveURL(/\/signin/);

  // The copy goes back into the browser, as a thief's or a forgotten tab's would.
  await context.addCookies(kept);
  expect(await (await page.request.get("/api/auth/session")).json()).toEqual({});
  await page.goto(`/w/${slug}/pipelines`);
  await expect(page).toHaveURL(/\/signin/);
});

test("a session cookie planted by a page on another localhost port does not sign a signed-out victim in", async ({ page, context, baseURL }) => {
  const app = new URL(baseURL!);
  const appPort = Number(app.port);
  const attacker = { email: `attacker-${stamp}@example.com`, password: "attacker-e2e-password" };
  const signedUp = await send(appPort, app.host, "POST", "/api/trpc/user.signUp?batch=1", { "content-type": "application/json" }, JSON.stringify({ 0: { json: attacker } }));
  expect(signedUp.status, signedUp.body).toBe(200);

  let relay: Server | null = null;
  let page2: ReturnType<typeof createHttpServer> | null = null;
  try {
    // The attacker's session, issued through a relay on another port in front of the app.
    relay = createServer((socket) => {
      const upstream = connect(appPort, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay!.listen(0, "127.0.0.1", resolve));
    const relayHost = `localhost:${(relay.address() as AddressInfo).port}`;
    const relayPort = (relay.address() as AddressInfo).port;
    const csrf = await send(relayPort, relayHost, "GET", "/api/auth/csrf");
    const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
    const signedIn = await send(
      relayPort,
      relayHost,
      "POST",
      "/api/auth/callback/credentials",
      { "content-type": "application/x-www-form-urlencoded", cookie: csrf.cookies.join("; ") },
      new URLSearchParams({ ...attacker, csrfToken, callbackUrl: `http://${relayHost}/`, json: "true" }).toString(),
    );
    const session = signedIn.cookies.find((c) => c.split("=")[0]!.endsWith("session-token"));
    expect(session, signedIn.body).toBeTruthy();

    // The attacker's page on another localhost port plants it with document.cookie.
    page2 = createHttpServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><p>hello</p><script>document.cookie = ${JSON.stringify(`${session}; path=/`)};</script>`);
    });
    await new Promise<void>((resolve) => page2!.listen(0, "127.0.0.1", resolve));
    await page.goto(`http://localhost:${(page2.address() as AddressInfo).port}/`);
    await expect(page.locator("p")).toHaveText("hello");
    // Planted: Chromium now sends it to the app's port too.
    expect((await context.cookies(baseURL!)).map((c) => `${c.name}=${c.value}`)).toContain(session);

    // The victim opens the app: not signed in as the attacker (nor at all).
    expect(await (await page.request.get("/api/auth/session")).json()).toEqual({});
    await page.goto("/");
    await expect(page).toHaveURL(/\/signin/);
  } finally {
    await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (page2 ? page2.close(() => resolve()) : resolve()));
  }
});
