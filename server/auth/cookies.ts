/**
 * The names (and attributes) of next-auth's cookies, from the app's URL (NEXTAUTH_URL).
 *
 * - **HTTPS**: every cookie is `__Host-synthex.…` (Secure, Path=/, no Domain). A browser takes a
 *   `__Host-` cookie only from a secure origin and only host-only, so a sibling subdomain (a
 *   `Domain=` cookie) or a plain-http page on another port of the host cannot plant or overwrite it.
 * - **Plain http** (`npm start` on http://localhost:PORT): `synthex-PORT.…`, not Secure. `__Host-`
 *   does not help here: Chromium accepts Secure and `__Host-` cookies from http://localhost and
 *   http://127.0.0.1 (they count as secure contexts), but cookies are not scoped by port, so a page
 *   on any other localhost port reads, sends and plants them just the same (checked with Chromium
 *   156); and Secure would break http on a LAN address or in Safari. The port in the name keeps two
 *   servers on one host from overwriting each other's sessions; what refuses a token planted from
 *   another port is the Host it was issued for, which it carries (server/services/sessions.ts).
 *
 * The port is part of the name before the `.session-token`, never after: next-auth reads every
 * cookie whose name *starts with* the session cookie's name as a chunk of it.
 */
import type { CookieOption, CookiesOptions } from "next-auth";

/** Whether the app is served over HTTPS, and the cookie name prefix that follows from NEXTAUTH_URL. */
export function cookiePrefix(appUrl: string | undefined = process.env.NEXTAUTH_URL): { secure: boolean; prefix: string } {
  let url: URL | null = null;
  try {
    url = appUrl?.trim() ? new URL(appUrl.trim()) : null;
  } catch {
    url = null;
  }
  if (url?.protocol === "https:") return { secure: true, prefix: "__Host-synthex." };
  const port = url ? url.port || "80" : "";
  return { secure: false, prefix: port ? `synthex-${port}.` : "synthex." };
}

/** The session cookie's name for the app at `appUrl` (tests and the OpenAPI description use it too). */
export function sessionCookieName(appUrl: string | undefined = process.env.NEXTAUTH_URL): string {
  return `${cookiePrefix(appUrl).prefix}session-token`;
}

/** next-auth's `cookies` option: its six cookies under the names above, HttpOnly, SameSite=Lax, Path=/. */
export function authCookies(appUrl: string | undefined = process.env.NEXTAUTH_URL): CookiesOptions {
  const { secure, prefix } = cookiePrefix(appUrl);
  const cookie = (name: string, extra: Partial<CookieOption["options"]> = {}): CookieOption => ({
    name: `${prefix}${name}`,
    options: { httpOnly: true, sameSite: "lax", path: "/", secure, ...extra },
  });
  return {
    sessionToken: cookie("session-token"),
    callbackUrl: cookie("callback-url"),
    csrfToken: cookie("csrf-token"),
    pkceCodeVerifier: cookie("pkce.code_verifier", { maxAge: 60 * 15 }),
    state: cookie("state", { maxAge: 60 * 15 }),
    nonce: cookie("nonce"),
  };
}
