/**
 * Requests from browsers that were not sent by the app's own pages.
 *
 * - **Cross-site writes (CSRF).** A state-changing request (not GET/HEAD/OPTIONS) that carries
 *   cookies and no `Authorization` header is signed in by the session cookie, which the browser
 *   also attaches to requests made by other sites' pages (another port of the same host is the
 *   same *site*, so SameSite=Lax does not stop them). Such a request must come from the app's own
 *   origin: `Sec-Fetch-Site: same-origin`, or an `Origin` equal to the app's origin (NEXTAUTH_URL)
 *   or to the request's own `Host`. It must also declare a JSON body (`application/json`; the
 *   upload route also takes multipart/form-data and octet-stream), which a plain HTML form or a
 *   `no-cors` fetch cannot send. Requests with an API key (`Authorization: Bearer …`) are not
 *   affected: a key is not sent by browsers on their own.
 * - **DNS rebinding.** When NEXTAUTH_URL is set (`npm start` always sets it), a request whose
 *   `Host` is a DNS name other than NEXTAUTH_URL's is refused. IP literals and `localhost` always
 *   pass (a rebinding attack needs a name of the attacker's); more names can be allowed with
 *   SYNTHEX_ALLOWED_HOSTS (comma-separated, e.g. the name a reverse proxy uses for the app).
 */

/** The refusal body, in the API's `{ error: { code, message } }` shape. */
function refuse(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}

/** NEXTAUTH_URL as a URL, or null when it is not set (or not a URL). */
function appUrl(env: Record<string, string | undefined>): URL | null {
  const raw = env.NEXTAUTH_URL?.trim();
  if (!raw) return null;
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** The hostname of a Host header value (`name:port`, `[v6]:port`), lower-cased, without the port. */
function hostname(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(0, h.indexOf("]") + 1);
  return h.replace(/:\d*$/, "");
}

const isIpLiteral = (name: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || /^\[[0-9a-f:.]+\]$/.test(name);

/** The Host the request was sent to (the header; the URL's host when there is none). */
function requestHost(req: Request): string {
  return req.headers.get("host") ?? new URL(req.url).host;
}

/** Null when the request's Host may reach the app; a 400 saying why not otherwise (see the file comment). */
export function hostRefusal(req: Request, env: Record<string, string | undefined> = process.env): Response | null {
  const app = appUrl(env);
  if (!app) return null;
  const name = hostname(requestHost(req));
  if (!name || isIpLiteral(name) || name === "localhost" || name === app.hostname.toLowerCase()) return null;
  const allowed = (env.SYNTHEX_ALLOWED_HOSTS ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (allowed.includes(name)) return null;
  return refuse(
    400,
    "HOST_NOT_ALLOWED",
    `This app answers to ${app.host} (NEXTAUTH_URL), not to Host "${name}". Use the app's address, or list the name in SYNTHEX_ALLOWED_HOSTS.`,
  );
}

/** Whether a request may be signed in by the session cookie: it carries cookies and no Authorization header. */
export function signedInByCookie(req: Request): boolean {
  return !req.headers.get("authorization") && !!req.headers.get("cookie");
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/** Media types a cookie-signed request may send: JSON everywhere; uploads also as multipart or raw bytes. */
const BODY_TYPES = {
  json: ["application/json"],
  upload: ["application/json", "multipart/form-data", "application/octet-stream"],
} as const;

/** Whether `origin` (an Origin header) is the app's own: NEXTAUTH_URL's origin, or the request's own Host. */
function sameOrigin(origin: string, req: Request, env: Record<string, string | undefined>): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and garbage
  }
  const app = appUrl(env);
  if (app && url.origin === app.origin) return true;
  return url.host === requestHost(req).trim().toLowerCase();
}

const HOW =
  "A request signed in by the session cookie must come from the app's own pages; scripts and agents send an API key (Authorization: Bearer sx_…) instead.";

/**
 * Null when the request may go on; otherwise the refusal: 403 when a cookie-signed state-changing
 * request does not come from the app's origin, 415 when its body is not of an accepted type, 400
 * for a Host that is not the app's (see `hostRefusal`). Call it before the body is read.
 */
export function crossSiteRefusal(
  req: Request,
  options: { bodies?: keyof typeof BODY_TYPES } = {},
  env: Record<string, string | undefined> = process.env,
): Response | null {
  const host = hostRefusal(req, env);
  if (host) return host;
  const method = req.method.toUpperCase();
  if (SAFE_METHODS.has(method) || !signedInByCookie(req)) return null;

  const fetchSite = req.headers.get("sec-fetch-site")?.trim().toLowerCase();
  const origin = req.headers.get("origin")?.trim();
  if (fetchSite && fetchSite !== "same-origin") {
    return refuse(403, "CROSS_SITE_REQUEST", `Refused: a ${fetchSite} request signed in by the session cookie (Sec-Fetch-Site: ${fetchSite}). ${HOW}`);
  }
  if (origin && !sameOrigin(origin, req, env)) {
    const app = appUrl(env)?.origin ?? `the origin of Host ${requestHost(req)}`;
    return refuse(403, "CROSS_SITE_REQUEST", `Refused: a request signed in by the session cookie from Origin ${origin}, which is not the app's (${app}). ${HOW}`);
  }
  if (!origin && fetchSite !== "same-origin") {
    return refuse(403, "CROSS_SITE_REQUEST", `Refused: a request signed in by the session cookie with neither an Origin header nor Sec-Fetch-Site: same-origin. ${HOW}`);
  }

  if (BODY_METHODS.has(method)) {
    const accepted: readonly string[] = BODY_TYPES[options.bodies ?? "json"];
    const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!accepted.includes(type)) {
      return refuse(
        415,
        "UNSUPPORTED_MEDIA_TYPE",
        `Refused: a request signed in by the session cookie must send its body as ${accepted.join(" or ")}, not ${type ? `"${type}"` : "without a Content-Type"}.`,
      );
    }
  }
  return null;
}

/** Wraps a route handler: the refusal above is answered before the handler (or a body limit) reads anything. */
export function withCrossSiteGuard<Req extends Request, Rest extends unknown[]>(
  handler: (req: Req, ...rest: Rest) => Promise<Response> | Response,
  options: { bodies?: keyof typeof BODY_TYPES } = {},
): (req: Req, ...rest: Rest) => Promise<Response> {
  return async (req, ...rest) => crossSiteRefusal(req, options) ?? handler(req, ...rest);
}
