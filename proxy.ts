/**
 * Next's proxy (the former middleware): runs before every request Next serves (pages, route
 * handlers, next-auth's `/api/auth/*`, static files), so the Host check (DNS rebinding,
 * server/http/csrf.ts `hostRefusal`) covers them all, not only the API routes that wrap their
 * handler in `withCrossSiteGuard`. Without it a rebound name reached `/signin` and
 * `/api/auth/session`. No `matcher`: every path. The direct `/api/v1` path of scripts/app-server.ts
 * skips Next and runs the same check in server/api/rest-route.ts.
 */
import { NextResponse, type NextRequest } from "next/server";
import { hostRefusal } from "./server/http/csrf";

export function proxy(request: NextRequest): Response {
  return hostRefusal(request) ?? NextResponse.next();
}
