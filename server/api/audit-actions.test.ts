/**
 * Issue 30, item 6: the changes the probe found unaudited each leave their entry, read back through
 * `audit.list` — webhook-secret rotation, a spec save adding an external webhook, workspace rename,
 * pipeline create, an upload through the real upload route (Bearer key), the run a closed ingest
 * session starts, eval dataset import and eval start — and no entry holds a secret or record content.
 * The app's own database (embedded, in a temp dir) so the upload route's `getDb()` is the same one.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-audit-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;
delete process.env.SYNTHEX_EXECUTOR;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { settleBackgroundWork } = await import("@/server/services/background");
const { templateSpec } = await import("@/server/services/pipelines");
const { locomoFixture } = await import("@/server/eval/testing/locomo-fixture");
const { createCaller } = await import("./root");
const { createContext } = await import("./trpc");
const { POST: upload } = await import("@/app/api/v1/pipelines/[pipelineId]/sources/[source]/upload/route");

type Db = Awaited<ReturnType<typeof openMigratedDb>>;
let db: Db;

const fixture = readFileSync(path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json"));
const HOOK = "https://hook-user:hook-password@hooks.partner.test/receive/abc?token=hook-token-value";
const MESSAGE = "planted-ingest-content-4711 my card ends in 4242";

beforeAll(async () => {
  db = await openMigratedDb();
}, 120_000);

afterAll(async () => {
  await settleBackgroundWork();
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
});

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what}.`);
}

describe("audited changes (issue 30, item 6)", () => {
  it("rotation, spec save with a webhook, rename, pipeline create, upload, ingest run and eval start each leave an entry without secrets or content", async () => {
    const { user, workspace } = await signUp(db, { email: "audit-owner@example.com", password: "audit-password-1" });
    const workspaceId = workspace.id;
    const api = createCaller(await createContext({ db, session: { userId: user.id, email: user.email } }));
    const actor = `user:${user.id}`;

    const rotated = await api.workspace.rotateWebhookSecret({ workspaceId });
    await api.workspace.rename({ workspaceId, name: "Acme support" });
    const created = await api.pipeline.create({ workspaceId, name: "memory", template: "chat-memory" });
    const pipelineId = created.pipeline.id;

    const spec = templateSpec("chat-memory");
    const withHook = { ...spec, outputs: [...spec.outputs, { name: "hook", from: "chats", surface: "projection" as const, template: "{{ record.content }}", webhook: { url: HOOK } }] };
    const saved = await api.pipeline.saveVersion({ workspaceId, pipelineId, spec: withHook, message: "send changes to the partner" });

    // The real upload route, with a Bearer key (no session outside Next).
    const key = await api.apiKey.create({ workspaceId, name: "uploader", role: "editor" });
    const body = new FormData();
    body.set("file", new Blob([fixture]), "alice-private-export.json");
    const res = await upload(new Request(`http://localhost/api/v1/pipelines/${pipelineId}/sources/chats/upload`, { method: "POST", body, headers: { authorization: `Bearer ${key.secret}` } }), {
      params: Promise.resolve({ pipelineId, source: "chats" }),
    });
    expect(res.status).toBe(200);
    const imported = (await res.json()) as { importId: string; added: number };
    expect(imported.added).toBeGreaterThan(0);

    // An agent closes a session: the run it starts is nobody's procedure.
    const ingest = await api.ingest.messages({ workspaceId, pipelineId, source: "chats", sessionId: "s-1", messages: [{ role: "user", content: MESSAGE }], close: true });
    expect(ingest.runRequested).toBe(true);
    const ingestRun = await waitFor(
      () => db.run.findFirst({ where: { pipelineId, triggeredBy: "ingest" } }),
      (r) => !!r && !["queued", "running"].includes(r.status),
      "the ingest run",
    );

    const dataset = await api.evals.importDataset({ workspaceId, benchmark: "locomo", text: JSON.stringify(locomoFixture()), name: "tiny.json" });
    const evalRun = await api.evals.start({ workspaceId, template: "bm25-sessions", datasetId: dataset.id });
    await waitFor(() => api.evals.get({ workspaceId, id: evalRun.id }), (r) => ["completed", "failed", "cancelled"].includes(r.status), "the eval");

    const { entries } = await api.audit.list({ workspaceId, limit: 200 });
    const entry = (action: string) => {
      const found = entries.filter((e) => e.action === action);
      expect(found, action).toHaveLength(1);
      return found[0]!;
    };
    expect(entry("workspace.rotateWebhookSecret")).toMatchObject({ actor, target: `workspace:${workspaceId}` });
    expect(entry("workspace.rename")).toMatchObject({ actor, target: `workspace:${workspaceId}`, summary: { name: "Acme support" } });
    expect(entry("pipeline.create")).toMatchObject({ actor, target: `pipeline:${pipelineId}`, summary: { name: "memory", template: "chat-memory" } });
    expect(entry("pipeline.saveVersion")).toMatchObject({
      actor,
      target: `pipeline:${pipelineId}/branch:main`,
      summary: { versionId: saved.version.id, message: "send changes to the partner", webhooks: { hook: "hooks.partner.test" }, changes: ["output:hook added"] },
    });
    expect(entry("source.import")).toMatchObject({
      actor: `apiKey:${key.id}`,
      actorLabel: expect.stringContaining("uploader"),
      target: `pipeline:${pipelineId}/source:chats`,
      summary: { importId: imported.importId, status: "completed", added: imported.added },
    });
    expect(entries.filter((e) => e.action === "run.start")).toEqual([
      expect.objectContaining({ actor: "system", actorLabel: "Synthex", target: `run:${ingestRun!.id}`, summary: expect.objectContaining({ pipelineId, branch: "main", trigger: "ingest: a session closed" }) }),
    ]);
    expect(entry("eval.importDataset")).toMatchObject({ actor, target: `dataset:${dataset.id}`, summary: { benchmark: "locomo" } });
    expect(entry("eval.start")).toMatchObject({ actor, target: `eval:${evalRun.id}`, summary: { template: "bm25-sessions", datasetId: dataset.id } });

    // No secret and no content: the webhook secret, the URL's credentials, path and token, the key, what was ingested or uploaded.
    const stored = JSON.stringify(await db.auditEvent.findMany({ where: { workspaceId } }));
    for (const secret of [rotated.secret, "hook-password", "hook-token-value", "/receive/abc", key.secret, MESSAGE.slice(0, 20), "alice-private-export", "s-1"]) {
      expect(stored, secret).not.toContain(secret);
    }
  }, 240_000);
});
