/**
 * The served `/api/inngest` route (app/api/inngest/route.ts) answers Inngest's sync request —
 * what Inngest Cloud or a self-hosted server sends to learn an app's functions — with every
 * registered function, its trigger and its flow control, and refuses an unsigned one.
 */
import { createHmac } from "node:crypto";
import { beforeAll, describe, expect, it, vi } from "vitest";

const SIGNING_KEY = "signkey-test-" + "ab12".repeat(16);

type Route = typeof import("@/app/api/inngest/route");
let route: Route;

beforeAll(async () => {
  // Production mode: no dev server, requests must carry Inngest's signature.
  vi.stubEnv("INNGEST_DEV", "");
  vi.stubEnv("INNGEST_SIGNING_KEY", SIGNING_KEY);
  vi.stubEnv("SYNTHEX_INNGEST_WORKSPACE_CONCURRENCY", "3");
  route = await import("@/app/api/inngest/route");
});

/** Inngest's request signature: HMAC-SHA256 of body + timestamp with the key (prefix removed). */
function sign(body: string, key = SIGNING_KEY) {
  const t = Math.round(Date.now() / 1000).toString();
  const s = createHmac("sha256", key.replace(/^signkey-\w+-/, "")).update(body + t).digest("hex");
  return `t=${t}&s=${s}`;
}

function syncRequest(signature: string | null, body = JSON.stringify({ url: "https://synthex.example.com/api/inngest" })) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-inngest-sync-kind": "in_band" };
  if (signature) headers["x-inngest-signature"] = signature;
  return new Request("https://synthex.example.com/api/inngest", { method: "PUT", headers, body });
}

interface SyncedFunction {
  id: string;
  triggers: Array<{ event?: string }>;
  concurrency?: Array<{ key?: string; limit: number; scope?: string }>;
  throttle?: { key?: string; limit: number; period: string; burst?: number };
  debounce?: { key?: string; period: string; timeout?: string };
  idempotency?: string;
  cancel?: Array<{ event: string; if?: string }>;
  steps: Record<string, { retries?: { attempts?: number }; runtime?: { url?: string } }>;
}

describe("/api/inngest", () => {
  it("answers a signed in-band sync with the registered functions and their flow control", async () => {
    const body = JSON.stringify({ url: "https://synthex.example.com/api/inngest" });
    const res = await route.PUT(syncRequest(sign(body), body) as never, undefined as never);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-inngest-sync-kind")).toBe("in_band");
    const sync = (await res.json()) as { app_id: string; functions: SyncedFunction[]; url: string };
    expect(sync.app_id).toBe("synthex");
    const byId = new Map(sync.functions.map((f) => [f.id, f]));
    expect([...byId.keys()].sort()).toEqual(["synthex-eval", "synthex-eval-failure", "synthex-incremental-run", "synthex-run", "synthex-run-cancelled", "synthex-run-failure"]);

    const run = byId.get("synthex-run")!;
    expect(run.triggers).toEqual([{ event: "synthex/run.requested" }]);
    expect(run.idempotency).toBe("event.data.runId");
    expect(run.concurrency).toEqual([
      { key: "event.data.workspaceId", limit: 3 },
      { key: "event.data.provider", limit: 10, scope: "env" },
    ]);
    expect(run.throttle).toEqual({ key: "event.data.provider", limit: 30, period: "1m", burst: 5 });
    expect(run.cancel).toEqual([{ event: "synthex/run.cancelled", if: "async.data.runId == event.data.runId" }]);
    expect(Object.values(run.steps)[0]!.retries).toEqual({ attempts: 3 });
    // Inngest calls back the URL it was given.
    expect(Object.values(run.steps)[0]!.runtime?.url).toMatch(/^https:\/\/synthex\.example\.com\/api\/inngest\?fnId=synthex-run&stepId=step$/);

    expect(byId.get("synthex-incremental-run")!.triggers).toEqual([{ event: "synthex/source.appended" }]);
    expect(byId.get("synthex-incremental-run")!.debounce).toMatchObject({ period: "30s", timeout: "5m" });
    expect(byId.get("synthex-run-cancelled")!.triggers).toEqual([{ event: "synthex/run.cancelled" }]);
    const evals = byId.get("synthex-eval")!;
    expect(evals.triggers).toEqual([{ event: "synthex/eval.requested" }]);
    expect(evals.idempotency).toBe("event.data.evalRunId");
  });

  it("refuses a sync without a valid signature", async () => {
    expect((await route.PUT(syncRequest(null) as never, undefined as never)).status).toBe(401);
    const body = JSON.stringify({ url: "https://synthex.example.com/api/inngest" });
    const forged = sign(body, "signkey-test-" + "cd34".repeat(16));
    expect((await route.PUT(syncRequest(forged, body) as never, undefined as never)).status).toBe(401);
  });

  it("answers a signed introspection GET with the function count and that the signature checked out", async () => {
    const req = new Request("https://synthex.example.com/api/inngest", { method: "GET", headers: { "x-inngest-signature": sign("") } });
    const res = await route.GET(req as never, undefined as never);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { function_count: number; mode: string; authentication_succeeded?: boolean };
    expect(body).toMatchObject({ function_count: 6, mode: "cloud", authentication_succeeded: true });
  });
});
