/**
 * Invites belong to the member who made them (the API keys' rule, server/api/key-ownership.test.ts):
 * an admin who made an admin invite and was removed must not come back as an admin by accepting her
 * own link. Removing a member or a member leaving revokes every live invite they made; demoting one
 * revokes those that grant more than the new role; each in the transaction of the change, with the
 * count in its audit entry. Accepting (and previewing) an invite checks its creator again, so one
 * whose creator lost the role by any other path is refused like a revoked one. The invite list
 * names each invite's creator. On the embedded database, through the app's own procedures.
 */
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Role } from "../auth/permissions";
import { sha256Hex } from "../auth/secrets";
import type { Db } from "../core/db";
import { createApiKey } from "../services/api-keys";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { createCaller } from "./root";
import { createContext } from "./trpc";

let db: Db;
let close: () => Promise<void>;
let workspaceId = "";
let owner: Person;
let counter = 0;

type Person = { userId: string; email: string };

/** What a revoked invite answers (and nothing else does but an unknown token). */
const NOT_VALID = "This invite link is not valid. Ask for a new one.";

const as = async (p: Person) => createCaller(await createContext({ db, session: p }));
const withKey = async (secret: string) => createCaller(await createContext({ db, authorization: `Bearer ${secret}` }));

async function newPerson(name: string): Promise<Person> {
  counter += 1;
  const email = `${name}-${counter}@invites.test`;
  const { user } = await signUp(db, { email, password: `${email}-password` });
  return { userId: user.id, email };
}

/** A new member of the workspace, joined through an owner's invite as any new member would. */
async function newMember(name: string, role: Role): Promise<Person> {
  const person = await newPerson(name);
  const invite = await (await as(owner)).invite.create({ workspaceId, role });
  await (await as(person)).invite.accept({ token: invite.token });
  return person;
}

const memberId = async (p: Person) => (await db.membership.findFirstOrThrow({ where: { workspaceId, userId: p.userId } })).id;
const roleOf = async (p: Person) => (await db.membership.findUnique({ where: { workspaceId_userId: { workspaceId, userId: p.userId } } }))?.role ?? null;
const lastAudit = async (action: string) => (await (await as(owner)).audit.list({ workspaceId, action })).entries[0];

/** The tRPC error's code and message (null when the call succeeded). */
async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string } | null> {
  try {
    await call;
    return null;
  } catch (err) {
    if (!(err instanceof TRPCError)) throw err;
    return { code: err.code, message: err.message };
  }
}

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const signed = await signUp(db, { email: "owner@invites.test", password: "owner-password-1" });
  owner = { userId: signed.user.id, email: signed.user.email };
  workspaceId = signed.workspace.id;
}, 60_000);

afterAll(async () => close());

