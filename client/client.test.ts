/**
 * The generated client: client/openapi.ts equals what openapi-typescript makes from the live
 * OpenAPI document (regenerated here; run `npm run client:generate` after changing an endpoint),
 * and the client (imported as agents do, `synthex/client`) runs the agent loop of docs/api.md — ingest a
 * turn, ask, read the brief — over real HTTP against the handlers the API routes wrap.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-client-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { importFile } = await import("@/server/services/imports");
const { runPipeline } = await import("@/server/services/runs");
const { settleBackgroundWork } = await import("@/server/services/background");
const { generateClientTypes, CLIENT_TYPES_PATH } = await import("@/server/api/client-types");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { createSynthexClient } = await import("synthex/client");
const { runCliInProcess } = await import("@/server/cli/cli-fixtures");

let server: Awaited<ReturnType<typeof startRouteServer>>;
let apiKey = "";

beforeAll(async () => {
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "client@example.com", password: "client-password-1" });
  apiKey = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "agent", role: "admin" })).secret;
  const { pipeline } = await createPipeline(db, workspace.id, { name: "memory", spec: templateSpec("chat-memory") });
  await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: path.resolve("e2e/fixtures/chatgpt-export.json") });
  expect((await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id })).status).toBe("completed");
  await settleBackgroundWork();
  server = await startRouteServer();
}, 180_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the generated TypeScript client", () => {
  it("is what openapi-typescript makes from the live OpenAPI document (run `npm run client:generate` when this fails)", async () => {
    expect(await generateClientTypes()).toBe(readFileSync(CLIENT_TYPES_PATH, "utf8"));
  });

  it("runs the docs' agent loop (docs/api.md) over HTTP: ingest a turn, ask, read the brief", async () => {
    const sx = createSynthexClient({ baseUrl: server.url, apiKey });
    const pipelineId = "memory";

    // 1. Ingest the user's turn (the session stays open until close: true or the idle gap).
    const turn = await sx.POST("/pipelines/{pipelineId}/sources/{source}/messages", {
      params: { path: { pipelineId, source: "chats" }, header: { "Idempotency-Key": "turn-1" } },
      body: { sessionId: "agent-1", scope: "acme:user-42", messages: [{ role: "user", content: "Where did I hide the lighthouse key?" }] },
    });
    expect(turn.error).toBeUndefined();
    expect(turn.data).toMatchObject({ status: "open", accepted: 1 });

    // 2. Ask the memory.
    const { data: packet, error } = await sx.POST("/pipelines/{pipelineId}/ask", { params: { path: { pipelineId } }, body: { question: "Where is the spare key for the lighthouse cabin?" } });
    expect(error).toBeUndefined();
    expect(packet!.abstained).toBe(false);
    expect(packet!.answer).toMatch(/blue ceramic frog/);
    expect(packet!.evidence.map((e) => e.id)).toContain(packet!.citations[0]!.recordId);

    // 3. Read the brief for the next turn.
    const brief = await sx.GET("/pipelines/{pipelineId}/brief", { params: { path: { pipelineId }, query: { scope: "acme:user-42" } } });
    expect(brief.data).toMatchObject({ scope: "acme:user-42", openSessions: 1, recentTurns: [{ role: "user", content: "Where did I hide the lighthouse key?" }] });

    // Errors come back typed, in the standard shape.
    const missing = await sx.GET("/records/{id}", { params: { path: { id: "nope" } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ error: { code: "NOT_FOUND" } });
  });

  it("the CLI's --url mode drives the same server over HTTP: ask, search, purge --dry-run, keys, runs", async () => {
    const cliDir = mkdtempSync(path.join(tmpdir(), "synthex-client-cli-"));
    const remote = (...args: string[]) => runCliInProcess(cliDir, "--url", server.url, "--api-key", apiKey, ...(args[0] === "keys" ? [] : ["--pipeline", "memory"]), ...args);
    try {
      const asked = await remote("ask", "Where is the spare key for the lighthouse cabin?");
      expect(asked.err).toBe("");
      expect(asked.out).toMatch(/^Answer: .*blue ceramic frog/);
      const found = JSON.parse((await remote("search", "ceramic frog", "--exact", "--json")).out) as { hits: Array<{ id: string; step: string }> };
      const source = found.hits.find((h) => h.step === "chats")!;
      expect((await remote("purge", source.id, "--dry-run")).out).toMatch(/^Dry run: would delete \d+ record\(s\) \(chats 1, /);
      const created = await remote("keys", "create", "remote-reader", "--read-only");
      expect(created.err).toBe("");
      expect(created.out).toMatch(/^Created key "remote-reader" \(editor, read-only\)\./);
      expect((await remote("keys", "list")).out).toMatch(/remote-reader .*read-only/);
      expect((await remote("status")).out).toMatch(/Pipeline memory · branch main/);
      expect((await remote("branch", "list")).out).toMatch(/main/);
      // A read-only key made over --url is refused a write over --url, with the reason.
      const reader = created.out.split("\n")[1]!;
      const refused = await runCliInProcess(cliDir, "--url", server.url, "--api-key", reader, "--pipeline", "memory", "run");
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/read-only/);
    } finally {
      rmSync(cliDir, { recursive: true, force: true });
    }
  });
});
