import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { can, PERMISSIONS, ROLES, type Role } from "../auth/permissions";
import { verifyPassword } from "../auth/password";
import { sha256Hex } from "../auth/secrets";
import type { Db } from "../core/db";
import { getWebhookSecret } from "../services/webhooks";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { createCaller } from "./root";
import { createContext, createCallerFactory, createTRPCRouter, workspaceProcedure } from "./trpc";

let db: Db;
let close: () => Promise<void>;
let counter = 0;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
});
afterAll(async () => close());

async function newUser() {
  counter += 1;
  const { user, workspace } = await signUp(db, { email: `user${counter}@example.com`, password: "correct horse" });
  const caller = createCaller(await createContext({ db, session: { userId: user.id, email: user.email } }));
  return { user, workspace, caller };
}

async function expectCode(promise: Promise<unknown>, code: TRPCError["code"], message?: RegExp) {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCError);
  expect((err as TRPCError).code).toBe(code);
  if (message) expect((err as TRPCError).message).toMatch(message);
}

describe("permission table", () => {
  const expected: Record<Role, string[]> = {
    owner: [...PERMISSIONS],
    admin: [...PERMISSIONS],
    editor: ["workspace:read", "members:read", "pipelines:read", "pipelines:write", "runs:write", "evals:read", "evals:write", "branches:write", "branches:promote", "log:read"],
    viewer: ["workspace:read", "members:read", "pipelines:read", "evals:read"],
  };
  it.each(ROLES)("%s has exactly its permissions", (role) => {
    expect(PERMISSIONS.filter((p) => can(role, p))).toEqual(expected[role]);
  });
  it("unknown roles have no permission", () => {
    expect(PERMISSIONS.some((p) => can("superuser", p))).toBe(false);
  });
});

describe("workspaceProcedure middleware", () => {
  const testRouter = createTRPCRouter({
    read: workspaceProcedure("pipelines:read").query(({ ctx }) => ({ role: ctx.role, ws: ctx.workspace.id })),
    write: workspaceProcedure("pipelines:write")
      .input(z.object({ value: z.string() }))
      .mutation(({ ctx, input }) => ({ role: ctx.role, value: input.value })),
  });
  const callerFor = createCallerFactory(testRouter);

  it.each(ROLES)("role %s: read allowed, write only for editors and up", async (role) => {
    const owner = await newUser();
    const member = await newUser();
    await db.membership.create({ data: { workspaceId: owner.workspace.id, userId: member.user.id, role } });
    const caller = callerFor(await createContext({ db, session: { userId: member.user.id, email: member.user.email } }));
    await expect(caller.read({ workspaceId: owner.workspace.id })).resolves.toEqual({ role, ws: owner.workspace.id });
    const write = caller.write({ workspaceId: owner.workspace.id, value: "x" });
    if (role === "viewer") await expectCode(write, "FORBIDDEN", /viewer.*pipelines:write/);
    else await expect(write).resolves.toEqual({ role, value: "x" });
  });

  it("anonymous callers are refused", async () => {
    const owner = await newUser();
    const caller = callerFor(await createContext({ db }));
    await expectCode(caller.read({ workspaceId: owner.workspace.id }), "UNAUTHORIZED");
  });
});

describe("cross-workspace access", () => {
  it("a user of workspace A cannot read or write workspace B by id", async () => {
    const a = await newUser();
    const b = await newUser();
    await expectCode(a.caller.workspace.get({ workspaceId: b.workspace.id }), "NOT_FOUND");
    await expectCode(a.caller.member.list({ workspaceId: b.workspace.id }), "NOT_FOUND");
    await expectCode(a.caller.workspace.rename({ workspaceId: b.workspace.id, name: "hijacked" }), "NOT_FOUND");
    await expectCode(a.caller.apiKey.create({ workspaceId: b.workspace.id, name: "k" }), "NOT_FOUND");
    const after = await db.workspace.findUniqueOrThrow({ where: { id: b.workspace.id } });
    expect(after.name).toBe(b.workspace.name);
    expect(await db.apiKey.count({ where: { workspaceId: b.workspace.id } })).toBe(0);
  });
  it("an unknown workspace id gets NOT_FOUND", async () => {
    const a = await newUser();
    await expectCode(a.caller.workspace.get({ workspaceId: "does-not-exist" }), "NOT_FOUND");
  });
});

