/**
 * Sessions against the real server (`npm start`: Next, the embedded database, next-auth) over real
 * sockets, with the Host header a browser would send:
 *
 * - a session token kept after sign-out (a copy from before, e.g. stolen or left on another
 *   machine) no longer signs anyone in: not `/api/auth/session`, not tRPC; signing out one device
 *   leaves the others signed in; "sign out everywhere" ends them all;
 * - a session cookie issued through another port of the same host (cookies are not scoped by port:
 *   a page there can plant it, as a "cookie tossing" attacker does with their own session) is
 *   refused: here an attacker's relay on another loopback port forwards to the app;
 * - `/signin` and next-auth's `/api/auth/*` refuse a Host that is not the app's (DNS rebinding),
 *   like the API routes do.
 *
 * `npm start` builds first when there is no build.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../http/testing/free-port";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PASSWORD = "sessions-password-1";
let port = 0;
let app = "";
let server: ChildProcess | null = null;
const dir = mkdtempSync(path.join(tmpdir(), "synthex-sessions-"));
const log: string[] = [];

interface Answer {
  status: number;
  body: string;
  setCookies: string[];
  location?: string;
}

/** One HTTP request to 127.0.0.1:`to` with the given Host header (what a browser at that address sends). */
function send(to: number, host: string, method: string, url: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: to, method, path: url, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const set = res.headers["set-cookie"] ?? [];
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), setCookies: set, location: res.headers.location });
      });
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const own = () => `localhost:${port}`;
const cookiesOf = (a: Answer) => a.setCookies.map((c) => c.split(";")[0]!).filter((c) => !c.endsWith("="));
/** The session token cookie (`name=value`) a sign-in answered with: whatever next-auth names it. */
const sessionCookieIn = (a: Answer) => cookiesOf(a).find((c) => c.split("=")[0]!.endsWith("session-token"));

beforeAll(async () => {
  port = await freePort();
  app = `http://localhost:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), SYNTHEX_DATA_DIR: path.join(dir, "data"), SYNTHEX_DB_PORT: "0", NEXTAUTH_URL: app, SYNTHEX_SIGNUP_RATE_PER_ADDRESS: "1000" };
  delete env.DATABASE_URL;
  server = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/start.ts")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  server.stdout!.on("data", (d: Buffer) => log.push(d.toString()));
  server.stderr!.on("data", (d: Buffer) => log.push(d.toString()));
  const end = Date.now() + 1_500_000;
  for (;;) {
    const up = await send(port, own(), "GET", "/signin").then((r) => r.status < 500, () => false);
    if (up) break;
    if (Date.now() > end || server.exitCode !== null) throw new Error(`the server did not start:\n${log.join("")}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}, 1_560_000);