describe("invites belong to the member who made them", () => {
  it("a removed admin does not come back through her own admin invite: removal revokes her invites, with the count audited", async () => {
    const ada = await newMember("ada", "admin");
    const adaAdmin = await (await as(ada)).invite.create({ workspaceId, role: "admin" });
    const adaViewer = await (await as(ada)).invite.create({ workspaceId, role: "viewer" });
    // An invite made with Ada's API key is Ada's too.
    const adaKey = (await createApiKey(db, workspaceId, { userId: ada.userId, role: "admin" }, { name: "ada-key", role: "admin" })).secret;
    const byKey = await (await withKey(adaKey)).invite.create({ role: "editor" });
    expect((await db.invite.findUniqueOrThrow({ where: { id: byKey.id } })).createdById).toBe(ada.userId);
    const ownerInvite = await (await as(owner)).invite.create({ workspaceId, role: "admin" });

    // The list names who made each invite.
    const listed = await (await as(owner)).invite.list({ workspaceId });
    const creatorOf = (id: string) => listed.find((i) => i.id === id)?.createdBy;
    expect(creatorOf(adaAdmin.id)).toEqual({ id: ada.userId, email: ada.email, name: null });
    expect(creatorOf(adaViewer.id)).toMatchObject({ email: ada.email });
    expect(creatorOf(byKey.id)).toMatchObject({ email: ada.email });
    expect(creatorOf(ownerInvite.id)).toMatchObject({ email: owner.email });

    const removed = await (await as(owner)).member.remove({ workspaceId, memberId: await memberId(ada) });
    // Her own admin link, accepted by herself: refused as a revoked invite; she is not a member.
    expect(await refusal((await as(ada)).invite.accept({ token: adaAdmin.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await refusal((await as(ada)).invite.preview({ token: adaAdmin.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await roleOf(ada)).toBeNull();
    // Revoked in the removal (all three of hers), and the audit entry says how many.
    expect(removed).toMatchObject({ keysRevoked: 1, invitesRevoked: 3 });
    expect(await lastAudit("member.remove")).toMatchObject({ summary: { keysRevoked: 1, invitesRevoked: 3 } });
    for (const id of [adaAdmin.id, adaViewer.id, byKey.id]) expect((await db.invite.findUniqueOrThrow({ where: { id } })).revokedAt).not.toBeNull();
    // The others' links work as before.
    const listedAfter = (await (await as(owner)).invite.list({ workspaceId })).map((i) => i.id);
    expect(listedAfter).toContain(ownerInvite.id);
    expect(listedAfter).not.toEqual(expect.arrayContaining([adaAdmin.id]));
    const joiner = await newPerson("joiner");
    expect(await (await as(joiner)).invite.accept({ token: ownerInvite.token })).toMatchObject({ role: "admin" });
  });

  it("demotion revokes the invites that grant more than the new role, and only those", async () => {
    const bea = await newMember("bea", "admin");
    const made = {} as Record<"admin" | "editor" | "viewer", { id: string; token: string }>;
    for (const role of ["admin", "editor", "viewer"] as const) made[role] = await (await as(bea)).invite.create({ workspaceId, role });

    const changed = await (await as(owner)).member.changeRole({ workspaceId, memberId: await memberId(bea), role: "editor" });
    expect(changed).toMatchObject({ role: "editor", invitesRevoked: 1 });
    expect(await lastAudit("member.changeRole")).toMatchObject({ summary: { role: "editor", invitesRevoked: 1 } });
    expect((await db.invite.findUniqueOrThrow({ where: { id: made.admin.id } })).revokedAt).not.toBeNull();

    const a = await newPerson("via-admin-link");
    expect(await refusal((await as(a)).invite.accept({ token: made.admin.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await roleOf(a)).toBeNull();
    // At or under the new role: still good.
    const e = await newPerson("via-editor-link");
    expect(await (await as(e)).invite.accept({ token: made.editor.token })).toMatchObject({ role: "editor" });
    expect((await (await as(owner)).invite.list({ workspaceId })).map((i) => i.id)).toContain(made.viewer.id);

    // An owner demoted to admin loses the owner invites they made.
    const olga = await newMember("olga", "owner");
    const ownerLink = await (await as(olga)).invite.create({ workspaceId, role: "owner" });
    const adminLink = await (await as(olga)).invite.create({ workspaceId, role: "admin" });
    expect(await (await as(owner)).member.changeRole({ workspaceId, memberId: await memberId(olga), role: "admin" })).toMatchObject({ invitesRevoked: 1 });
    const o = await newPerson("via-owner-link");
    expect(await refusal((await as(o)).invite.accept({ token: ownerLink.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await (await as(o)).invite.accept({ token: adminLink.token })).toMatchObject({ role: "admin" });
  });

  it("leaving revokes every live invite one made, with the count audited", async () => {
    const max = await newMember("max", "admin");
    const link = await (await as(max)).invite.create({ workspaceId, role: "viewer" });
    expect(await (await as(max)).workspace.leave({ workspaceId })).toEqual({ left: workspaceId, keysRevoked: 0, invitesRevoked: 1 });
    expect(await lastAudit("member.leave")).toMatchObject({ target: `user:${max.userId}`, summary: { keysRevoked: 0, invitesRevoked: 1 } });
    expect(await refusal((await as(max)).invite.accept({ token: link.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await roleOf(max)).toBeNull();
  });

  it("accepting checks the creator again: an invite whose creator lost the role by any other path is refused like a revoked one", async () => {
    const eve = await newMember("eve", "admin");
    const adminLink = await (await as(eve)).invite.create({ workspaceId, role: "admin" });
    const editorLink = await (await as(eve)).invite.create({ workspaceId, role: "editor" });
    const joiner = await newPerson("eve-joiner");

    // Demoted to viewer behind the services' back: nothing revoked, both links refused.
    await db.membership.update({ where: { id: await memberId(eve) }, data: { role: "viewer" } });
    expect((await db.invite.findUniqueOrThrow({ where: { id: adminLink.id } })).revokedAt).toBeNull();
    for (const link of [adminLink, editorLink]) {
      expect(await refusal((await as(joiner)).invite.preview({ token: link.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
      expect(await refusal((await as(joiner)).invite.accept({ token: link.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    }
    // An editor again: the editor link works, the admin one still does not.
    await db.membership.update({ where: { id: await memberId(eve) }, data: { role: "editor" } });
    expect(await refusal((await as(joiner)).invite.accept({ token: adminLink.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await (await as(joiner)).invite.accept({ token: editorLink.token })).toMatchObject({ role: "editor" });

    // Her membership deleted behind the services' back: her own admin link does not bring her back.
    await db.membership.update({ where: { id: await memberId(eve) }, data: { role: "admin" } });
    const own = await (await as(eve)).invite.create({ workspaceId, role: "admin" });
    await db.membership.delete({ where: { id: await memberId(eve) } });
    expect(await refusal((await as(eve)).invite.accept({ token: own.token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await roleOf(eve)).toBeNull();
  });

  it("an older invite made with an API key (createdById `apikey:<id>`) is the key's member's: listed as theirs, revoked and checked with them", async () => {
    const kit = await newMember("kit", "admin");
    const key = await createApiKey(db, workspaceId, { userId: kit.userId, role: "admin" }, { name: "kit-key", role: "admin" });
    const token = "legacy-invite-token-made-with-a-key";
    const legacy = await db.invite.create({
      data: { workspaceId, role: "admin", tokenHash: sha256Hex(token), createdById: `apikey:${key.id}`, expiresAt: new Date(Date.now() + 86_400_000) },
    });
    expect((await (await as(owner)).invite.list({ workspaceId })).find((i) => i.id === legacy.id)?.createdBy).toMatchObject({ email: kit.email });
    expect(await (await as(owner)).member.changeRole({ workspaceId, memberId: await memberId(kit), role: "viewer" })).toMatchObject({ invitesRevoked: 1 });
    // Un-revoked: the accept-time check refuses it on its own.
    await db.invite.update({ where: { id: legacy.id }, data: { revokedAt: null } });
    const joiner = await newPerson("kit-joiner");
    expect(await refusal((await as(joiner)).invite.accept({ token }))).toEqual({ code: "NOT_FOUND", message: NOT_VALID });
    expect(await roleOf(joiner)).toBeNull();
  });
});