describe("sign up", () => {
  it("creates a personal workspace with the user as owner", async () => {
    const a = await newUser();
    const list = await a.caller.workspace.list();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ personal: true, role: "owner" });
  });
  it("answers a duplicate email exactly like a new one, and explains weak passwords, without creating anything", async () => {
    const a = await newUser();
    const users = await db.user.count();
    const anon = createCaller(await createContext({ db }));
    const existing = await anon.user.signUp({ email: a.user.email.toUpperCase(), password: "another good one" });
    expect(await db.user.count()).toBe(users);
    const fresh = await anon.user.signUp({ email: `fresh-${counter}@example.com`, password: "another good one" });
    expect(await db.user.count()).toBe(users + 1);
    expect(existing).toEqual(fresh);
    expect(Object.keys(fresh)).toEqual(["message"]); // no user row, no workspace row, no secret
    expect(fresh.message).toMatch(/sign in with its password/);
    const stillThere = await db.user.findUniqueOrThrow({ where: { email: a.user.email } });
    expect(await verifyPassword("correct horse", stillThere.passwordHash!)).toBe(true); // the existing account is untouched
    await db.user.delete({ where: { email: `fresh-${counter}@example.com` } }).catch(() => {});
    await expectCode(anon.user.signUp({ email: "new@example.com", password: "short" }), "BAD_REQUEST", /at least 8/);
    await expectCode(anon.user.signUp({ email: "new@example.com", password: "" }), "BAD_REQUEST", /required/);
    await expectCode(anon.user.signUp({ email: "not-an-email", password: "long enough pw" }), "BAD_REQUEST", /email/);
    expect(await db.user.count()).toBe(users);
  });
  it("stores a bcrypt hash, never the password", async () => {
    const a = await newUser();
    const row = await db.user.findUniqueOrThrow({ where: { id: a.user.id } });
    expect(row.passwordHash).toMatch(/^\$2[aby]\$/);
    expect(row.passwordHash).not.toContain("correct horse");
  });
});

