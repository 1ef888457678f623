/**
 * Request body limits for every route: a declared Content-Length over the limit is refused
 * before anything is read; an undeclared (chunked) body is counted while it streams and refused
 * as soon as it passes the limit. The refusal is a 413 with a JSON error naming the limit and
 * the variable that sets it. Web-standard Request/Response only (route handlers stay thin).
 */

const MiB = 1024 * 1024;

export interface BodyLimit {
  bytes: number;
  /** The environment variable that sets it, named in the error so an operator knows what to change. */
  setting: string;
}

function fromEnv(setting: string, fallback: number): BodyLimit {
  const raw = process.env[setting]?.trim();
  const bytes = raw ? Number(raw) : fallback;
  if (!Number.isInteger(bytes) || bytes <= 0) throw new Error(`${setting} must be a positive whole number of bytes (got "${raw}")`);
  return { bytes, setting };
}

/** tRPC and auth requests: JSON, small (default 1 MiB). */
export const apiBodyLimit = () => fromEnv("SYNTHEX_MAX_BODY_BYTES", MiB);
/** Inngest step requests, which carry memoized step results (default 16 MiB). */
export const inngestBodyLimit = () => fromEnv("SYNTHEX_MAX_INNGEST_BODY_BYTES", 16 * MiB);
/** File uploads into a source (default 512 MiB: chat exports are large). */
export const uploadBodyLimit = () => fromEnv("SYNTHEX_MAX_UPLOAD_BYTES", 512 * MiB);

export function formatBytes(bytes: number): string {
  if (bytes >= MiB && bytes % (MiB / 4) === 0) return `${bytes / MiB} MiB`;
  if (bytes >= 1024 && bytes % 256 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

export class BodyTooLargeError extends Error {
  constructor(readonly limit: BodyLimit) {
    super(`The request body is larger than the limit of ${formatBytes(limit.bytes)} (${limit.setting}).`);
    this.name = "BodyTooLargeError";
  }
}

export function tooLargeResponse(limit: BodyLimit): Response {
  const error = new BodyTooLargeError(limit);
  return Response.json({ error: error.message, code: "PAYLOAD_TOO_LARGE", limitBytes: limit.bytes, setting: limit.setting }, { status: 413 });
}

/** The same refusal in the agent API's error shape, `{ error: { code, message, … } }` (REST /api/v1 and MCP). */
export function apiTooLargeResponse(limit: BodyLimit): Response {
  const error = new BodyTooLargeError(limit);
  return Response.json({ error: { code: "PAYLOAD_TOO_LARGE", message: error.message, limitBytes: limit.bytes, setting: limit.setting } }, { status: 413 });
}

/** True when the request declares a body longer than the limit (nothing read). */
export function declaresTooLarge(req: Request, limit: BodyLimit): boolean {
  const declared = req.headers.get("content-length");
  return declared !== null && Number(declared) > limit.bytes;
}

/** The body as a stream that errors with BodyTooLargeError once more than the limit has passed. */
export function limitStream(body: ReadableStream<Uint8Array>, limit: BodyLimit): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit.bytes) controller.error(new BodyTooLargeError(limit));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** Reads the whole body, at most `limit` bytes (throws BodyTooLargeError beyond). */
export async function readLimited(req: Request, limit: BodyLimit): Promise<Uint8Array | null> {
  if (declaresTooLarge(req, limit)) throw new BodyTooLargeError(limit);
  if (!req.body) return null;
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = limitStream(req.body, limit).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * Wraps a handler that reads its whole body (tRPC, next-auth): the body is read here under the
 * limit, then handed on in a rebuilt request (`rebuild` makes the subclass the handler expects).
 */
export function withBodyLimit<Req extends Request, Rest extends unknown[]>(
  handler: (req: Req, ...rest: Rest) => Promise<Response> | Response,
  limit: () => BodyLimit,
  rebuild: (url: string, init: RequestInit) => Req,
  tooLarge: (limit: BodyLimit) => Response = tooLargeResponse,
): (req: Req, ...rest: Rest) => Promise<Response> {
  return async (req, ...rest) => {
    if (req.method === "GET" || req.method === "HEAD") return handler(req, ...rest);
    const max = limit();
    let body: Uint8Array | null;
    try {
      body = await readLimited(req, max);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return tooLarge(max);
      throw err;
    }
    const headers = new Headers(req.headers);
    headers.delete("content-length");
    return handler(rebuild(req.url, { method: req.method, headers, body: body as BodyInit | null, signal: req.signal }), ...rest);
  };
}
