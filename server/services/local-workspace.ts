/**
 * The local default workspace: what the CLI creates on the embedded database and a person signed in
 * to the web app on the same machine sees too. The CLI acts as a built-in local user (no password,
 * cannot sign in); the first real account on the machine becomes an owner of the workspace.
 */
import type { Db, DbTx } from "../core/db";

export const LOCAL_WORKSPACE_SLUG = "local";
export const LOCAL_CLI_EMAIL = "cli@synthex.local";

/** Adds `userId` as owner when the local workspace exists and no real person is a member yet. */
export async function claimLocalWorkspace(tx: DbTx, userId: string) {
  const workspace = await tx.workspace.findUnique({ where: { slug: LOCAL_WORKSPACE_SLUG } });
  if (!workspace) return;
  const people = await tx.membership.count({
    where: { workspaceId: workspace.id, user: { email: { not: LOCAL_CLI_EMAIL } } },
  });
  if (people > 0) return;
  await tx.membership.upsert({
    where: { workspaceId_userId: { workspaceId: workspace.id, userId } },
    create: { workspaceId: workspace.id, userId, role: "owner" },
    update: {},
  });
}

/**
 * The local workspace and the CLI's user, created on first use. Every CLI command starts here, so
 * the usual case (both exist, the CLI is a member, and no signed-up person is waiting to be made
 * owner) is answered by two or three reads without a transaction; anything else goes through the transaction.
 */
export async function ensureLocalWorkspace(db: Db) {
  const member = await db.membership.findFirst({
    where: { user: { email: LOCAL_CLI_EMAIL }, workspace: { slug: LOCAL_WORKSPACE_SLUG } },
    select: { user: true, workspace: true },
  });
  if (member) {
    // The transaction below is needed only to make the first signed-up person an owner: when a
    // person already is a member, or nobody has signed up, there is nothing to do.
    const people = await db.membership.count({ where: { workspaceId: member.workspace.id, user: { email: { not: LOCAL_CLI_EMAIL } } } });
    if (people > 0) return member;
    const signedUp = await db.user.findFirst({ where: { email: { not: LOCAL_CLI_EMAIL }, passwordHash: { not: null } }, select: { id: true } });
    if (!signedUp) return member;
  }
  return db.$transaction(async (tx) => {
    const user =
      (await tx.user.findUnique({ where: { email: LOCAL_CLI_EMAIL } })) ??
      (await tx.user.create({ data: { email: LOCAL_CLI_EMAIL, name: "Synthex CLI" } }));
    const workspace =
      (await tx.workspace.findUnique({ where: { slug: LOCAL_WORKSPACE_SLUG } })) ??
      (await tx.workspace.create({ data: { name: "Local", slug: LOCAL_WORKSPACE_SLUG } }));
    await tx.membership.upsert({
      where: { workspaceId_userId: { workspaceId: workspace.id, userId: user.id } },
      create: { workspaceId: workspace.id, userId: user.id, role: "owner" },
      update: {},
    });
    const firstPerson = await tx.user.findFirst({
      where: { email: { not: LOCAL_CLI_EMAIL }, passwordHash: { not: null } },
      orderBy: { createdAt: "asc" },
    });
    if (firstPerson) await claimLocalWorkspace(tx, firstPerson.id);
    return { workspace, user };
    // Every CLI command starts here: on a busy machine these few queries can outlast Prisma's 5 s default.
  }, { maxWait: 60_000, timeout: 60_000 });
}