describe("webhook signing secret", () => {
  it("a viewer never receives it; an admin rotates it and sees the new one once", async () => {
    const owner = await newUser();
    const viewer = await newUser();
    const admin = await newUser();
    await db.membership.create({ data: { workspaceId: owner.workspace.id, userId: viewer.user.id, role: "viewer" } });
    await db.membership.create({ data: { workspaceId: owner.workspace.id, userId: admin.user.id, role: "admin" } });
    const secret = await getWebhookSecret(db, owner.workspace.id); // what the first delivery creates
    const workspaceId = owner.workspace.id;

    const seen = [
      await viewer.caller.workspace.get({ workspaceId }),
      await viewer.caller.workspace.list(),
      await owner.caller.workspace.get({ workspaceId }),
      await owner.caller.workspace.list(),
      await owner.caller.workspace.rename({ workspaceId, name: "Renamed" }),
    ];
    for (const answer of seen) {
      expect(JSON.stringify(answer)).not.toContain(secret);
      expect(JSON.stringify(answer)).not.toContain("webhookSecret");
    }
    expect(await viewer.caller.workspace.get({ workspaceId })).toMatchObject({ hasWebhookSecret: true, role: "viewer" });

    await expectCode(viewer.caller.workspace.rotateWebhookSecret({ workspaceId }), "FORBIDDEN");
    expect(await getWebhookSecret(db, workspaceId)).toBe(secret); // unchanged

    const rotated = await admin.caller.workspace.rotateWebhookSecret({ workspaceId });
    expect(rotated.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    expect(rotated.secret).not.toBe(secret);
    expect(await getWebhookSecret(db, workspaceId)).toBe(rotated.secret); // deliveries now sign with it
    expect(JSON.stringify(await admin.caller.workspace.get({ workspaceId }))).not.toContain(rotated.secret);
  });
});

describe("invite lifecycle", () => {
  it("create → preview → accept gives the invited role; reuse is refused", async () => {
    const owner = await newUser();
    const joiner = await newUser();
    const invite = await owner.caller.invite.create({ workspaceId: owner.workspace.id, role: "editor" });
    const stored = await db.invite.findUniqueOrThrow({ where: { id: invite.id } });
    expect(stored.tokenHash).toBe(sha256Hex(invite.token));
    await expect(joiner.caller.invite.preview({ token: invite.token })).resolves.toMatchObject({ role: "editor" });
    await expect(joiner.caller.invite.accept({ token: invite.token })).resolves.toMatchObject({ role: "editor" });
    const list = await joiner.caller.workspace.list();
    expect(list.find((w) => w.id === owner.workspace.id)?.role).toBe("editor");
    const third = await newUser();
    await expectCode(third.caller.invite.accept({ token: invite.token }), "BAD_REQUEST", /already used/);
    expect(await db.membership.count({ where: { userId: third.user.id, workspaceId: owner.workspace.id } })).toBe(0);
  });
  it("expired and revoked invites are refused and change nothing", async () => {
    const owner = await newUser();
    const joiner = await newUser();
    const expired = await owner.caller.invite.create({ workspaceId: owner.workspace.id, role: "viewer" });
    await db.invite.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await expectCode(joiner.caller.invite.accept({ token: expired.token }), "BAD_REQUEST", /expired/);
    const revoked = await owner.caller.invite.create({ workspaceId: owner.workspace.id, role: "viewer" });
    await owner.caller.invite.revoke({ workspaceId: owner.workspace.id, inviteId: revoked.id });
    await expectCode(joiner.caller.invite.accept({ token: revoked.token }), "NOT_FOUND", /not valid/);
    await expectCode(joiner.caller.invite.accept({ token: "garbage" }), "NOT_FOUND");
    expect(await db.membership.count({ where: { userId: joiner.user.id, workspaceId: owner.workspace.id } })).toBe(0);
  });
  it("editors cannot invite; admins cannot mint owners", async () => {
    const owner = await newUser();
    const editor = await newUser();
    const admin = await newUser();
    await db.membership.create({ data: { workspaceId: owner.workspace.id, userId: editor.user.id, role: "editor" } });
    await db.membership.create({ data: { workspaceId: owner.workspace.id, userId: admin.user.id, role: "admin" } });
    await expectCode(editor.caller.invite.create({ workspaceId: owner.workspace.id, role: "viewer" }), "FORBIDDEN");
    await expectCode(admin.caller.invite.create({ workspaceId: owner.workspace.id, role: "owner" }), "FORBIDDEN");
    await expect(admin.caller.invite.create({ workspaceId: owner.workspace.id, role: "editor" })).resolves.toBeTruthy();
  });
});

describe("members", () => {
  it("the last owner cannot be removed, demoted or leave", async () => {
    const owner = await newUser();
    const [self] = await owner.caller.member.list({ workspaceId: owner.workspace.id });
    const ws = owner.workspace.id;
    await expectCode(owner.caller.member.remove({ workspaceId: ws, memberId: self!.id }), "BAD_REQUEST", /last owner/);
    await expectCode(owner.caller.member.changeRole({ workspaceId: ws, memberId: self!.id, role: "editor" }), "BAD_REQUEST", /at least one owner/);
    await expectCode(owner.caller.workspace.leave({ workspaceId: ws }), "BAD_REQUEST", /last owner/);
    expect((await db.membership.findUniqueOrThrow({ where: { id: self!.id } })).role).toBe("owner");
  });
  it("owners change roles and remove members; members can leave", async () => {
    const owner = await newUser();
    const other = await newUser();
    const ws = owner.workspace.id;
    const m = await db.membership.create({ data: { workspaceId: ws, userId: other.user.id, role: "viewer" } });
    await owner.caller.member.changeRole({ workspaceId: ws, memberId: m.id, role: "admin" });
    expect((await db.membership.findUniqueOrThrow({ where: { id: m.id } })).role).toBe("admin");
    await expectCode(owner.caller.member.changeRole({ workspaceId: ws, memberId: m.id, role: "god" }), "BAD_REQUEST", /Unknown role/);
    await other.caller.workspace.leave({ workspaceId: ws });
    expect(await db.membership.count({ where: { id: m.id } })).toBe(0);
  });
});

describe("API keys", () => {
  it("are stored hashed, authenticate as the workspace, record last use, and stop working when revoked", async () => {
    const owner = await newUser();
    const ws = owner.workspace.id;
    const created = await owner.caller.apiKey.create({ workspaceId: ws, name: "agent", role: "editor" });
    expect(created.secret).toMatch(/^sx_/);
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.keyHash).toBe(sha256Hex(created.secret));
    expect(JSON.stringify(row)).not.toContain(created.secret);
    const listed = await owner.caller.apiKey.list({ workspaceId: ws });
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    const agent = createCaller(await createContext({ db, authorization: `Bearer ${created.secret}` }));
    await expect(agent.member.list({ workspaceId: ws })).resolves.toHaveLength(1);
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: created.id } })).lastUsedAt).not.toBeNull();
    // An editor key cannot manage keys, and cannot see another workspace.
    await expectCode(agent.apiKey.list({ workspaceId: ws }), "FORBIDDEN");
    const other = await newUser();
    await expectCode(agent.workspace.get({ workspaceId: other.workspace.id }), "NOT_FOUND");

    await owner.caller.apiKey.revoke({ workspaceId: ws, keyId: created.id });
    await expectCode(createContext({ db, authorization: `Bearer ${created.secret}` }), "UNAUTHORIZED", /revoked/);
    await expectCode(createContext({ db, authorization: "Bearer sx_not-a-key" }), "UNAUTHORIZED");
  });
  it("a viewer key cannot write", async () => {
    const owner = await newUser();
    const created = await owner.caller.apiKey.create({ workspaceId: owner.workspace.id, name: "ro", role: "viewer" });
    const agent = createCaller(await createContext({ db, authorization: `Bearer ${created.secret}` }));
    await expectCode(agent.workspace.rename({ workspaceId: owner.workspace.id, name: "x" }), "FORBIDDEN");
  });
});
