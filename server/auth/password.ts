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
