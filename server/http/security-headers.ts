/**
 * The headers on every page and API response: no framing by other sites (clickjacking), no MIME
 * sniffing, no full URLs in Referer to other origins. Next adds them through next.config.ts; the
 * app server's direct `/api/v1` path (scripts/app-server.ts), which Next's router never sees, adds
 * the same list itself. See server/http/csrf.ts for cross-site writes.
 */
export const SECURITY_HEADERS: ReadonlyArray<{ key: string; value: string }> = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
];
