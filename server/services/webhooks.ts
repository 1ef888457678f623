/**
 * Signed webhook deliveries for projection changes. Each delivery is a WebhookDelivery row;
 * `deliverPending` claims due rows (a lease, so two workers never send the same one), POSTs
 * them and retries failures with exponential backoff until `maxAttempts`.
 *
 * Signature: `X-Synthex-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` with
 * `X-Synthex-Timestamp: <unix seconds>`; the secret is the workspace's webhookSecret (created on
 * first use). Receivers check it with `verifyWebhookSignature`.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Db } from "../core/db";
import { claimDueDeliveries } from "../store/webhook-queue";
import { assertOutboundUrl, outboundFetch, OutboundUrlError } from "../http/outbound";
import type { PipelineSpec } from "../pipeline/spec";

export const SIGNATURE_HEADER = "X-Synthex-Signature";
export const TIMESTAMP_HEADER = "X-Synthex-Timestamp";

export interface DeliverOptions {
  /** Deliveries handled per call (default 50). */
  limit?: number;
  /** Attempts before a delivery is marked failed (default 8). */
  maxAttempts?: number;
  /** First retry delay; doubles each attempt (default 30 s, capped at 6 h). */
  backoffMs?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => Date;
}

export function signPayload(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** Constant-time check of a signature header, with a freshness window (default 5 minutes). */
export function verifyWebhookSignature(
  secret: string,
  header: string | null | undefined,
  timestamp: string | null | undefined,
  body: string,
  toleranceSeconds = 300,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const ts = Number(timestamp);
  if (!header || !Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = Buffer.from(signPayload(secret, ts, body));
  const got = Buffer.from(header);
  return expected.length === got.length && timingSafeEqual(expected, got);
}

const newSecret = () => `whsec_${randomBytes(24).toString("hex")}`;

/**
 * A new signing secret for the workspace, returned this once (admins see it when they rotate;
 * no read ever returns it again). Deliveries from now on are signed with it.
 */
export async function rotateWebhookSecret(db: Db, workspaceId: string): Promise<{ secret: string; rotatedAt: Date }> {
  const secret = newSecret();
  await db.workspace.update({ where: { id: workspaceId }, data: { webhookSecret: secret } });
  return { secret, rotatedAt: new Date() };
}

/** The workspace's signing secret, generated (once, race-free) on first use. Server-side only. */
export async function getWebhookSecret(db: Db, workspaceId: string): Promise<string> {
  await db.workspace.updateMany({ where: { id: workspaceId, webhookSecret: null }, data: { webhookSecret: newSecret() } });
  const ws = await db.workspace.findUniqueOrThrow({ where: { id: workspaceId }, select: { webhookSecret: true } });
  return ws.webhookSecret!;
}

/** Save-time check of a spec's webhook URLs: each must be an allowed outbound URL. Throws naming the output. */
export async function assertWebhookUrls(spec: PipelineSpec): Promise<void> {
  for (const output of spec.outputs ?? []) {
    const url = (output as { webhook?: { url?: string } }).webhook?.url;
    if (!url) continue;
    try {
      await assertOutboundUrl(url);
    } catch (err) {
      if (err instanceof OutboundUrlError) throw new OutboundUrlError(`outputs.${output.name}.webhook.url: ${err.message}`);
      throw err;
    }
  }
}

const LEASE_MS = 5 * 60_000;

export async function deliverPending(db: Db, options: DeliverOptions = {}) {
  const now = options.now ?? (() => new Date());
  const maxAttempts = options.maxAttempts ?? 8;
  const backoff = options.backoffMs ?? 30_000;
  // Webhook URLs are user input: only public addresses, redirects answered, never followed.
  const doFetch = options.fetch ?? outboundFetch({ followRedirects: false });
  // Claim due rows: pending, or a lease that expired (a worker died mid-send).
  const claimed = await claimDueDeliveries(db, { now: now(), leaseUntil: new Date(now().getTime() + LEASE_MS), limit: options.limit ?? 50 });
  const summary = { attempted: 0, delivered: 0, retrying: 0, failed: 0 };
  const secrets = new Map<string, string>();
  for (const { id } of claimed) {
    const d = await db.webhookDelivery.findUnique({ where: { id } });
    if (!d) continue;
    summary.attempted++;
    let secret = secrets.get(d.workspaceId);
    if (!secret) secrets.set(d.workspaceId, (secret = await getWebhookSecret(db, d.workspaceId)));
    const body = JSON.stringify({ id: d.id, ...(d.payload as object) });
    const timestamp = Math.floor(now().getTime() / 1000);
    let status: number | null = null;
    let error: string | null = null;
    let permanent = false;
    try {
      await assertOutboundUrl(d.url);
      const res = await doFetch(d.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "Synthex-Webhooks/1",
          [SIGNATURE_HEADER]: signPayload(secret, timestamp, body),
          [TIMESTAMP_HEADER]: String(timestamp),
          "X-Synthex-Delivery": d.id,
          "X-Synthex-Event": String((d.payload as { event?: string }).event ?? "projection.updated"),
        },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (err) {
      error = (err as Error).message || String(err);
      permanent = err instanceof OutboundUrlError; // retrying cannot make a refused address allowed
    }
    const attempts = d.attempts + 1;
    if (!error) {
      await db.webhookDelivery.update({ where: { id }, data: { status: "delivered", attempts, responseStatus: status, lastError: null, deliveredAt: now() } });
      summary.delivered++;
    } else if (attempts >= maxAttempts || permanent) {
      await db.webhookDelivery.update({ where: { id }, data: { status: "failed", attempts, responseStatus: status, lastError: error.slice(0, 1000) } });
      summary.failed++;
    } else {
      const delay = Math.min(6 * 3600_000, backoff * 2 ** (attempts - 1));
      await db.webhookDelivery.update({
        where: { id },
        data: { status: "pending", attempts, responseStatus: status, lastError: error.slice(0, 1000), nextAttemptAt: new Date(now().getTime() + delay) },
      });
      summary.retrying++;
    }
  }
  return summary;
}

/** Calls deliverPending every `intervalMs` (retries need a ticker); returns a stop function. */
export function startWebhookWorker(db: Db, intervalMs = 15_000, options: DeliverOptions = {}): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    deliverPending(db, options)
      .catch((err: Error) => console.error("[synthex webhooks]", err.message))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
