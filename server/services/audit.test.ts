/**
 * Issue 22, item 4: the audit log. Real procedures (tRPC callers and the REST route handler) on a
 * private PGlite database: each audited action leaves one entry with actor, action, target and
 * time; only owners and admins read the log; secrets never reach it.
 */
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { Db } from "../core/db";
import { createTestDb } from "../store/test-db";
import { recordAudit } from "./audit";
import path from "node:path";
import { importFile } from "./imports";
import { createPipeline, templateSpec } from "./pipelines";
import { signUp } from "./users";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-audit";

let db: Db;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
});
afterAll(async () => close());

async function person(email: string) {
  const { user, workspace } = await signUp(db, { email, password: "audit-password-1" });
  return { user, workspace, caller: createCaller(await createContext({ db, session: { userId: user.id, email } })) };
}

describe("audit log", () => {
  it("records promote, key create/revoke, member change, provider change and run start with actor, target and time", async () => {
    const owner = await person("owner@audit.test");
    const other = await person("other@audit.test");
    const workspaceId = owner.workspace.id;
    const before = new Date();

    const { pipeline } = await createPipeline(db, workspaceId, { name: "memory", spec: templateSpec("chat-memory") });
    await owner.caller.branch.create({ workspaceId, pipelineId: pipeline.id, name: "tuned" });
    await owner.caller.branch.promote({ workspaceId, pipelineId: pipeline.id, branch: "tuned", message: "better facts" });

    const key = await owner.caller.apiKey.create({ workspaceId, name: "support-agent", role: "editor" });
    await owner.caller.apiKey.revoke({ workspaceId, keyId: key.id });

    const invite = await owner.caller.invite.create({ workspaceId, role: "viewer" });
    await other.caller.invite.accept({ token: invite.token });
    const member = (await owner.caller.member.list({ workspaceId })).find((m) => m.user.id === other.user.id)!;
    await owner.caller.member.changeRole({ workspaceId, memberId: member.id, role: "editor" });

    await owner.caller.provider.upsert({ workspaceId, name: "corp", kind: "openai", apiKey: "sk-very-secret-value" });
    await owner.caller.provider.delete({ workspaceId, name: "corp" });

    await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json") });
    const run = await owner.caller.run.start({ workspaceId, pipelineId: pipeline.id });
    for (let i = 0; i < 200 && !["completed", "failed", "cancelled"].includes((await owner.caller.run.get({ workspaceId, runId: run.id })).status); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }

    const source = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "chats" } });
    await owner.caller.record.purge({ workspaceId, id: source.id });

    const { entries } = await owner.caller.audit.list({ workspaceId });
    const byAction = (action: string) => entries.filter((e) => e.action === action);
    expect(entries.map((e) => e.action).reverse()).toEqual([
      "branch.create",
      "branch.promote",
      "apiKey.create",
      "apiKey.revoke",
      "invite.create",
      "member.join",
      "member.changeRole",
      "provider.upsert",
      "provider.delete",
      "run.start",
      "purge",
    ]);
    // Targets in words (issue #33 item 9): names, not raw ids; the id stays in target.
    expect(byAction("branch.promote")[0]!.targetLabel).toBe("pipeline memory · branch tuned");
    expect(byAction("apiKey.revoke")[0]!.targetLabel).toBe("API key support-agent");
    expect(byAction("member.changeRole")[0]!.targetLabel).toBe("member other@audit.test");
    expect(byAction("run.start")[0]!.targetLabel).toBe(`run ${run.id.slice(-8)} of memory`);
    expect(byAction("provider.delete")[0]!.targetLabel).toBe("provider corp");
    expect(byAction("branch.promote")[0]).toMatchObject({
      actor: `user:${owner.user.id}`,
      actorLabel: "owner@audit.test",
      target: `pipeline:${pipeline.id}/branch:tuned`,
      summary: { message: "better facts" },
    });
    expect(byAction("apiKey.create")[0]).toMatchObject({ target: `apiKey:${key.id}`, summary: { name: "support-agent", role: "editor" } });
    expect(byAction("apiKey.revoke")[0]).toMatchObject({ target: `apiKey:${key.id}` });
    expect(byAction("member.join")[0]).toMatchObject({ actor: `user:${other.user.id}`, summary: { role: "viewer" } });
    expect(byAction("member.changeRole")[0]).toMatchObject({ target: `member:${member.id}`, summary: { role: "editor" } });
    expect(byAction("provider.upsert")[0]).toMatchObject({ target: "provider:corp", summary: { kind: "openai", key: "set" } });
    expect(byAction("purge")[0]).toMatchObject({ actor: `user:${owner.user.id}`, actorLabel: "owner@audit.test", target: `record:${source.id}` });
    expect(byAction("run.start")[0]).toMatchObject({ target: `run:${run.id}`, summary: { pipelineId: pipeline.id, branch: "main" } });
    for (const e of entries) {
      expect(e.createdAt.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
      expect(e.createdAt.getTime()).toBeLessThanOrEqual(Date.now());
    }
    // Secrets stay out: the provider key, the API key's secret, the invite token.
    const stored = JSON.stringify(await db.auditEvent.findMany({ where: { workspaceId } }));
    expect(stored).not.toContain("sk-very-secret-value");
    expect(stored).not.toContain(key.secret);
    expect(stored).not.toContain(invite.token);
  }, 60_000);

  it("a refused or failed action leaves no entry", async () => {
    const owner = await person("refused@audit.test");
    const viewer = await person("viewer@audit.test");
    const workspaceId = owner.workspace.id;
    await db.membership.create({ data: { workspaceId, userId: viewer.user.id, role: "viewer" } });
    await expect(viewer.caller.apiKey.create({ workspaceId, name: "nope" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(owner.caller.apiKey.revoke({ workspaceId, keyId: "no-such-key" })).rejects.toBeInstanceOf(TRPCError);
    expect(await db.auditEvent.count({ where: { workspaceId } })).toBe(0);
  });

  it("is listed for owners and admins only, pages newest first, filters by action, and is served over REST", async () => {
    const owner = await person("lister@audit.test");
    const workspaceId = owner.workspace.id;
    const admin = await person("admin@audit.test");
    const editor = await person("editor@audit.test");
    await db.membership.create({ data: { workspaceId, userId: admin.user.id, role: "admin" } });
    await db.membership.create({ data: { workspaceId, userId: editor.user.id, role: "editor" } });
    for (let i = 0; i < 5; i++) {
      await recordAudit(db, { workspaceId, actor: "system", action: i % 2 ? "purge" : "apiKey.create", target: `thing:${i}` });
    }
    const first = await admin.caller.audit.list({ workspaceId, limit: 2 });
    expect(first.entries.map((e) => e.target)).toEqual(["thing:4", "thing:3"]);
    const second = await admin.caller.audit.list({ workspaceId, limit: 2, cursor: first.nextCursor });
    expect(second.entries.map((e) => e.target)).toEqual(["thing:2", "thing:1"]);
    const purges = await owner.caller.audit.list({ workspaceId, action: "purge" });
    expect(purges.entries.map((e) => e.target)).toEqual(["thing:3", "thing:1"]);
    await expect(editor.caller.audit.list({ workspaceId })).rejects.toMatchObject({ code: "FORBIDDEN" });

    // REST with an admin-role key of this workspace (the key's workspace is implied).
    const key = await owner.caller.apiKey.create({ workspaceId, name: "auditor", role: "admin" });
    const { handleRest } = await import("../api/rest");
    const { appRouter } = await import("../api/root");
    const { appRestEndpoints } = await import("../api/rest-app");
    const res = await handleRest({
      router: appRouter,
      endpoints: appRestEndpoints(),
      req: new Request("http://localhost/api/v1/audit?action=apiKey.&limit=10", { headers: { authorization: `Bearer ${key.secret}` } }),
      path: "/audit",
      createContext: () => createContext({ db, authorization: `Bearer ${key.secret}` }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { entries: Array<{ action: string; target: string; createdAt: string }> };
    expect(body.entries.map((e) => e.target)).toEqual([`apiKey:${key.id}`, "thing:4", "thing:2", "thing:0"]);
    expect(body.entries[0]!.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});
