/**
 * Sign-up and sign-in limits per client address, against the real server (`npm start`: Next, the
 * embedded database, next-auth) over real sockets from several loopback addresses (127.0.0.x):
 * the address is the socket peer, and X-Forwarded-For counts only from a trusted proxy
 * (SYNTHEX_TRUSTED_PROXIES=127.0.0.2 here). `npm start` builds first when there is no build.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Agent, fetch, type Response } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../http/testing/free-port";
import { sessionCookieName } from "./cookies";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PROXY = "127.0.0.2";
const PASSWORD = "victim-password-1";
let base = "";
let server: ChildProcess | null = null;
const dir = mkdtempSync(path.join(tmpdir(), "synthex-address-limits-"));
const log: string[] = [];

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), SYNTHEX_DATA_DIR: path.join(dir, "data"), SYNTHEX_DB_PORT: "0", NEXTAUTH_URL: base, SYNTHEX_TRUSTED_PROXIES: PROXY };
  // The production budgets: nothing loosened here.
  for (const name of ["DATABASE_URL", "SYNTHEX_SIGNUP_RATE_PER_ADDRESS"]) delete env[name];
  server = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/start.ts")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  server.stdout!.on("data", (d: Buffer) => log.push(d.toString()));
  server.stderr!.on("data", (d: Buffer) => log.push(d.toString()));
  const end = Date.now() + 600_000;
  for (;;) {
    const up = await fetch(`${base}/signin`).then((r) => r.status < 500, () => false);
    if (up) break;
    if (Date.now() > end || server.exitCode !== null) throw new Error(`the server did not start:\n${log.join("")}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}, 660_000);

afterAll(() => {
  if (server?.pid) process.kill(-server.pid, "SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

/** A client whose connections come from `localAddress` (a loopback alias). */
function from(localAddress: string) {
  const dispatcher = new Agent({ localAddress });
  return (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => fetch(`${base}${url}`, { ...init, dispatcher });
}

type Client = ReturnType<typeof from>;

/** user.signUp `emails.length` times in one tRPC batch; the error code of each call ("OK" for none). */
async function signUps(client: Client, emails: string[], headers: Record<string, string> = {}) {
  const input = Object.fromEntries(emails.map((email, i) => [String(i), { json: { email, password: PASSWORD } }]));
  const res = await client(`/api/trpc/${emails.map(() => "user.signUp").join(",")}?batch=1`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as Array<{ error?: { json: { message: string; data: { code: string } } } }>;
  return { codes: body.map((r) => r.error?.json.data.code ?? "OK"), messages: body.map((r) => r.error?.json.message) };
}

/** A password sign-in through next-auth's own route: "ok", or the error it answers with. */
async function signIn(client: Client, email: string, password: string, headers: Record<string, string> = {}): Promise<string> {
  const csrf = await client("/api/auth/csrf", { headers });
  const cookie = csrf.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res: Response = await client("/api/auth/callback/credentials", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
    body: new URLSearchParams({ email, password, csrfToken, callbackUrl: base, json: "true" }).toString(),
  });
  const { url } = (await res.json()) as { url: string };
  const error = new URL(url).searchParams.get("error");
  if (error) return error;
  expect(res.headers.getSetCookie().some((c) => c.startsWith(`${sessionCookieName(base)}=`))).toBe(true);
  return "ok";
}

const count = (codes: string[], code: string) => codes.filter((c) => c === code).length;

describe("limits per client address on the real server", () => {
  it("a batch of 20 sign-ups in one tRPC request creates 5 accounts; the rest are refused, saying when to retry", { timeout: 120_000 }, async () => {
    const emails = Array.from({ length: 20 }, (_, i) => `batch${i}@example.com`);
    const { codes, messages } = await signUps(from("127.0.0.10"), emails);
    expect(count(codes, "OK")).toBe(5);
    expect(count(codes, "TOO_MANY_REQUESTS")).toBe(15);
    expect(messages.find(Boolean)).toMatch(/^Too many sign-ups from your network \(5 per 10 minutes\)\. Try again in \d+ seconds?\.$/);
    // A refused sign-up created nothing: its email has no account.
    const refused = emails[codes.indexOf("TOO_MANY_REQUESTS")]!;
    expect(await signIn(from("127.0.0.20"), refused, PASSWORD)).toBe("CredentialsSignin");
  });

  it("a spoofed X-Forwarded-For gets no fresh sign-up budget from a peer that is not a trusted proxy", { timeout: 120_000 }, async () => {
    const client = from("127.0.0.11");
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) codes.push(...(await signUps(client, [`spoof${i}@example.com`], { "x-forwarded-for": `203.0.113.${i}` })).codes);
    expect(codes).toEqual(["OK", "OK", "OK", "OK", "OK", "TOO_MANY_REQUESTS"]);
  });

  it("behind the trusted proxy, each forwarded client has its own budget, and the client's own part of the chain is ignored", { timeout: 120_000 }, async () => {
    const proxy = from(PROXY);
    const distinct: string[] = [];
    for (let i = 0; i < 6; i++) distinct.push(...(await signUps(proxy, [`proxied${i}@example.com`], { "x-forwarded-for": `198.51.100.${i}` })).codes);
    expect(distinct).toEqual(["OK", "OK", "OK", "OK", "OK", "OK"]);
    // One client that writes a new address before the proxy's entry each time: still one budget.
    const same: string[] = [];
    for (let i = 0; i < 6; i++) same.push(...(await signUps(proxy, [`chain${i}@example.com`], { "x-forwarded-for": `10.9.9.${i}, 198.51.100.200` })).codes);
    expect(same).toEqual(["OK", "OK", "OK", "OK", "OK", "TOO_MANY_REQUESTS"]);
  });

  it("a spoofed X-Forwarded-For gets no fresh sign-in budget either", { timeout: 180_000 }, async () => {
    const client = from("127.0.0.12");
    for (let i = 0; i < 20; i++) expect(await signIn(client, `nobody${i}@example.com`, "wrong password", { "x-forwarded-for": `203.0.113.${i}` })).toBe("CredentialsSignin");
    expect(await signIn(client, "nobody-else@example.com", "wrong password", { "x-forwarded-for": "203.0.113.99" })).toMatch(
      /^Too many failed sign-in attempts from your network\. Try again in \d+ seconds?\.$/,
    );
  });

  it("a victim's right password signs in after an attacker's failures", { timeout: 180_000 }, async () => {
    expect((await signUps(from("127.0.0.30"), ["victim@example.com"])).codes).toEqual(["OK"]);
    const attacker = from("127.0.0.31");
    for (let i = 0; i < 5; i++) expect(await signIn(attacker, "victim@example.com", `guess ${i}`)).toBe("CredentialsSignin");
    // The attacker's own address is delayed for this email, whatever it claims to be ...
    expect(await signIn(attacker, "victim@example.com", "guess 5", { "x-forwarded-for": "192.0.2.1" })).toMatch(/^Too many failed sign-in attempts for this email/);
    // ... and the victim, from their own address, signs in at once.
    expect(await signIn(from("127.0.0.32"), "victim@example.com", PASSWORD)).toBe("ok");
  });
});
