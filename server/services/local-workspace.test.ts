/**
 * The local workspace every CLI command starts from: created once, found by reads afterwards, and
 * the first person who signs up on the machine becomes its owner even when the CLI user and the
 * workspace already exist (the reads-only path must not skip the claim).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { createTestDb } from "../store/test-db";
import { ensureLocalWorkspace, LOCAL_CLI_EMAIL, LOCAL_WORKSPACE_SLUG } from "./local-workspace";

let db: Db;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
});
afterAll(async () => close());

describe("ensureLocalWorkspace", () => {
  it("creates the CLI user and the local workspace once, then finds the same ones", async () => {
    const first = await ensureLocalWorkspace(db);
    expect(first.user.email).toBe(LOCAL_CLI_EMAIL);
    expect(first.workspace.slug).toBe(LOCAL_WORKSPACE_SLUG);
    const again = await ensureLocalWorkspace(db);
    expect({ user: again.user.id, workspace: again.workspace.id }).toEqual({ user: first.user.id, workspace: first.workspace.id });
    expect(await db.membership.findMany({ where: { workspaceId: first.workspace.id }, select: { userId: true, role: true } })).toEqual([
      { userId: first.user.id, role: "owner" },
    ]);
  });

  it("makes the first signed-up person an owner when nobody but the CLI is a member yet, and only them", async () => {
    const { workspace } = await ensureLocalWorkspace(db);
    // Signed up without the claim (e.g. an account made before the CLI was first used).
    const ana = await db.user.create({ data: { email: "ana@local.test", passwordHash: "x", createdAt: new Date(Date.now() - 60_000) } });
    const ben = await db.user.create({ data: { email: "ben@local.test", passwordHash: "x" } });
    await ensureLocalWorkspace(db);
    const members = await db.membership.findMany({ where: { workspaceId: workspace.id }, select: { userId: true, role: true } });
    expect(members).toContainEqual({ userId: ana.id, role: "owner" });
    expect(members.map((m) => m.userId)).not.toContain(ben.id);
    await ensureLocalWorkspace(db);
    expect(await db.membership.count({ where: { workspaceId: workspace.id } })).toBe(2);
  });
});
