import { z } from "zod";
import { checkPasswordStrength, hashPassword, verifyPassword, verifyAgainstDummy } from "../auth/password";
import { signInLimiter, throttleSignUp, type SignInLimiter } from "../auth/sign-in-limiter";
import type { Db, DbTx } from "../core/db";
import { conflict, DomainError } from "../core/errors";
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
    return { user: { id: user.id, email: user.email, name: user.name }, workspace: { id: workspace.id, slug: workspace.slug, name: workspace.name } };
  });
}

/** What the public sign-up answers, whether the email was new or already had an account. */
export const SIGN_UP_ANSWER =
  "If this email is new, your account is ready and you are being signed in. If it already has an account, sign in with its password instead.";

/**
 * Public sign-up: the same answer, in about the same time (the password is hashed either way),
 * whether or not the email already has an account, so it cannot be used to discover accounts.
 * Invalid input (bad email, weak password) is still explained. Throttled per client address
 * (`address`, see server/http/client-address.ts): a DomainError TOO_MANY_REQUESTS past the budget.
 */
export async function signUpPublic(db: Db, input: SignUpInput, address: string): Promise<{ message: string }> {
  // Bad input is explained without spending the budget; each attempt that would hash a password counts.
  checkPasswordStrength(signUpInput.parse(input).password);
  await throttleSignUp(address);
  try {
    await signUp(db, input);
  } catch (err) {
    if (!(err instanceof DomainError && err.code === "CONFLICT")) throw err;
  }
  return { message: SIGN_UP_ANSWER };
}

export async function createPersonalWorkspace(tx: DbTx, userId: string, displayName: string) {
  const base = displayName.split("@")[0] ?? "personal";
  return createWorkspaceInTx(tx, userId, { name: `${base}'s workspace`, personal: true });
}

/**
 * Returns the user when the password matches; null otherwise (no hint which part was wrong).
 * An unknown email (or an OAuth-only account) is compared against a dummy hash so that it
 * takes as long as a wrong password for a real account.
 */
export async function authenticatePassword(db: Db, email: string, password: string) {
  const user = await db.user.findUnique({ where: { email: email.trim().toLowerCase() } });
  if (!user?.passwordHash) {
    await verifyAgainstDummy(password);
    return null;
  }
  const ok = await verifyPassword(password, user.passwordHash);
  return ok ? { id: user.id, email: user.email, name: user.name } : null;
}

/**
 * Password sign-in with brute-force limits per email from one client address and per client
 * address (see server/auth/sign-in-limiter.ts): throws SignInLimitedError (a clear "try again in
 * N seconds") while either is delayed; others' failures never refuse this address.
 */
export async function signInWithPassword(
  db: Db,
  input: { email: string; password: string; address: string },
  limiter: SignInLimiter = signInLimiter(),
) {
  const email = input.email.trim().toLowerCase();
  await limiter.check(email, input.address);
  const user = await authenticatePassword(db, email, input.password);
  if (user) await limiter.succeeded(email, input.address);
  else await limiter.failed(email, input.address);
  return user;
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
