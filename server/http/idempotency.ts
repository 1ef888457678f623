/**
 * `Idempotency-Key` on REST writes (the Stripe convention): the first answer to a key is kept for
 * 24 hours and replayed for a retry with the same key and the same request (method, path, body);
 * the same key with another request is refused (422), and a retry while the first is still being
 * answered gets 409. Keys belong to their caller (an API key or a person), so two agents never
 * collide. 5xx answers are not kept: the retry runs again. A purge replaces the kept answers of
 * the workspace by `PURGED_ANSWER` (410): a kept answer may quote purged text, and running the
 * request again could bring purged data back, so a retry gets neither.
 */
import { createHash } from "node:crypto";
import type { Db } from "../core/db";

const TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;

export interface IdempotencyScope {
  workspaceId: string;
  /** "apiKey:<id>" or "user:<id>". */
  actor: string;
  key: string;
  method: string;
  path: string;
  body: string;
}

const errorResponse = (status: number, code: string, message: string) => Response.json({ error: { code, message } }, { status });

/** The body a replay gets after a purge removed the kept answer (status 410; the request is not run again). */
export const PURGED_ANSWER = JSON.stringify({
  error: {
    code: "IDEMPOTENCY_ANSWER_PURGED",
    message: "This request was carried out before a purge, and its kept answer was removed with the purged data: it is not run again. Send a new Idempotency-Key to make a new request.",
  },
});

function requestHash(s: IdempotencyScope): string {
  return createHash("sha256").update(`${s.method}\n${s.path}\n${s.body}`).digest("hex");
}

/**
 * Claims the key for this request. Returns a Response to send instead of running the request
 * (a replay, or a refusal), or a `finish` to call with the request's own answer.
 */
export async function claimIdempotencyKey(db: Db, s: IdempotencyScope): Promise<{ response: Response } | { finish: (res: Response) => Promise<Response> }> {
  if (!s.key.trim() || s.key.length > MAX_KEY_LENGTH) {
    return { response: errorResponse(400, "BAD_REQUEST", `Idempotency-Key: 1 to ${MAX_KEY_LENGTH} characters (a UUID is typical).`) };
  }
  const bodyHash = requestHash(s);
  const id = { actor_key: { actor: s.actor, key: s.key } };
  const existing = await db.idempotencyKey.findUnique({ where: id });
  if (existing && existing.createdAt.getTime() < Date.now() - TTL_MS) await db.idempotencyKey.deleteMany({ where: { actor: s.actor, key: s.key, createdAt: existing.createdAt } });
  else if (existing) return { response: answerExisting(existing, bodyHash) };

  const claimed = await db.idempotencyKey.createMany({
    data: [{ workspaceId: s.workspaceId, actor: s.actor, key: s.key, method: s.method, path: s.path, bodyHash }],
    skipDuplicates: true,
  });
  if (claimed.count === 0) {
    // Another request claimed it between the read and the insert.
    const row = await db.idempotencyKey.findUnique({ where: id });
    if (row) return { response: answerExisting(row, bodyHash) };
  }
  return {
    finish: async (res) => {
      if (res.status >= 500) {
        await db.idempotencyKey.deleteMany({ where: { actor: s.actor, key: s.key } });
        return res;
      }
      const text = await res.text();
      // Kept unless a purge tombstoned the key while the request was being answered.
      await db.idempotencyKey.updateMany({ where: { actor: s.actor, key: s.key, status: null }, data: { status: res.status, response: text } });
      return new Response(text, { status: res.status, headers: res.headers });
    },
  };
}

function answerExisting(row: { bodyHash: string; status: number | null; response: string | null; method: string; path: string }, bodyHash: string): Response {
  if (row.bodyHash !== bodyHash) {
    return errorResponse(
      422,
      "IDEMPOTENCY_KEY_REUSED",
      `This Idempotency-Key was first used for a different request (${row.method} ${row.path} with another body): use a new key for a new request.`,
    );
  }
  if (row.status === null) return errorResponse(409, "CONFLICT", "A request with this Idempotency-Key is still being answered: retry in a moment.");
  return new Response(row.response, { status: row.status, headers: { "content-type": "application/json", "idempotency-replayed": "true" } });
}
