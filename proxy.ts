/**
 * Next's proxy (the former middleware): runs before every request Next serves (pages, route
 * handlers, next-auth's `/api/auth/*`, static files), so the Host check (DNS rebinding,
 * server/http/csrf.ts `hostRefusal`) covers them all, not only the API routes that wrap their
 * handler in `withCrossSiteGuard`. Without it a rebound name reached `/signin` and
 * `/api/auth/session`. No `matcher`: every path. The direct `/api/v1` path of scripts/app-server.ts
 * skips Next and runs the same check in server/api/rest-route.ts.
 *
 * Then the trailing slash (next.config.ts `skipTrailingSlashRedirect`): the agent APIs (`/compat/*`,
 * `/api/v1/*`) answer a path with and without it, never with a redirect (Mem0's clients send
 * `/v1/memories/`; an httpx client configured as Python's mem0ai does not follow redirects). Every
 * other path keeps Next's default, a 308 to the path without the slash.
 */
import { NextResponse, type NextRequest } from "next/server";
import { hostRefusal } from "./server/http/csrf";

/** Paths answered with and without a trailing slash. */
export const SLASH_TOLERANT = /^\/(compat|api\/v1)(\/|$)/;

/**
 * The `/api/v1` handlers check the Host themselves (server/api/rest-route.ts `withCrossSiteGuard`, the
 * upload route `crossSiteRefusal`), the same check `npm start`'s direct path runs, so a refusal is
 * byte for byte the direct path's (an answer from here would carry Next's `Vary` list). Every other
 * path is checked here, `/api/v1/openapi.json` included (its handler has no check of its own).
 */
const CHECKS_HOST_ITSELF = /^\/api\/v1(?!\/openapi\.json\/?$)(\/|$)/;

export function proxy(request: NextRequest): Response {
  const { pathname } = request.nextUrl;
  if (!CHECKS_HOST_ITSELF.test(pathname)) {
    const refused = hostRefusal(request);
    if (refused) return refused;
  }
  if (pathname.length > 1 && pathname.endsWith("/") && !SLASH_TOLERANT.test(pathname)) {
    // A plain URL: NextURL keeps the slash it saw when the pathname is set again.
    const url = new URL(request.nextUrl.href);
    url.pathname = pathname.replace(/\/+$/, "") || "/";
    return NextResponse.redirect(url, 308);
  }
  return NextResponse.next();
}
