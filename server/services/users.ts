import { z } from "zod";
import { checkPasswordStrength, hashPassword, verifyPassword } from "../auth/password";
import type { Db, DbTx } from "../core/db";
import { conflict } from "../core/errors";
import { claimLocalWorkspace } from "./local-workspace";
import { createWorkspaceInTx } from "./workspaces";

export const signUpInput = z.object({
  email: z.string().trim().toLowerCase().email("Enter a valid email address."),
  password: z.string(),
  name: z.string().trim().max(100).optional(),
});
export type SignUpInput = z.infer<typeof signUpInput>;

export async function signUp(db: Db, input: SignUpInput) {
  const { email, password, name } = signUpInput.parse(input);
  checkPasswordStrength(password);
  const passwordHash = await hashPassword(password);
  return db.$transaction(async (tx) => {
    const existing = await tx.user.findUnique({ where: { email } });
    if (existing) throw conflict(`An account with ${email} already exists. Sign in instead.`);
    const user = await tx.user.create({ data: { email, name: name || null, passwordHash } });
    const workspace = await createPersonalWorkspace(tx, user.id, name || email);
    await claimLocalWorkspace(tx, user.id);
    return { user: { id: user.id, email: user.email, name: user.name }, workspace };
  });
}

export async function createPersonalWorkspace(tx: DbTx, userId: string, displayName: string) {
  const base = displayName.split("@")[0] ?? "personal";
  return createWorkspaceInTx(tx, userId, { name: `${base}'s workspace`, personal: true });
}

/** Returns the user when the password matches; null otherwise (no hint which part was wrong). */
export async function authenticatePassword(db: Db, email: string, password: string) {
  const user = await db.user.findUnique({ where: { email: email.trim().toLowerCase() } });
  if (!user?.passwordHash) return null;
  const ok = await verifyPassword(password, user.passwordHash);
  return ok ? { id: user.id, email: user.email, name: user.name } : null;
}

/** OAuth sign-in: find or create the user (and their personal workspace) by verified email. */
export async function findOrCreateOAuthUser(db: Db, email: string, name?: string | null) {
  const normalized = email.trim().toLowerCase();
  const existing = await db.user.findUnique({ where: { email: normalized } });
  if (existing) return existing;
  return db.$transaction(async (tx) => {
    const user = await tx.user.create({ data: { email: normalized, name: name ?? null } });
    await createPersonalWorkspace(tx, user.id, name || normalized);
    return user;
  });
}
