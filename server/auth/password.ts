import bcrypt from "bcryptjs";
import { badRequest } from "../core/errors";

const ROUNDS = 10;

export function checkPasswordStrength(password: string): void {
  if (!password) throw badRequest("Password is required.");
  if (password.length < 8) throw badRequest("Password must be at least 8 characters long.");
  if (password.length > 200) throw badRequest("Password must be at most 200 characters long.");
  if (/^(.)\1*$/.test(password)) throw badRequest("Password must not be one repeated character.");
}

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, ROUNDS);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

// A real bcrypt hash of a random string with the same cost: comparing against it costs what a real comparison costs.
let dummyHash: Promise<string> | null = null;

/** Spends the time of one password check and answers false (for emails without a password). */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= bcrypt.hash(`dummy-${Math.random()}`, ROUNDS);
  await bcrypt.compare(password, await dummyHash);
  return false;
}