afterAll(() => {
  if (server?.pid) process.kill(-server.pid, "SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

async function signUp(email: string) {
  const res = await send(port, own(), "POST", "/api/trpc/user.signUp?batch=1", { "content-type": "application/json" }, JSON.stringify({ 0: { json: { email, password: PASSWORD } } }));
  expect(res.status, res.body).toBe(200);
}

/** A password sign-in through next-auth's own route, sent to 127.0.0.1:`via` as Host `host`: the session cookie. */
async function signIn(email: string, via = port, host = own()): Promise<string> {
  const csrf = await send(via, host, "GET", "/api/auth/csrf");
  expect(csrf.status, csrf.body).toBe(200);
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  const res = await send(
    via,
    host,
    "POST",
    "/api/auth/callback/credentials",
    { "content-type": "application/x-www-form-urlencoded", cookie: cookiesOf(csrf).join("; ") },
    new URLSearchParams({ email, password: PASSWORD, csrfToken, callbackUrl: `http://${host}/`, json: "true" }).toString(),
  );
  const cookie = sessionCookieIn(res);
  expect(cookie, `${res.status} ${res.body} ${res.setCookies.join(" | ")}`).toBeTruthy();
  return cookie!;
}

/** next-auth's sign-out as the app's menu sends it (POST with its CSRF token and the session cookie). */
async function signOut(session: string) {
  const csrf = await send(port, own(), "GET", "/api/auth/csrf", { cookie: session });
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  const res = await send(
    port,
    own(),
    "POST",
    "/api/auth/signout",
    { "content-type": "application/x-www-form-urlencoded", cookie: [session, ...cookiesOf(csrf)].join("; ") },
    new URLSearchParams({ csrfToken, callbackUrl: app, json: "true" }).toString(),
  );
  expect(res.status, res.body).toBe(200);
  // The browser's cookie is cleared either way: what matters is the copy kept below.
  expect(res.setCookies.some((c) => c.startsWith(`${session.split("=")[0]}=;`))).toBe(true);
}

/** Who the session cookie signs in as, by `/api/auth/session` (null: nobody). */
async function sessionEmail(session: string, host = own(), to = port): Promise<string | null> {
  const res = await send(to, host, "GET", "/api/auth/session", { cookie: session });
  expect(res.status, res.body).toBe(200);
  return (JSON.parse(res.body) as { user?: { email?: string } }).user?.email ?? null;
}

/** user.me over tRPC with the cookie: the email, or the error code. */
async function me(session: string): Promise<string> {
  const res = await send(port, own(), "GET", `/api/trpc/user.me?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { json: null } }))}`, { cookie: session });
  const [answer] = JSON.parse(res.body) as Array<{ result?: { data: { json: { email: string } } }; error?: { json: { data: { code: string } } } }>;
  return answer!.result?.data.json.email ?? answer!.error!.json.data.code;
}

describe("sessions on the real server", () => {
  it("a session token kept after sign-out no longer signs in; the same user's other sessions do", { timeout: 180_000 }, async () => {
    await signUp("kept@example.com");
    const laptop = await signIn("kept@example.com");
    const phone = await signIn("kept@example.com");
    expect(await sessionEmail(laptop)).toBe("kept@example.com");
    expect(await me(laptop)).toBe("kept@example.com");

    await signOut(laptop);
    // The copy of the laptop's cookie, replayed: nobody.
    expect(await sessionEmail(laptop)).toBeNull();
    expect(await me(laptop)).toBe("UNAUTHORIZED");
    // Signing out one device is not signing out everywhere.
    expect(await sessionEmail(phone)).toBe("kept@example.com");
    expect(await me(phone)).toBe("kept@example.com");
  });

  it("sign out everywhere ends every session of the user; signing in again works", { timeout: 180_000 }, async () => {
    await signUp("everywhere@example.com");
    const a = await signIn("everywhere@example.com");
    const b = await signIn("everywhere@example.com");
    const res = await send(port, own(), "POST", "/api/trpc/user.signOutEverywhere?batch=1", { cookie: a, "content-type": "application/json", origin: app }, JSON.stringify({ 0: { json: null } }));
    expect(res.status, res.body).toBe(200);
    expect(await sessionEmail(a)).toBeNull();
    expect(await sessionEmail(b)).toBeNull();
    expect(await me(b)).toBe("UNAUTHORIZED");
    expect(await sessionEmail(await signIn("everywhere@example.com"))).toBe("everywhere@example.com");
  });

  it("a session cookie issued through another port of the host signs nobody in here (cookie tossing)", { timeout: 180_000 }, async () => {
    await signUp("attacker@example.com");
    // The attacker's relay on another loopback port, in front of the same app: its sign-in is
    // answered for Host localhost:<relay>, as a server on that port would issue it.
    const relay: Server = createServer((socket) => {
      const upstream = connect(port, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const relayPort = (relay.address() as { port: number }).port;
    try {
      const tossed = await signIn("attacker@example.com", relayPort, `localhost:${relayPort}`);
      // A valid session where it was issued ...
      expect(await sessionEmail(tossed, `localhost:${relayPort}`, relayPort)).toBe("attacker@example.com");
      // ... planted in the victim's browser (cookies ignore ports), it reaches the app on its own port: nobody.
      expect(await sessionEmail(tossed)).toBeNull();
      expect(await me(tossed)).toBe("UNAUTHORIZED");
      // Nor as the same app under another name of this machine.
      expect(await sessionEmail(tossed, `127.0.0.1:${port}`)).toBeNull();
    } finally {
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
    // The session cookie's name carries the app's port (over http), so two servers on one host keep theirs apart.
    const ownCookie = await signIn("attacker@example.com");
    expect(ownCookie.startsWith(`synthex-${port}.session-token=`)).toBe(true);
  });

  it("/signin and next-auth's routes refuse a Host that is not the app's (DNS rebinding), like the API", { timeout: 120_000 }, async () => {
    const rebound = `rebind.attacker.test:${port}`;
    for (const [method, url] of [
      ["GET", "/signin"],
      ["GET", "/api/auth/session"],
      ["GET", "/api/auth/csrf"],
      ["GET", "/api/auth/providers"],
      ["POST", "/api/auth/callback/credentials"],
      ["GET", "/"],
      ["GET", "/api/v1/openapi.json"],
    ] as const) {
      const res = await send(port, rebound, method, url, method === "POST" ? { "content-type": "application/x-www-form-urlencoded" } : {}, method === "POST" ? "" : undefined);
      expect(res.status, `${method} ${url}: ${res.body.slice(0, 200)}`).toBe(400);
      expect(JSON.parse(res.body).error.code).toBe("HOST_NOT_ALLOWED");
    }
    // The app's own names still get the pages.
    for (const host of [own(), `127.0.0.1:${port}`]) {
      expect((await send(port, host, "GET", "/signin")).status).toBe(200);
      expect((await send(port, host, "GET", "/api/auth/session")).status).toBe(200);
    }
  });
});
